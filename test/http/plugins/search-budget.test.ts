/**
 * The search budget over real sockets: a client searching one at a time is never refused, even
 * while processes spinning on every core compete with the server; a client with more than
 * SEARCH_CONCURRENCY_PER_CLIENT searches in flight gets 429 for the others, with Retry-After and
 * the RateLimit items, while another client is served; searches beyond SEARCH_CONCURRENCY wait in a
 * FIFO queue, and only one that finds the queue full gets 503 with Retry-After (a cached search
 * page is still answered: it costs no search). Figures under a flood from many clients (guide
 * reads' p99 against an idle server) come from `npm run soak`.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import { availableParallelism } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { isSearchRequest } from '../../../src/http/plugins/search-budget.js';
import type { GuideStore } from '../../../src/store/guide-store.js';
import { createSqliteGuideStore } from '../../../src/store/sqlite/sqlite-guide-store.js';
import { buildTestApp, makeTempDir, TEST_BASE_URL } from '../../helpers/build-test-app.js';
import type { TestApp } from '../../helpers/build-test-app.js';

interface Answer {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

function get(port: number, path: string, agent: http.Agent, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    http
      .request({ host: '127.0.0.1', port, path, agent, headers }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      })
      .on('error', reject)
      .end();
  });
}

const WORDS = ['kitchen', 'menu', 'food', 'staff', 'safety', 'cost', 'service', 'clean', 'the', 'and', 'order', 'waste'];
/** The i-th of many distinct search texts (no cache answers them). */
const text = (i: number): string => `${WORDS[i % 12]}%20${WORDS[Math.floor(i / 12) % 12]!.slice(0, 2 + (i % 3))}`;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A SQLite store whose searches each take `ms` longer, as searches over a large index do. */
function storeWithSlowSearches(ms: number): GuideStore {
  const inner = createSqliteGuideStore(`${makeTempDir('search-budget-')}/guides.db`);
  return {
    ...inner,
    searchPublishedGuides: async (options) => {
      await sleep(ms);
      return inner.searchPublishedGuides(options);
    },
  };
}

async function listen(t: TestApp): Promise<number> {
  return Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
}

