/**
 * PostgreSQL faults under load, on a PRIVATE cluster made with initdb in a temporary folder (the
 * machine's shared server is never touched): the app's connections killed with
 * pg_terminate_backend, then the whole cluster restarted. While the database is gone, requests that
 * need it get 503 problems with Retry-After, never a 500; afterwards the same app (no restart)
 * serves everything again. Needs initdb and pg_ctl, run as the `postgres` user when this runs as
 * root (initdb refuses root); under CI=true their absence is a failure.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, rmSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresGuideStore } from '../../src/store/postgres/postgres-guide-store.js';
import { buildTestApp, makeTempDir, TEST_BASE_URL } from '../helpers/build-test-app.js';
import type { TestApp } from '../helpers/build-test-app.js';
import { freePort } from '../helpers/redis-server.js';

const asPostgres = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : [];
const hasTools = (() => {
  try {
    execFileSync([...asPostgres, 'initdb'][0]!, [...asPostgres.slice(1), ...(asPostgres.length > 0 ? ['initdb'] : []), '--version'], {
      stdio: 'ignore',
    });
    execFileSync('pg_ctl', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    const message = 'initdb/pg_ctl (PostgreSQL server binaries) not found: the private-cluster fault test';
    if (process.env.CI === 'true') throw new Error(`${message} cannot run, and CI requires it.`);
    console.warn(`\n!! SKIPPED: ${message}.\n`);
    return false;
  }
})();

function run(command: string[]): void {
  const full = [...asPostgres, ...command];
  execFileSync(full[0]!, full.slice(1), { stdio: 'ignore' });
}

describe.runIf(hasTools)('PostgreSQL faults on a private cluster, under load', () => {
  let dir: string;
  let dataDir: string;
  let port: number;
  let url: string;
  let t: TestApp;
  const pgCtl = (...args: string[]): void => run(['pg_ctl', '-D', dataDir, '-w', '-t', '30', ...args]);
  const startCluster = (): void =>
    pgCtl('-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, '-l', path.join(dir, 'postgres.log'), 'start');

  beforeAll(async () => {
    dir = makeTempDir('guides-pg-cluster-');
    dataDir = path.join(dir, 'data');
    if (asPostgres.length > 0)
      chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
    run(['initdb', '-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    port = await freePort();
    startCluster();
    url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const store = createPostgresGuideStore({ connectionString: url, poolSize: 4, connectionTimeoutMs: 1000 });
    t = await buildTestApp({
      store,
      env: { RATE_LIMIT_PER_MINUTE: '0', SEARCH_CONCURRENCY: '0', MAX_EVENT_LOOP_DELAY_MS: '0', CONTENT_POLL_MS: '200' },
    });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    try {
      pgCtl('-m', 'immediate', 'stop');
    } catch {
      // Already stopped.
    }
    rmSync(dir, { recursive: true, force: true });
  });

  let counter = 0;
  const WORDS = [
    'kitchen',
    'menu',
    'food',
    'staff',
    'safety',
    'cost',
    'service',
    'clean',
    'guest',
    'order',
    'waste',
    'allergen',
    'cook',
    'temperature',
    'wine',
    'bar',
  ];
  /** A request the representation cache cannot answer: a search text and page size not asked before. */
  function uncachedUrl(): string {
    counter += 1;
    const word = WORDS[counter % WORDS.length]!.slice(0, 3 + ((counter >> 4) % 4));
    return `/api/v1/guides?q=${word}&limit=${1 + ((counter >> 6) % 50)}`;
  }

  /** Runs 6 clients of uncached requests while `fault` happens; returns every status seen, in order. */
  async function underLoad(fault: () => Promise<void>): Promise<{ statuses: number[]; problems: string[] }> {
    const statuses: number[] = [];
    const problems: string[] = [];
    let isFaultOver = false;
    let okAfter = 0;
    const client = async (): Promise<void> => {
      while (!isFaultOver || okAfter < 50) {
        const url = uncachedUrl();
        const res = await t.app.inject({ url });
        statuses.push(res.statusCode);
        if (res.statusCode === 503) {
          if (!/^[1-9]\d*$/.test(String(res.headers['retry-after']))) problems.push('503 without Retry-After');
          if (res.json<{ type: string }>().type !== `${TEST_BASE_URL}/problems/service-unavailable`) problems.push(`503 body ${res.body}`);
          await new Promise((r) => setTimeout(r, 20));
        } else if (res.statusCode !== 200) {
          problems.push(`${url} → ${res.statusCode} ${res.body.slice(0, 200)}`);
        } else if (isFaultOver) okAfter += 1;
      }
    };
    const clients = Array.from({ length: 6 }, client);
    await new Promise((r) => setTimeout(r, 300));
    await fault();
    isFaultOver = true;
    await Promise.all(clients);
    return { statuses, problems };
  }

  it('recovers by itself when its connections are killed with pg_terminate_backend', async () => {
    const { statuses, problems } = await underLoad(async () => {
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      const { rows } = await admin.query<{ n: number }>(
        "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = 'restaurant-guides-api' AND pid <> pg_backend_pid()",
      );
      await admin.end();
      expect(rows[0]!.n).toBeGreaterThan(0);
    });
    expect(problems).toEqual([]);
    expect(statuses.at(-1)).toBe(200);
    expect((await t.app.inject({ url: '/readyz' })).statusCode).toBe(200);
  });

  it('answers 503 while the cluster restarts, and serves again afterwards without an API restart', async () => {
    const { statuses, problems } = await underLoad(async () => {
      pgCtl('-m', 'fast', 'stop');
      // Down long enough for every client to meet it.
      await new Promise((r) => setTimeout(r, 1500));
      expect((await t.app.inject({ url: '/readyz' })).statusCode).toBe(503);
      startCluster();
    });
    expect(problems).toEqual([]);
    expect(statuses).toContain(503);
    expect(statuses.at(-1)).toBe(200);
    expect((await t.app.inject({ url: '/readyz' })).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/api/v1/guides/reduce-food-waste' })).statusCode).toBe(200);
  });
});
