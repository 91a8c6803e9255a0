/**
 * The search budget: a burst of distinct searches over real sockets beyond the budget is refused at
 * once with 503 service-unavailable and Retry-After, while guide reads sent alongside are all
 * served. On PostgreSQL the concurrency limit does it (SEARCH_CONCURRENCY searches in flight); on
 * SQLite, whose searches run on the event loop, the loop-lag gate does. After the first refusal,
 * refusals are answered before Fastify, with the same headers and body. Figures under a sustained
 * flood (p99 of guide reads against an idle server) come from `npm run soak`.
 */
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { isSearchRequest } from '../../../src/http/plugins/search-budget.js';
import type { GuideStore } from '../../../src/store/guide-store.js';
import { createPostgresGuideStore } from '../../../src/store/postgres/postgres-guide-store.js';
import { createSqliteGuideStore } from '../../../src/store/sqlite/sqlite-guide-store.js';
import { buildTestApp, makeTempDir, TEST_BASE_URL } from '../../helpers/build-test-app.js';
import type { TestApp } from '../../helpers/build-test-app.js';
import { createTestDatabase, requirePostgres } from '../../helpers/postgres-database.js';
import type { TestDatabase } from '../../helpers/postgres-database.js';

const hasPostgres = await requirePostgres('the search budget test on PostgreSQL');

interface Answer { status: number; retryAfter?: string; body: string; headers: http.IncomingHttpHeaders }

function get(port: number, path: string, agent: http.Agent, options: { method?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    http.request({ host: '127.0.0.1', port, path, agent, ...options }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined, body, headers: res.headers }));
    }).on('error', reject).end();
  });
}

/** Headers that differ between any two answers. */
function sameForEveryRequest(headers: http.IncomingHttpHeaders, also: string[] = []): http.IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !['x-request-id', 'date', ...also].includes(name)));
}

/** 120 distinct searches and 30 guide reads, all in flight at once on their own connections. */
async function burst(t: TestApp): Promise<{ searches: Answer[]; reads: Answer[] }> {
  const port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const words = ['kitchen', 'menu', 'food', 'staff', 'safety', 'cost', 'service', 'clean', 'the', 'and', 'a', 'order'];
  const searches = Array.from({ length: 120 }, (_, i) => get(port, `/api/v1/guides?limit=50&q=${words[i % 12]}%20${words[Math.floor(i / 12) % 12]!.slice(0, 2 + (i % 3))}`, agent));
  const reads = Array.from({ length: 30 }, () => get(port, '/api/v1/guides/reduce-food-waste', agent));
  return { searches: await Promise.all(searches), reads: await Promise.all(reads) };
}

/**
 * A SQLite store whose searches hold the event loop ~2 ms each, as searches over a large index do:
 * over the few sample guides a search takes a fraction of that on a fast machine, and a burst of
 * them then left the loop on time (no refusal to test).
 */
function storeWithSlowSearches(): GuideStore {
  const inner = createSqliteGuideStore(`${makeTempDir('search-budget-')}/guides.db`);
  return { ...inner, searchPublishedGuides: (options) => {
    const until = performance.now() + 2;
    while (performance.now() < until);
    return inner.searchPublishedGuides(options);
  } };
}

function expectShedAtOnce({ searches, reads }: { searches: Answer[]; reads: Answer[] }): void {
  const shed = searches.filter((a) => a.status === 503);
  expect(shed.length, 'searches refused').toBeGreaterThan(0);
  expect(searches.every((a) => a.status === 200 || a.status === 503)).toBe(true);
  for (const answer of shed) {
    expect(answer.retryAfter).toBe('1');
    expect(JSON.parse(answer.body)).toMatchObject({ type: `${TEST_BASE_URL}/problems/service-unavailable`, status: 503 });
    // Refused through Fastify or before it, every refusal is the same answer.
    expect(sameForEveryRequest(answer.headers)).toEqual(sameForEveryRequest(shed[0]!.headers));
    expect(answer.body).toBe(shed[0]!.body);
  }
  expect(reads.map((a) => a.status)).toEqual(reads.map(() => 200));
}

