/**
 * Two real `guides serve` processes on one PostgreSQL database behave as one service: they migrate
 * at the same time without error, share the cursor key (a cursor from A works on B), answer with
 * the same bytes and ETags, and both show an import done through the CLI within the documented
 * bound (CONTENT_POLL_MS, default 1 s, plus one request; the contract allows 5 s).
 * Runs the built CLI (dist/, made by `npm run build`, which `npm test` runs first).
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { cpSync, existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers/build-test-app.js';
import { createTestDatabase, requirePostgres } from '../helpers/postgres-database.js';
import type { TestDatabase } from '../helpers/postgres-database.js';
import { freePort } from '../helpers/redis-server.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..', '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
/** The contract's promise for how soon every instance shows an import. */
const VISIBILITY_BOUND_MS = 5000;

const hasPostgres = await requirePostgres('the two-instance test');

interface ListBody {
  items: { slug: string }[];
  nextCursor?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.runIf(hasPostgres)('two instances on one PostgreSQL database', () => {
  let database: TestDatabase;
  let dir: string;
  const servers: { process: ChildProcess; base: string; exited: Promise<number | null>; output: string[] }[] = [];

  async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await run(process.execPath, [CLI, ...args], {
        env: { PATH: process.env.PATH, DATABASE_URL: database.url },
        cwd: ROOT,
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  async function startServer(): Promise<void> {
    const port = await freePort();
    const child = spawn(process.execPath, [CLI, 'serve'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      // One public origin for both, as behind a load balancer: links (and so bodies and ETags) match.
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: database.url,
        PORT: String(port),
        HOST: '127.0.0.1',
        PUBLIC_BASE_URL: 'https://guides-api.test.example',
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PER_MINUTE: '100000',
      },
    });
    const output: string[] = [];
    child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    servers.push({ process: child, base: `http://127.0.0.1:${port}`, exited: new Promise((resolve) => child.on('exit', resolve)), output });
  }

  async function waitReady(base: string): Promise<void> {
    for (let i = 0; i < 150; i += 1) {
      const status = await fetch(`${base}/readyz`).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) return;
      await sleep(100);
    }
    throw new Error(`${base} did not become ready: ${servers.map((s) => s.output.join('')).join('\n')}`);
  }

  /** Milliseconds until `url` answers `status` on every instance, polling every 50 ms. */
  async function timeUntilEverywhere(url: string, status: number): Promise<number> {
    const started = Date.now();
    await Promise.all(
      servers.map(async ({ base }) => {
        while ((await fetch(`${base}${url}`)).status !== status) {
          if (Date.now() - started > 3 * VISIBILITY_BOUND_MS) throw new Error(`${base}${url} never answered ${status}`);
          await sleep(50);
        }
      }),
    );
    return Date.now() - started;
  }

  beforeAll(async () => {
    expect(existsSync(CLI), 'run npm run build first').toBe(true);
    database = await createTestDatabase();
    dir = makeTempDir('guides-multi-');
    // Both start on an empty database at the same moment: both migrate, under the advisory lock.
    await Promise.all([startServer(), startServer()]);
    await Promise.all(servers.map(({ base }) => waitReady(base)));
  }, 60_000);

  afterAll(async () => {
    for (const server of servers) server.process.kill('SIGTERM');
    await Promise.all(servers.map((server) => server.exited));
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('migrated once, though both instances started at the same time', async () => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
      expect(rows.map((row) => row.version)).toEqual([1]);
    } finally {
      await client.end();
    }
  });

  it('shows an import through the CLI on both instances within the bound', async () => {
    const imported = await cli(['import', path.join(ROOT, 'content')]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain('Content version: 1.');
    const elapsed = await timeUntilEverywhere('/api/v1/guides/reduce-food-waste', 200);
    expect(elapsed).toBeLessThan(VISIBILITY_BOUND_MS);
  });

  it('accepts on B a list cursor and a search cursor issued by A, and the reverse', async () => {
    const [a, b] = servers.map((s) => s.base) as [string, string];
    for (const [from, to] of [
      [a, b],
      [b, a],
    ] as const) {
      for (const first of ['/api/v1/guides?limit=5', '/api/v1/guides?q=the&limit=3']) {
        const page = (await (await fetch(`${from}${first}`)).json()) as ListBody;
        expect(page.nextCursor).toBeDefined();
        const next = `/api/v1/guides?cursor=${encodeURIComponent(page.nextCursor!)}`;
        const [there, here] = await Promise.all([fetch(`${to}${next}`), fetch(`${from}${next}`)]);
        expect(there.status).toBe(200);
        expect(await there.text()).toBe(await here.text());
      }
    }
  });

  it('keeps one cursor key in the database for both', async () => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT value FROM meta WHERE key = 'cursor_key'");
      expect(rows).toHaveLength(1);
    } finally {
      await client.end();
    }
  });

  it('answers with the same bytes and ETag from either instance, so a CDN may ask either', async () => {
    for (const url of ['/api/v1/guides', '/api/v1/guides/reduce-food-waste', '/api/v1/guides?q=allergen']) {
      const [a, b] = await Promise.all(servers.map((s) => fetch(`${s.base}${url}`)));
      expect(a!.headers.get('etag'), url).toBeTruthy();
      expect(a!.headers.get('etag'), url).toBe(b!.headers.get('etag'));
      expect(await a!.text()).toBe(await b!.text());
    }
  });

  it('shows a second import (a guide removed) on both within the bound, and old cursors keep working', async () => {
    const cursor = ((await (await fetch(`${servers[0]!.base}/api/v1/guides?limit=2`)).json()) as ListBody).nextCursor!;
    const content = path.join(dir, 'content');
    cpSync(path.join(ROOT, 'content'), content, { recursive: true });
    rmSync(path.join(content, 'guides', 'reduce-food-waste.md'));
    const imported = await cli(['import', content]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain('moved: reduce-food-waste (published → archived)');
    expect(await timeUntilEverywhere('/api/v1/guides/reduce-food-waste', 404)).toBeLessThan(VISIBILITY_BOUND_MS);
    for (const { base } of servers) {
      const res = await fetch(`${base}/api/v1/guides?cursor=${encodeURIComponent(cursor)}`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as ListBody).items.map((i) => i.slug)).not.toContain('reduce-food-waste');
    }
  });

  it('stops both cleanly on SIGTERM', async () => {
    for (const server of servers) server.process.kill('SIGTERM');
    expect(await Promise.all(servers.map((s) => s.exited))).toEqual([0, 0]);
  });
});
