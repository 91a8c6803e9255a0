/**
 * Ready means ready: on SQLite with search workers, /readyz answers 503 until the workers are up
 * (started, database open, taking searches), and a search sent before that waits for them and gets 200, never 503;
 * in the app, and in the built CLI (`guides serve`) sent searches the moment it accepts connections.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteGuideStore } from '../../../src/store/sqlite/sqlite-guide-store.js';
import { buildTestApp, makeTempDir } from '../../helpers/build-test-app.js';
import type { TestApp } from '../../helpers/build-test-app.js';
import { freePort } from '../../helpers/redis-server.js';

const CLI = path.resolve(import.meta.dirname, '..', '..', '..', 'dist', 'cli.js');

/** Resolves once the port accepts a connection (the server has listened). */
async function accepting(port: number, server: ChildProcess): Promise<void> {
  for (;;) {
    if (server.exitCode !== null) throw new Error(`the server exited with ${server.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      }).on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('/readyz and searches at start', () => {
  let t: TestApp | undefined;
  let child: ChildProcess | undefined;
  afterEach(async () => {
    child?.kill('SIGKILL');
    child = undefined;
    await t?.close();
    t = undefined;
  });

  it('answers 503 until the search workers are up, and a search sent meanwhile waits for them and gets 200', async () => {
    const dir = makeTempDir('readyz-');
    // Getting ready (the first content-version check) starts the worker; it is not up yet.
    const store = createSqliteGuideStore(path.join(dir, 'guides.db'), { searchWorkers: 1 });
    t = await buildTestApp({ store, searchPages: store.searchPages });
    const early = await t.app.inject({ url: '/readyz' });
    expect(early.statusCode).toBe(503);
    expect(early.headers['retry-after']).toMatch(/^\d+$/);
    const search = await t.app.inject({ url: '/api/v1/guides?q=kitchen' });
    expect(search.statusCode).toBe(200);
    expect(search.json<{ items: unknown[] }>().items.length).toBeGreaterThan(0);
    expect((await t.app.inject({ url: '/readyz' })).json()).toEqual({ status: 'ready' });
  });

  it('answers a search sent by `guides serve` the moment it listens with 200, and /readyz turns 200 and stays so', async () => {
    for (let start = 0; start < 3; start += 1) {
      const port = await freePort();
      const dir = makeTempDir('readyz-cli-');
      child = spawn(process.execPath, [CLI, 'serve'], {
        env: { PATH: process.env.PATH, DATABASE_URL: `sqlite:${path.join(dir, 'guides.db')}`, PORT: String(port), LOG_LEVEL: 'silent' },
        stdio: 'ignore',
      });
      await accepting(port, child);
      const base = `http://127.0.0.1:${port}`;
      const [search, firstReady] = await Promise.all([fetch(`${base}/api/v1/guides?q=kitchen%20sa`), fetch(`${base}/readyz`)]);
      expect(search.status, `start ${start}`).toBe(200);
      const statuses = [firstReady.status];
      while (statuses.at(-1) !== 200) statuses.push((await fetch(`${base}/readyz`)).status);
      for (let i = 0; i < 5; i += 1) statuses.push((await fetch(`${base}/readyz`)).status);
      // 503s (workers starting) then only 200s.
      expect(statuses.slice(statuses.indexOf(200)), `start ${start}`).toEqual(statuses.slice(statuses.indexOf(200)).map(() => 200));
      expect(
        statuses.slice(0, statuses.indexOf(200)).every((status) => status === 503),
        `start ${start}`,
      ).toBe(true);
      child.kill('SIGKILL');
      child = undefined;
    }
  }, 120_000);
});
