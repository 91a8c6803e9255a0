/**
 * The SQLite database file of a running `guides serve` is removed, replaced, or made unreadable:
 * requests that need the database get 503 service-unavailable problems with Retry-After (never a
 * 500, never a crash), /readyz says not ready, and the server recovers by itself when a database
 * is back at the path, serving whatever that file holds. Unreadable is tested with the server
 * running as the unprivileged user `nobody` (root ignores file permissions); without root that
 * case skips with a warning.
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, cpSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers/build-test-app.js';
import { freePort } from '../helpers/redis-server.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const TINY = path.join(ROOT, 'test', 'fixtures', 'content-tiny');
const isRoot = process.getuid?.() === 0;
const NOBODY = (() => {
  try {
    return { uid: Number(execFileSync('id', ['-u', 'nobody']).toString()), gid: Number(execFileSync('id', ['-g', 'nobody']).toString()) };
  } catch {
    return undefined;
  }
})();
if (!isRoot || !NOBODY) console.warn('\n!! SKIPPED: the unreadable-file case needs root (to run the server as nobody).\n');

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function importInto(db: string, content: string): void {
  execFileSync(process.execPath, [CLI, 'import', content], { env: { PATH: process.env.PATH, DATABASE_URL: `sqlite:${db}` } });
}

interface Served {
  base: string;
  child: ChildProcess;
  exitCode(): number | null;
}

async function serve(db: string, asNobody = false): Promise<Served> {
  // A port the system reports free (a random one can collide with another connection's local port).
  const port = await freePort();
  const env = {
    PATH: process.env.PATH!,
    DATABASE_URL: `sqlite:${db}`,
    PORT: String(port),
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '0',
    CONTENT_DIR: TINY,
  };
  // As nobody through setuid in spawn itself (what `runuser -u nobody` does), so that the child is
  // the server and killing it needs no signal forwarding.
  const child = spawn(process.execPath, [CLI, 'serve'], {
    env,
    stdio: 'ignore',
    ...(asNobody ? { uid: NOBODY!.uid, gid: NOBODY!.gid } : {}),
  });
  let code: number | null = null;
  child.on('exit', (exit) => (code = exit ?? -1));
  cleanups.push(() => child.kill('SIGKILL'));
  const base = `http://127.0.0.1:${port}`;
  // Up to 30 s: the whole suite runs in parallel on two cores, and a start has taken over 10 s there.
  for (let i = 0; i < 300 && code === null; i += 1) {
    if (
      await fetch(`${base}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { base, child, exitCode: () => code };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(code === null ? 'the server did not start within 30 s' : `the server exited with ${code} before it was ready`);
}

let searchCounter = 0;
/** A request the representation cache cannot answer (a search never sent before): it needs the database. */
async function uncached(base: string): Promise<Response> {
  searchCounter += 1;
  return fetch(`${base}/api/v1/guides?q=guide%20n${searchCounter}x`);
}

/** Polls until `check` passes (the store checks its file every second). */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 60; i += 1) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`not within 6 s: ${what}`);
}

async function expectUnavailable(served: Served): Promise<void> {
  await eventually(async () => (await uncached(served.base)).status === 503, 'a 503 for requests that need the database');
  const res = await uncached(served.base);
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  expect(res.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
  const body = await res.text();
  expect(JSON.parse(body)).toMatchObject({ status: 503, title: 'Service unavailable' });
  expect(body).not.toMatch(/sqlite|SQLITE_|ENOENT|EACCES|\/tmp\/|stack/i);
  expect((await fetch(`${served.base}/readyz`)).status).toBe(503);
  expect((await fetch(`${served.base}/healthz`)).status).toBe(200);
  expect(served.exitCode()).toBeNull();
}

async function slugsOf(base: string): Promise<string[]> {
  const body = (await (await fetch(`${base}/api/v1/guides?limit=50&q=guide`)).json()) as { items: { slug: string }[] };
  return body.items.map((item) => item.slug).sort();
}

describe('guides serve when its SQLite file goes away', () => {
  it('answers 503 while the file is removed and serves again when it is restored', async () => {
    const dir = makeTempDir('guides-faults-');
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const db = path.join(dir, 'g.db');
    importInto(db, TINY);
    cpSync(db, path.join(dir, 'backup.db'));
    const served = await serve(db);
    expect(await slugsOf(served.base)).toEqual(['first-guide', 'second-guide']);

    for (const suffix of ['', '-wal', '-shm']) rmSync(`${db}${suffix}`, { force: true });
    await expectUnavailable(served);

    // Restored by rename, as a backup restore should be (a copy into place is never atomic).
    cpSync(path.join(dir, 'backup.db'), path.join(dir, 'restoring.db'));
    renameSync(path.join(dir, 'restoring.db'), db);
    await eventually(async () => (await uncached(served.base)).status === 200, 'serving again');
    expect((await fetch(`${served.base}/readyz`)).status).toBe(200);
    expect(await slugsOf(served.base)).toEqual(['first-guide', 'second-guide']);
    expect(served.exitCode()).toBeNull();
  });

  it('serves the new database when the file is replaced, without a restart', async () => {
    const dir = makeTempDir('guides-faults-');
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const db = path.join(dir, 'g.db');
    importInto(db, TINY);
    const other = path.join(dir, 'other.db');
    importInto(other, path.join(ROOT, 'content'));
    const served = await serve(db);
    // Read twice, so it is kept in the cache (admission): its 404 below then says the server has
    // seen the new content version, not only the new file.
    expect((await fetch(`${served.base}/api/v1/guides/first-guide`)).status).toBe(200);
    expect((await fetch(`${served.base}/api/v1/guides/first-guide`)).status).toBe(200);
    // A first cursor, signed with the key the first file holds.
    expect(((await (await fetch(`${served.base}/api/v1/guides?limit=1`)).json()) as { nextCursor?: string }).nextCursor).toBeTruthy();

    renameSync(other, db);
    await eventually(async () => (await fetch(`${served.base}/api/v1/guides/reduce-food-waste`)).status === 200, 'the replacement served');
    // The old file's representations are gone with its content version.
    await eventually(async () => (await fetch(`${served.base}/api/v1/guides/first-guide`)).status === 404, 'the old content gone');
    // Cursors are now signed with the key the new file holds (no CURSOR_SECRET here): another
    // server on that file, or this one after a restart, accepts them.
    const { nextCursor } = (await (await fetch(`${served.base}/api/v1/guides?limit=2`)).json()) as { nextCursor: string };
    const second = await serve(db);
    const next = await fetch(`${second.base}/api/v1/guides?limit=2&cursor=${nextCursor}`);
    expect(next.status).toBe(200);
    expect(served.exitCode()).toBeNull();
  });

  it.runIf(isRoot && NOBODY)(
    'answers 503 while the file is unreadable to the server (run as nobody), and recovers when it is readable again',
    async () => {
      const dir = makeTempDir('guides-faults-');
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const db = path.join(dir, 'g.db');
      importInto(db, TINY);
      chownSync(dir, NOBODY!.uid, NOBODY!.gid);
      chownSync(db, NOBODY!.uid, NOBODY!.gid);
      const served = await serve(db, true);
      expect(await slugsOf(served.base)).toEqual(['first-guide', 'second-guide']);

      chmodSync(db, 0o000);
      await expectUnavailable(served);

      chmodSync(db, 0o644);
      await eventually(async () => (await uncached(served.base)).status === 200, 'serving again');
      expect(await slugsOf(served.base)).toEqual(['first-guide', 'second-guide']);
      expect(served.exitCode()).toBeNull();
    },
  );
});