describe('search budget', () => {
  let t: TestApp | undefined;
  const hogs: ChildProcess[] = [];
  // Searches a test holds until it releases them (released here too when an assertion fails first).
  let release = (): void => undefined;
  afterEach(async () => {
    for (const hog of hogs.splice(0)) hog.kill('SIGKILL');
    release();
    await t?.close();
    t = undefined;
  });

  it('tells searches (a q, or a search cursor) from other list requests', () => {
    const cursor = (fields: unknown[]): string => `${Buffer.from(JSON.stringify(fields)).toString('base64url')}.sig`;
    expect(isSearchRequest({ q: 'menu' })).toBe(true);
    expect(isSearchRequest({ q: '   ' })).toBe(false);
    expect(isSearchRequest({})).toBe(false);
    expect(isSearchRequest({ limit: '5' })).toBe(false);
    expect(isSearchRequest({ cursor: cursor([1, 'l', 0, 'a']) })).toBe(false);
    expect(isSearchRequest({ cursor: cursor([1, 's', 'menu', 1, 0, 'a']) })).toBe(true);
    expect(isSearchRequest({ cursor: 'garbage' })).toBe(true);
    expect(isSearchRequest({ q: ['a', 'b'] })).toBe(true);
  });

  it('answers every search of a client searching one at a time while other processes keep every core busy', async () => {
    // The default configuration, searches on a worker thread as served.
    const dir = makeTempDir('search-budget-');
    const store = createSqliteGuideStore(`${dir}/guides.db`, { searchWorkers: 1 });
    t = await buildTestApp({ store, searchPages: store.searchPages });
    const port = await listen(t);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    // The worker up first (its start is not what this measures).
    while ((await get(port, '/readyz', agent)).status !== 200) await sleep(20);
    for (let i = 0; i < availableParallelism(); i += 1) hogs.push(spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
    await sleep(300);
    const statuses: number[] = [];
    // For three seconds, and at least ten searches however slow the machine is.
    const until = performance.now() + 3000;
    for (let i = 0; i < 10 || performance.now() < until; i += 1)
      statuses.push((await get(port, `/api/v1/guides?limit=${1 + (i % 50)}&q=${text(i)}`, agent)).status);
    agent.destroy();
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
  }, 60_000);

  it('refuses with 429, Retry-After and RateLimit items the searches of one client beyond its limit in flight, and serves another client meanwhile', async () => {
    // Clients told apart by X-Forwarded-For from a trusted proxy (this test's loopback).
    t = await buildTestApp({ store: storeWithSlowSearches(50), env: { TRUST_PROXY: 'loopback' } });
    const port = await listen(t);
    const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
    const flooder = { 'x-forwarded-for': '203.0.113.7' };
    const answers = Promise.all(Array.from({ length: 60 }, (_, i) => get(port, `/api/v1/guides?limit=10&q=${text(i)}`, agent, flooder)));
    await sleep(20);
    const other = await get(port, `/api/v1/guides?q=${text(100)}`, agent, { 'x-forwarded-for': '203.0.113.8' });
    const all = await answers;

    expect(other.status).toBe(200);
    expect(all.filter((a) => a.status !== 200 && a.status !== 429).map((a) => a.status)).toEqual([]);
    const refused = all.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    expect(all.length - refused.length).toBeGreaterThanOrEqual(4);
    for (const answer of refused) {
      expect(answer.headers['retry-after']).toBe('1');
      expect(answer.headers['ratelimit-policy']).toBe('"per-ip";q=600;w=60, "searches-in-flight";q=4;qu="concurrent-requests"');
      expect(answer.headers['ratelimit']).toMatch(/^"per-ip";r=\d+;t=\d+, "searches-in-flight";r=0;t=1$/);
      expect(JSON.parse(answer.body)).toMatchObject({ type: `${TEST_BASE_URL}/problems/rate-limited`, status: 429 });
    }
    // Once its searches are answered, the client may search again.
    expect((await get(port, `/api/v1/guides?q=${text(101)}`, agent, flooder)).status).toBe(200);
    // The same through app.inject, whose answers are checked against /openapi.json (the 429's headers too).
    const injected = await Promise.all(
      Array.from({ length: 8 }, (_, i) => t!.app.inject({ url: `/api/v1/guides?q=${text(200 + i)}`, headers: flooder })),
    );
    expect(injected.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 200, 429, 429, 429, 429]);
    const metrics = await get(port, '/metrics', agent);
    expect(metrics.body).toContain(`guides_search_client_limited_total ${refused.length + 4}\n`);
  });

  it('queues searches beyond SEARCH_CONCURRENCY in order, and refuses with 503 only those that find the queue full', async () => {
    const inner = createSqliteGuideStore(`${makeTempDir('search-budget-')}/guides.db`);
    const held = new Promise<void>((resolve) => (release = resolve));
    const ran: string[] = [];
    // Every search but "menu" waits until released.
    const store: GuideStore = {
      ...inner,
      searchPublishedGuides: async (options) => {
        ran.push(options.query.text);
        if (options.query.text !== 'menu') await held;
        return inner.searchPublishedGuides(options);
      },
    };
    t = await buildTestApp({
      store,
      env: { SEARCH_CONCURRENCY: '1', SEARCH_QUEUE_LENGTH: '2', SEARCH_CONCURRENCY_PER_CLIENT: '0', RATE_LIMIT_PER_MINUTE: '0' },
    });
    const port = await listen(t);
    const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
    // A page is kept in the cache from its second request (the cache's admission).
    await get(port, '/api/v1/guides?q=menu', agent);
    const cached = await get(port, '/api/v1/guides?q=menu', agent);
    expect(cached.status).toBe(200);

    const running = ['first', 'second', 'third'].map((q) => get(port, `/api/v1/guides?q=${q}`, agent));
    await sleep(200);
    const refused = await Promise.all(['fourth', 'fifth'].map((q) => get(port, `/api/v1/guides?q=${q}`, agent)));
    for (const answer of refused) {
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('1');
      expect(JSON.parse(answer.body)).toMatchObject({ type: `${TEST_BASE_URL}/problems/service-unavailable`, status: 503 });
    }
    // Guide reads, lists and cached search pages do not wait for searches.
    expect((await get(port, '/api/v1/guides/reduce-food-waste', agent)).status).toBe(200);
    expect((await get(port, '/api/v1/guides?limit=5', agent)).status).toBe(200);
    expect((await get(port, '/api/v1/guides?q=menu', agent)).body).toBe(cached.body);
    const metrics = (await get(port, '/metrics', agent)).body;
    expect(metrics).toContain('guides_search_queued 2\n');
    expect(metrics).toContain('guides_search_shed_total 2\n');

    release();
    expect((await Promise.all(running)).map((a) => a.status)).toEqual([200, 200, 200]);
    expect(ran.filter((q) => q !== 'menu')).toEqual(['first', 'second', 'third']);
  });

  it('can be turned off with SEARCH_CONCURRENCY=0', async () => {
    t = await buildTestApp({ store: storeWithSlowSearches(20), env: { SEARCH_CONCURRENCY: '0', RATE_LIMIT_PER_MINUTE: '0' } });
    const port = await listen(t);
    const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
    const all = await Promise.all(Array.from({ length: 60 }, (_, i) => get(port, `/api/v1/guides?q=${text(i)}`, agent)));
    expect(all.map((a) => a.status)).toEqual(all.map(() => 200));
  });
});
