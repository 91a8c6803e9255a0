/**
 * `guides serve` as a child process (the built CLI in dist/, made by `npm run build`, which
 * `npm test` runs first): graceful shutdown with a request in flight, `--workers N`, and the node
 * options `npm start` gives it.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect, createServer } from 'node:net';
import { availableParallelism } from 'node:os';
import type { Socket } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startCommand } from '../../scripts/start-command.js';
import { heapGrowthFlag } from '../../src/serve-command.js';
import { createPostgresGuideStore } from '../../src/store/postgres/postgres-guide-store.js';
import { makeTempDir } from '../helpers/build-test-app.js';
import { createTestDatabase, requirePostgres } from '../helpers/postgres-database.js';
import { freePort } from '../helpers/redis-server.js';
import { loadSampleContent } from '../helpers/sample-content.js';
import { startTcpProxy, throughProxy } from '../helpers/tcp-proxy.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const FIXTURES = path.join(ROOT, 'test', 'fixtures');

interface Served {
  child: ChildProcess;
  base: string;
  port: number;
  /** Every stdout line so far, parsed (the service logs JSON lines). */
  logs: Array<Record<string, unknown>>;
  exited: Promise<number | null>;
}

const hasPostgres = await requirePostgres('the shutdown test with a slow database query');

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** `guides serve` on `port`, on a new SQLite database that it fills from a copy of content-tiny (a first-run import). */
function spawnServe(port: number, args: string[], env: Record<string, string> = {}, nodeOptions: string[] = []): ChildProcess {
  const dir = makeTempDir('guides-serve-');
  dirs.push(dir);
  const content = path.join(dir, 'content');
  cpSync(path.join(FIXTURES, 'content-tiny'), content, { recursive: true });
  const child = spawn(process.execPath, [...nodeOptions, CLI, 'serve', ...args], {
    env: {
      PATH: process.env.PATH!,
      DATABASE_URL: `sqlite:${path.join(dir, 'g.db')}`,
      CONTENT_DIR: content,
      PORT: String(port),
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return child;
}

async function serve(args: string[], env: Record<string, string> = {}, nodeOptions: string[] = []): Promise<Served> {
  const port = await freePort();
  const child = spawnServe(port, args, env, nodeOptions);
  const logs: Array<Record<string, unknown>> = [];
  let pending = '';
  child.stdout!.on('data', (data: Buffer) => {
    pending += data.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) logs.push(JSON.parse(line) as Record<string, unknown>);
  });
  child.stderr!.resume();
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 150; i += 1) {
    if (child.exitCode !== null) throw new Error(`guides serve exited with ${child.exitCode}`);
    const ok = await fetch(`${base}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { child, base, port, logs, exited };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('guides serve did not start');
}

async function until(condition: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** GET on a fresh connection (no keep-alive), so the cluster hands each request to the next worker. */
function getOnNewConnection(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers: { connection: 'close' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function refusesConnection(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', () => resolve(true));
  });
}

describe('guides serve: graceful shutdown', () => {
  it('on SIGTERM stops accepting, finishes the request in flight, and exits 0', async () => {
    const served = await serve([], { SHUTDOWN_GRACE_MS: '10000' });
    // A slow client: the request line and one header now, the end of the headers later.
    const socket: Socket = connect(served.port, '127.0.0.1');
    let response = '';
    socket.setEncoding('utf8');
    socket.on('data', (data: string) => {
      response += data;
    });
    const socketClosed = new Promise((resolve) => socket.on('close', resolve));
    await new Promise((resolve) => socket.on('connect', resolve));
    socket.write('GET /api/v1/guides/first-guide HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: in-flight-1\r\n');
    await new Promise((resolve) => setTimeout(resolve, 200));

    served.child.kill('SIGTERM');
    await until(() => served.logs.some((line) => String(line.msg).startsWith('shutting down')), 'the shutdown log line');
    // Polled, not tried once: the shutdown log line is written as the shutdown starts, and the
    // listener closes a few turns of the server's event loop later (after the app's preClose
    // hooks), which on a loaded machine the test's connection can beat.
    await until(() => refusesConnection(served.port), 'the listener to refuse new connections', 5000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(served.child.exitCode).toBeNull();

    socket.write('\r\n');
    await socketClosed;
    const [head = '', body = ''] = response.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(head.toLowerCase()).toContain('connection: close');
    expect(head.toLowerCase()).toContain('x-request-id: in-flight-1');
    expect(JSON.parse(body)).toMatchObject({ slug: 'first-guide' });

    expect(await served.exited).toBe(0);
    expect(served.logs.find((line) => line.requestId === 'in-flight-1')).toMatchObject({
      msg: 'request',
      status: 200,
      route: '/api/v1/guides/:slug',
    });
    expect(served.logs.at(-1)).toMatchObject({ msg: 'shutdown complete' });
  });

  it.runIf(hasPostgres)('on SIGTERM waits for a request whose database query is still running, answers it, and exits 0', async () => {
    const database = await createTestDatabase();
    const proxy = await startTcpProxy(new URL(database.url).hostname, Number(new URL(database.url).port || 5432));
    try {
      const seed = createPostgresGuideStore({ connectionString: database.url });
      await seed.migrate();
      await seed.importContent(await loadSampleContent());
      await seed.close();
      // The search budget off: on a loaded machine (CI runs test files in parallel) its event-loop lag
      // trigger may refuse the search with a 503 before it reaches the database, and the server then
      // has nothing in flight when SIGTERM comes.
      const served = await serve([], {
        DATABASE_URL: throughProxy(database.url, proxy),
        SHUTDOWN_GRACE_MS: '10000',
        SEARCH_CONCURRENCY: '0',
      });

      // The database now takes as long as the test wants to answer: the request below is in the handler, awaiting it.
      proxy.hold();
      const answer = getOnNewConnection(`${served.base}/api/v1/guides?q=allergen&limit=3`);
      // Not a fixed wait: on a loaded machine the request may take longer to reach the database,
      // and a SIGTERM before it does finds nothing in flight (the server then exits at once). Its
      // first query reads the cursor key (the codec loads on first use), else it is the search.
      await until(
        () => proxy.hasSentSinceHold('cursor_key') || proxy.hasSentSinceHold('allergen'),
        "the request's query sent to the database",
      );
      served.child.kill('SIGTERM');
      await until(() => served.logs.some((line) => String(line.msg).startsWith('shutting down')), 'the shutdown log line');
      await until(() => refusesConnection(served.port), 'the listener to refuse new connections', 5000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(served.child.exitCode).toBeNull();

      proxy.release();
      const res = await answer;
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body).items).toHaveLength(3);
      expect(await served.exited).toBe(0);
    } finally {
      await proxy.close();
      await database.drop();
    }
  });

  it('exits 0 at once on SIGINT when nothing is in flight', async () => {
    const served = await serve([]);
    expect((await getOnNewConnection(`${served.base}/api/v1/product`)).status).toBe(200);
    served.child.kill('SIGINT');
    expect(await served.exited).toBe(0);
  });
});

describe('guides serve: a start that fails', () => {
  it.each([[[]], [['--workers', '2']]])(
    'exits 1 with the error when its port is taken, instead of living on without serving (serve %j)',
    async (args: string[]) => {
      const taken = createServer();
      const port = await freePort();
      await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
      try {
        // The first-run import, then getting ready starts the search worker, which kept a server
        // that could not listen alive (and, under --workers, each worker's channel to the primary
        // did, while the primary waited for them).
        const child = spawnServe(port, args);
        child.stdout!.resume();
        let stderr = '';
        child.stderr!.setEncoding('utf8').on('data', (data: string) => {
          stderr += data;
        });
        const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
        const outcome = await Promise.race([
          exited,
          new Promise<string>((resolve) => setTimeout(() => resolve('still running after 20 s'), 20_000)),
        ]);
        expect(outcome).toBe(1);
        // "listen EADDRINUSE: address already in use 127.0.0.1:<port>", or "bind EADDRINUSE …" from a worker.
        expect(stderr).toMatch(new RegExp(`EADDRINUSE.* 127\\.0\\.0\\.1:${port}\\b`));
      } finally {
        await new Promise((resolve) => taken.close(resolve));
      }
    },
  );
  it.each([[[]], [['--workers', '2']]])(
    'exits 1 on a first run whose content has problems, logging each one and saying how many (serve %j)',
    async (args: string[]) => {
      // One first-run import for a single process and for the cluster primary: the same log and message.
      const child = spawnServe(await freePort(), args, { CONTENT_DIR: path.join(FIXTURES, 'content-broken') });
      let stdout = '';
      let stderr = '';
      child.stdout!.setEncoding('utf8').on('data', (data: string) => {
        stdout += data;
      });
      child.stderr!.setEncoding('utf8').on('data', (data: string) => {
        stderr += data;
      });
      const code = await new Promise<number | null>((resolve) => child.on('exit', (exitCode) => resolve(exitCode)));
      expect(code).toBe(1);
      expect(stderr).toContain(
        `the content folder ${path.join(FIXTURES, 'content-broken')} has 18 problem(s); fix them or set CONTENT_DIR`,
      );
      const problems = stdout.split('\n').filter((line) => line.includes('"msg":"content problem"'));
      expect(problems).toHaveLength(18);
    },
  );
});

describe('guides serve --workers', () => {
  it('runs N worker processes on one port, one /metrics for all of them, and exits 0 on SIGTERM', async () => {
    const served = await serve(['--workers', '2']);
    await until(() => served.logs.filter((line) => line.msg === 'ready').length === 2, 'both workers listening');
    for (let i = 0; i < 12; i += 1) {
      const res = await getOnNewConnection(`${served.base}/api/v1/guides/first-guide`);
      expect(res.status).toBe(200);
    }
    const pids = new Set(served.logs.filter((line) => line.msg === 'request').map((line) => line.pid));
    expect(pids.size).toBe(2);
    expect(served.logs.some((line) => line.role === 'primary' && /REDIS_URL/.test(String(line.msg)))).toBe(true);

    // Whichever worker answers the scrape, it reports the requests of both.
    for (let i = 0; i < 2; i += 1) {
      const metrics = (await getOnNewConnection(`${served.base}/metrics`)).body;
      const line = metrics
        .split('\n')
        .find((l) => l.startsWith('http_requests_total{') && l.includes('route="/api/v1/guides/:slug"') && l.includes('status_code="200"'));
      expect(line).toMatch(/ 12$/);
    }

    served.child.kill('SIGTERM');
    expect(await served.exited).toBe(0);
    const shutdowns = served.logs.filter((line) => line.msg === 'shutdown complete');
    expect(new Set(shutdowns.map((line) => line.pid))).toEqual(pids);
  });

  it('accepts --workers auto', async () => {
    const served = await serve(['--workers', 'auto']);
    await until(() => served.logs.filter((line) => line.msg === 'ready').length === availableParallelism(), 'every worker listening');
    expect((await getOnNewConnection(`${served.base}/api/v1/product`)).status).toBe(200);
    served.child.kill('SIGTERM');
    expect(await served.exited).toBe(0);
  });
});

describe('guides serve as npm start runs it', () => {
  it("starts with the start script's environment and node options, and its search worker answers", async () => {
    const start = startCommand(ROOT);
    // What the memory figures in docs/operations.md assume.
    expect(start.nodeOptions).toContain('--max-semi-space-size=4');
    expect(start.env).toEqual({ MALLOC_ARENA_MAX: '2' });
    const served = await serve([], start.env, start.nodeOptions);
    // A search sent as soon as the server listens waits for its search worker: never a 503.
    const response = await fetch(`${served.base}/api/v1/guides?q=second`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { items: { slug: string }[] }).items.map((item) => item.slug)).toEqual(['second-guide']);
    served.child.kill('SIGTERM');
    expect(await served.exited).toBe(0);
  });
});

describe('the V8 heap growth guides serve sets', () => {
  // Only the command line is looked at: node refuses this flag in NODE_OPTIONS.
  it('is --heap-growing-percent=50 unless node was given its own on the command line', () => {
    expect(heapGrowthFlag([])).toBe('--heap-growing-percent=50');
    expect(heapGrowthFlag(['--enable-source-maps', '--max-old-space-size=512'])).toBe('--heap-growing-percent=50');
    expect(heapGrowthFlag(['--heap-growing-percent=100'])).toBeUndefined();
    expect(heapGrowthFlag(['--max-old-space-size=512', '--heap_growing_percent=20'])).toBeUndefined();
  });
});

describe('guides serve: the start-up warning about PUBLIC_BASE_URL', () => {
  const warnings = (logs: Array<Record<string, unknown>>): unknown[] =>
    logs.filter((line) => line.level === 40 && String(line.msg).includes('PUBLIC_BASE_URL')).map((line) => line.msg);

  it('warns when HOST is public and PUBLIC_BASE_URL is left at localhost, and not otherwise', async () => {
    const exposed = await serve([], { HOST: '0.0.0.0' });
    await until(() => exposed.logs.some((line) => line.msg === 'ready'), 'ready');
    expect(warnings(exposed.logs)).toEqual([
      expect.stringContaining('PUBLIC_BASE_URL is left at its default while HOST is not a loopback address'),
    ]);
    exposed.child.kill('SIGTERM');
    expect(await exposed.exited).toBe(0);

    const configured = await serve([], { HOST: '0.0.0.0', PUBLIC_BASE_URL: 'https://guides.example.com' });
    const loopback = await serve([]);
    for (const served of [configured, loopback]) {
      await until(() => served.logs.some((line) => line.msg === 'ready'), 'ready');
      expect(warnings(served.logs)).toEqual([]);
      served.child.kill('SIGTERM');
      expect(await served.exited).toBe(0);
    }
  });
});

describe('guides serve --watch', () => {
  it('serves a changed file within 5 s, and keeps the last good content while a file is broken', async () => {
    const dir = makeTempDir('guides-watch-');
    dirs.push(dir);
    const content = path.join(dir, 'content');
    cpSync(path.join(FIXTURES, 'content-tiny'), content, { recursive: true });
    const served = await serve(['--watch'], { CONTENT_DIR: content });
    const title = async (slug: string): Promise<string | undefined> => {
      const response = await fetch(`${served.base}/api/v1/guides/${slug}`);
      return response.ok ? ((await response.json()) as { title: string }).title : undefined;
    };
    await until(() => served.logs.some((line) => line.msg === 'watching the content folder: a change is imported'), 'the watcher');
    const first = path.join(content, 'guides', 'first-guide.md');
    const original = readFileSync(first, 'utf8');
    writeFileSync(first, original.replace(/^title: .*$/m, 'title: Edited While Serving'));
    await until(async () => (await title('first-guide')) === 'Edited While Serving', 'the edited title', 5000);

    const secondTitle = await title('second-guide');
    const second = path.join(content, 'guides', 'second-guide.md');
    writeFileSync(second, readFileSync(second, 'utf8').replace(/^title: .*\n/m, ''));
    await until(
      () => served.logs.some((line) => line.level === 50 && String(line.msg).includes('guides/second-guide.md [title]: is required')),
      'the problem logged',
      5000,
    );
    expect(await title('second-guide')).toBe(secondTitle);
    expect(await title('first-guide')).toBe('Edited While Serving');

    served.child.kill('SIGTERM');
    expect(await served.exited).toBe(0);
  });
});