describe('search budget', () => {
  let t: TestApp | undefined;
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await t?.close();
    await database?.drop();
    t = undefined;
    database = undefined;
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

  it('on SQLite, refuses searches at once while the event loop is behind, and serves guide reads alongside', async () => {
    t = await buildTestApp({ store: storeWithSlowSearches(), env: { RATE_LIMIT_PER_MINUTE: '0', SEARCH_MAX_LAG_MS: '1', MAX_EVENT_LOOP_DELAY_MS: '0' } });
    expectShedAtOnce(await burst(t));
  });

  it.runIf(hasPostgres)('on PostgreSQL, refuses searches beyond SEARCH_CONCURRENCY at once, and serves guide reads alongside', async () => {
    database = await createTestDatabase();
    const store = createPostgresGuideStore({ connectionString: database.url, poolSize: 6 });
    t = await buildTestApp({ store, env: { RATE_LIMIT_PER_MINUTE: '0', SEARCH_CONCURRENCY: '2', SEARCH_MAX_LAG_MS: '0', MAX_EVENT_LOOP_DELAY_MS: '0' } });
    expectShedAtOnce(await burst(t));
  });

  /** An app whose searches wait until released: with SEARCH_CONCURRENCY=1 the first search holds the budget. */
  async function appWithAHeldSearch(rateLimitPerMinute: string): Promise<{ port: number; first: Promise<Answer>; release(): void }> {
    const dir = makeTempDir('search-budget-');
    const inner = createSqliteGuideStore(`${dir}/guides.db`);
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const store: GuideStore = { ...inner, searchPublishedGuides: async (options) => {
      await held;
      return inner.searchPublishedGuides(options);
    } };
    t = await buildTestApp({ store, env: { RATE_LIMIT_PER_MINUTE: rateLimitPerMinute, SEARCH_CONCURRENCY: '1', SEARCH_MAX_LAG_MS: '0', MAX_EVENT_LOOP_DELAY_MS: '0' } });
    const port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
    const first = get(port, '/api/v1/guides?q=kitchen', new http.Agent({ keepAlive: false }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    return { port, first, release };
  }

  it('refuses, after the first refusal, before Fastify: the same answer with its own request id, counted in /metrics', async () => {
    const { port, first, release } = await appWithAHeldSearch('5');
    // One connection per request: none of them is held back for ignoring Retry-After (next test).
    const agent = new http.Agent({ keepAlive: false });

    const byFastify = await get(port, '/api/v1/guides?q=menu', agent);
    // More than the rate limit allows: refusals before Fastify do not count against it.
    const early = await Promise.all(Array.from({ length: 8 }, (_, i) => get(port, `/api/v1/guides?q=menu${i}&limit=5`, agent, i === 0 ? { headers: { 'x-request-id': 'trace-me.42' } } : {})));
    const head = await get(port, '/api/v1/guides?cursor=garbage', agent, { method: 'HEAD' });
    for (const answer of [byFastify, ...early, head]) {
      expect(answer.status).toBe(503);
      expect(answer.retryAfter).toBe('1');
    }
    // The Fastify refusal carries the client's RateLimit headers; the early ones carry everything else it had.
    const template = sameForEveryRequest(byFastify.headers, ['ratelimit', 'ratelimit-policy']);
    expect(template).toMatchObject({ 'access-control-allow-origin': '*', 'content-security-policy': expect.any(String), 'cache-control': 'no-store' });
    for (const answer of early) {
      expect(sameForEveryRequest(answer.headers)).toEqual(template);
      expect(answer.body).toBe(byFastify.body);
    }
    expect(early[0]!.headers['x-request-id']).toBe('trace-me.42');
    expect(new Set(early.map((a) => a.headers['x-request-id'])).size).toBe(early.length);
    expect(head.body).toBe('');
    // A list without q and a guide read are not searches: served.
    expect((await get(port, '/api/v1/guides?limit=5', agent)).status).toBe(200);
    expect((await get(port, '/api/v1/guides/reduce-food-waste', agent)).status).toBe(200);

    const metrics = await get(port, '/metrics', agent);
    expect(metrics.body).toMatch(/^guides_search_shed_total 10$/m);
    release();
    expect((await first).status).toBe(200);
  });

  it('stops reading, for the Retry-After it ignored, a connection refused twice within it; other connections are served', async () => {
    const { port, first, release } = await appWithAHeldSearch('0');
    const flooding = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const other = new http.Agent({ keepAlive: true, maxSockets: 1 });
    for (const q of ['a1', 'a2', 'a3']) expect((await get(port, `/api/v1/guides?q=${q}`, flooding)).status).toBe(503);
    // The third refusal came within a second of the second: this connection is not read for a second.
    const sentAt = performance.now();
    const finished: string[] = [];
    const heldRead = get(port, '/api/v1/guides/reduce-food-waste', flooding).then((answer) => (finished.push('held'), answer));
    const otherRead = get(port, '/api/v1/guides/reduce-food-waste', other).then((answer) => (finished.push('other'), answer));
    expect((await otherRead).status).toBe(200);
    expect((await heldRead).status).toBe(200);
    expect(performance.now() - sentAt).toBeGreaterThanOrEqual(900);
    expect(finished).toEqual(['other', 'held']);
    release();
    expect((await first).status).toBe(200);
    flooding.destroy();
    other.destroy();
  });

  it('answers a search page it has cached even while the budget refuses new searches (it costs no search)', async () => {
    const dir = makeTempDir('search-budget-');
    const inner = createSqliteGuideStore(`${dir}/guides.db`);
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    // Every search but "menu" waits until released.
    const store: GuideStore = { ...inner, searchPublishedGuides: async (options) => {
      if (options.query.text !== 'menu') await held;
      return inner.searchPublishedGuides(options);
    } };
    t = await buildTestApp({ store, env: { RATE_LIMIT_PER_MINUTE: '0', SEARCH_CONCURRENCY: '1', SEARCH_MAX_LAG_MS: '0', MAX_EVENT_LOOP_DELAY_MS: '0' } });
    const port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
    const agent = new http.Agent({ keepAlive: false });
    // A page is kept in the cache from its second request (the cache's admission).
    await get(port, '/api/v1/guides?q=menu', agent);
    const cached = await get(port, '/api/v1/guides?q=menu', agent);
    expect(cached.status).toBe(200);
    const first = get(port, '/api/v1/guides?q=kitchen', agent);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await get(port, '/api/v1/guides?q=staff', agent)).status).toBe(503);
    const again = await get(port, '/api/v1/guides?q=menu', agent);
    expect(again.status).toBe(200);
    expect(again.body).toBe(cached.body);
    release();
    expect((await first).status).toBe(200);
  });

  it('can be turned off with SEARCH_CONCURRENCY=0', async () => {
    t = await buildTestApp({ store: storeWithSlowSearches(), env: { RATE_LIMIT_PER_MINUTE: '0', SEARCH_CONCURRENCY: '0', SEARCH_MAX_LAG_MS: '1', MAX_EVENT_LOOP_DELAY_MS: '0' } });
    const { searches } = await burst(t);
    expect(searches.map((a) => a.status)).toEqual(searches.map(() => 200));
  });
});
