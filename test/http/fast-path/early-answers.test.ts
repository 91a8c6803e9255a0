/**
 * Early answers: cache hits sent from the server's request listener, before Fastify. Requests go
 * into that listener (injectThroughListener) or over real sockets; app.inject would skip it. Each
 * test reads guides_early_answers_total from /metrics, so it knows which way a request went, and
 * compares early answers with the answer Fastify gives to the same request, and with FAST_PATH=0.
 * One test starts a close with a request in flight and checks that a cached target asked for then
 * goes to Fastify.
 */
import { request as httpRequest } from 'node:http';
import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { IncomingHttpHeaders } from 'node:http';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, injectThroughListener } from '../../helpers/build-test-app.js';
import type { TestApp } from '../../helpers/build-test-app.js';
import type { App } from '../../../src/http/app-types.js';
import { makeContent, makeGuide } from '../../helpers/guide-factory.js';
import { loadSampleContent } from '../../helpers/sample-content.js';
import type { GuideStore } from '../../../src/store/guide-store.js';
import { createSqliteGuideStore } from '../../../src/store/sqlite/sqlite-guide-store.js';
import { makeTempDir } from '../../helpers/build-test-app.js';
import path from 'node:path';

const GUIDE = '/api/v1/guides/reduce-food-waste';
/** Headers made for each request; everything else of an early answer is what Fastify sent. */
const PER_REQUEST = ['x-request-id', 'ratelimit', 'date', 'connection', 'keep-alive', 'transfer-encoding'];

interface LogLine {
  msg: string;
  requestId?: string;
  [key: string]: unknown;
}

interface Harness extends TestApp {
  /** A request into the server's request listener, where the fast path stands in front of Fastify. */
  request: ReturnType<typeof injectThroughListener>;
  /** guides_early_answers_total now (read through Fastify: /metrics is never an early answer). */
  early(): Promise<number>;
  logs: LogLine[];
}

/** buildTestApp with its log lines collected (at `logLevel`) and the early-answer count at hand. */
async function harness(env: Record<string, string> = {}, logLevel = 'silent'): Promise<Harness> {
  const logs: LogLine[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logs.push(JSON.parse(line) as LogLine);
      callback();
    },
  });
  const t = await buildTestApp({ env, logger: pino({ level: logLevel }, stream) });
  return Object.assign(t, {
    logs,
    request: injectThroughListener(t.app),
    async early() {
      const text = (await t.app.inject({ url: '/metrics' })).body;
      const value = /^guides_early_answers_total (\d+)$/m.exec(text)?.[1];
      if (value === undefined) throw new Error('no guides_early_answers_total in /metrics');
      return Number(value);
    },
  });
}

function withoutPerRequest(headers: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !PER_REQUEST.includes(name)));
}

describe('early answers of cache hits', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({}, 'info');
  });
  afterAll(() => h.close());

  it('answers a repeated request before Fastify with the status, headers and bytes Fastify sent', async () => {
    const first = await h.request({ url: '/api/v1/guides?limit=3' });
    const cursor = first.json<{ nextCursor: string }>().nextCursor;
    const search = await h.request({ url: '/api/v1/guides?q=menu&limit=2' });
    const searchCursor = search.json<{ nextCursor: string }>().nextCursor;
    expect(cursor).toBeTypeOf('string');
    expect(searchCursor).toBeTypeOf('string');
    const targets = [
      '/api/v1/product',
      '/api/v1/resources',
      '/api/v1/guides',
      '/api/v1/guides?limit=3',
      `/api/v1/guides?cursor=${cursor}`,
      '/api/v1/guides?q=menu',
      `/api/v1/guides?q=menu&limit=2&cursor=${searchCursor}`,
      GUIDE,
      '/openapi.json',
      '/llms.txt',
      '/.well-known/api-catalog',
    ];
    for (const url of targets) {
      // Fastify's answers by status and ETag (one per variant): what early answers must repeat.
      const byFastify = new Map<string, Awaited<ReturnType<App['inject']>>>();
      const keyOf = (res: Awaited<ReturnType<App['inject']>>): string => `${res.statusCode} ${String(res.headers.etag)}`;
      const plain = await h.request({ url });
      byFastify.set(keyOf(plain), plain);
      const etag = plain.headers.etag as string;
      for (const headers of [
        {},
        { 'accept-encoding': 'br' },
        { 'accept-encoding': 'gzip, deflate' },
        { 'if-none-match': etag },
        { 'accept-encoding': 'br', 'if-none-match': `W/${etag}` },
      ]) {
        const label = `${url} ${JSON.stringify(headers)}`;
        const before = await h.early();
        const first = await h.request({ url, headers });
        // The first request of each variant and status goes through Fastify: its answer teaches the headers.
        if ((await h.early()) === before) byFastify.set(keyOf(first), first);
        const afterFirst = await h.early();
        const early = await h.request({ url, headers });
        const again = await h.request({ url, headers: { ...headers, 'x-request-id': 'client-chosen-id' } });
        expect(await h.early(), `${label}: the next two are early answers`).toBe(afterFirst + 2);
        const reference = byFastify.get(keyOf(early));
        expect(reference, `${label}: Fastify sent this variant before`).toBeDefined();
        expect(early.statusCode, label).toBe(headers['if-none-match' as keyof typeof headers] ? 304 : 200);
        expect(early.rawPayload.equals(reference!.rawPayload), label).toBe(true);
        expect(withoutPerRequest(early.headers), label).toEqual(withoutPerRequest(reference!.headers));
        expect(early.headers['x-request-id'], label).toMatch(/^[0-9a-f-]{36}$/);
        expect(early.headers['x-request-id'], label).not.toBe(reference!.headers['x-request-id']);
        expect(again.headers['x-request-id'], label).toBe('client-chosen-id');
      }
      expect(byFastify.size, url).toBeGreaterThanOrEqual(2);
    }
  });

  it('sends HEAD, other methods, requests with a body and negotiated pages through Fastify', async () => {
    await h.request({ url: GUIDE });
    await h.request({ url: '/problems/not-found', headers: { accept: 'application/json' } });
    const before = await h.early();
    expect((await h.request({ method: 'HEAD', url: GUIDE })).statusCode).toBe(200);
    expect(
      (
        await h.request({
          method: 'OPTIONS',
          url: GUIDE,
          headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
        })
      ).statusCode,
    ).toBe(204);
    expect((await h.request({ method: 'GET', url: GUIDE, payload: 'x', headers: { 'content-type': 'text/plain' } })).statusCode).toBe(200);
    // The problem pages depend on Accept, so the URL alone never finds them.
    const html = await h.request({ url: '/problems/not-found' });
    expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
    const json = await h.request({ url: '/problems/not-found', headers: { accept: 'application/json' } });
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(await h.early()).toBe(before);
    expect((await h.request({ url: GUIDE })).statusCode).toBe(200);
    expect(await h.early()).toBe(before + 1);
  });

  it('never answers an unknown target, an error or another spelling of a known one before Fastify', async () => {
    await h.request({ url: GUIDE });
    const before = await h.early();
    for (const url of [
      `${GUIDE}/`,
      `${GUIDE}?x=1`,
      '/api/v1/guides/no-such-guide',
      '/api/v1/guides/no-such-guide',
      '/api/v1/guides?limit=0',
      '/api/v1/guides?limit=0',
    ]) {
      expect((await h.request({ url })).statusCode, url).not.toBe(200);
    }
    expect(await h.early()).toBe(before);
  });

  it('remembers a bounded number of request targets (2 MB of them), forgetting the oldest', async () => {
    await h.request({ url: '/llms.txt?first' });
    let before = await h.early();
    await h.request({ url: '/llms.txt?first' });
    expect(await h.early()).toBe(before + 1);
    // 300 targets of 7,000 characters: 2.1 MB, more than is kept.
    const padding = 'p'.repeat(7000);
    for (let i = 0; i < 300; i += 1) expect((await h.request({ url: `/llms.txt?${i}=${padding}` })).statusCode).toBe(200);
    before = await h.early();
    await h.request({ url: '/llms.txt?first' });
    await h.request({ url: `/llms.txt?299=${padding}` });
    expect(await h.early()).toBe(before + 1);
  });

  it('logs an early answer as Fastify logs a request, and counts it in /metrics', async () => {
    const metric = async (): Promise<number> => {
      const text = (await h.request({ url: '/metrics' })).body;
      const line = text
        .split('\n')
        .find(
          (l) =>
            l.startsWith('http_requests_total{') &&
            l.includes('route="/api/v1/guides/:slug"') &&
            l.includes('status_code="200"') &&
            l.includes('method="GET"'),
        );
      return Number(line?.split(' ').at(-1) ?? 0);
    };
    const hits = async (): Promise<number> => {
      const text = (await h.request({ url: '/metrics' })).body;
      return Number(/^guides_cache_lookups_total\{result="hit"\} (\d+)$/m.exec(text)?.[1]);
    };
    await h.request({ url: GUIDE, headers: { 'x-request-id': 'by-fastify' } });
    const [countBefore, hitsBefore, earlyBefore] = [await metric(), await hits(), await h.early()];
    await h.request({ url: GUIDE, headers: { 'x-request-id': 'by-early-answer' } });
    expect(await h.early()).toBe(earlyBefore + 1);
    expect(await metric()).toBe(countBefore + 1);
    expect(await hits()).toBe(hitsBefore + 1);
    const [byFastify] = h.logs.filter((line) => line.requestId === 'by-fastify');
    const early = h.logs.filter((line) => line.requestId === 'by-early-answer');
    expect(early).toHaveLength(1);
    expect(Object.keys(early[0]!).sort()).toEqual(Object.keys(byFastify!).sort());
    expect(early[0]).toMatchObject({ level: 30, msg: 'request', method: 'GET', route: '/api/v1/guides/:slug', status: 200 });
    expect(typeof early[0]!.durationMs).toBe('number');
  });

  it('never answers content of an earlier version after an import', async () => {
    const t = await harness();
    try {
      const old = await t.request({ url: '/api/v1/product' });
      await t.request({ url: '/api/v1/product' });
      const sample = await loadSampleContent();
      await t.store.importContent({ ...sample, product: { ...sample.product, name: 'Renamed Guides' } });
      await t.app.refreshContentVersion();
      const fresh = await t.request({ url: '/api/v1/product' });
      expect(fresh.json<{ name: string }>().name).toBe('Renamed Guides');
      expect(fresh.headers.etag).not.toBe(old.headers.etag);
      const early = await t.request({ url: '/api/v1/product', headers: { 'if-none-match': old.headers.etag as string } });
      expect(early.statusCode).toBe(200);
      expect(early.body).toBe(fresh.body);
      // A removed guide is a 404 at once, not its cached page.
      await t.request({ url: GUIDE });
      await t.store.importContent({ ...sample, guides: sample.guides.filter((g) => `/api/v1/guides/${g.slug}` !== GUIDE) });
      await t.app.refreshContentVersion();
      expect((await t.request({ url: GUIDE })).statusCode).toBe(404);
    } finally {
      await t.close();
    }
  });
});

describe('early answers and the rate limit', () => {
  it('count each client, send its RateLimit, and leave the 429 to Fastify without counting twice', async () => {
    const h = await harness({ RATE_LIMIT_PER_MINUTE: '4', TRUST_PROXY: '127.0.0.1' });
    try {
      const remaining = (header: unknown): number => Number(/;r=(\d+);/.exec(String(header))?.[1]);
      const from = (client: string) => ({ url: GUIDE, headers: { 'x-forwarded-for': client } });
      // Another client's read first: a representation is kept from its second request (admission).
      await h.request(from('192.0.2.1'));
      const first = await h.request(from('203.0.113.7'));
      const reached = await h.early();
      const answers = [await h.request(from('203.0.113.7')), await h.request(from('203.0.113.7')), await h.request(from('203.0.113.7'))];
      expect(await h.early()).toBe(reached + 3);
      expect([first, ...answers].map((res) => remaining(res.headers.ratelimit))).toEqual([3, 2, 1, 0]);
      for (const res of answers) expect(res.headers['ratelimit-policy']).toBe('"per-ip";q=4;w=60');
      const limited = await h.request(from('203.0.113.7'));
      expect(await h.early()).toBe(reached + 3);
      expect(limited.statusCode).toBe(429);
      expect(limited.headers['retry-after']).toMatch(/^\d+$/);
      expect(remaining(limited.headers.ratelimit)).toBe(0);
      // Another client behind the same trusted proxy has its own budget, early answers included.
      const other = await h.request(from('198.51.100.9'));
      expect(other.statusCode).toBe(200);
      expect(remaining(other.headers.ratelimit)).toBe(3);
      const metrics = (await h.request({ url: '/metrics' })).body;
      expect(metrics).toMatch(/^guides_rate_limited_total 1$/m);
    } finally {
      await h.close();
    }
  });
});

describe('early answers on a real socket', () => {
  let h: Harness;
  let base: string;
  beforeAll(async () => {
    h = await harness();
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    const address = h.app.server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(() => h.close());

  const get = (
    url: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const req = httpRequest(`${base}${url}`, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      req.end();
    });

  it('sends the same answer on the wire, on a kept-alive connection too', async () => {
    // A representation is kept from its second request (admission): this is the first.
    await get(GUIDE, {});
    for (const headers of [{}, { 'accept-encoding': 'br' }] as Record<string, string>[]) {
      const byFastify = await get(GUIDE, headers);
      const before = await h.early();
      const early = await get(GUIDE, headers);
      const revalidated = await get(GUIDE, { ...headers, 'if-none-match': early.headers.etag as string });
      const revalidatedAgain = await get(GUIDE, { ...headers, 'if-none-match': early.headers.etag as string });
      expect(await h.early()).toBe(before + 2); // all but the first 304
      expect(early.status).toBe(200);
      expect(early.body.equals(byFastify.body)).toBe(true);
      expect(withoutPerRequest(early.headers)).toEqual(withoutPerRequest(byFastify.headers));
      expect(early.headers.date).toMatch(/GMT$/);
      expect(early.headers.connection).toBe(byFastify.headers.connection);
      expect(revalidatedAgain.status).toBe(304);
      expect(revalidatedAgain.body.length).toBe(0);
      expect(withoutPerRequest(revalidatedAgain.headers)).toEqual(withoutPerRequest(revalidated.headers));
    }
  });
});

describe('early answers while the server closes', () => {
  it('leave a cached target to Fastify once closing has begun, so its answer says Connection: close', async () => {
    // A store whose list pages wait for a gate: a request that is still in flight when close begins.
    let release = (): void => undefined;
    let listed = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const waiting = new Promise<void>((resolve) => (listed = resolve));
    const dir = makeTempDir('early-close-');
    const real = createSqliteGuideStore(path.join(dir, 'guides.db'));
    let holdLists = false;
    const store = new Proxy(real, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (name !== 'listPublishedGuides' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: unknown[]) => {
          if (holdLists) {
            listed();
            await gate;
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    }) as GuideStore;
    const t = await buildTestApp({ store });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const url = `http://127.0.0.1:${port}`;
    // Learned: the product is answered early from its second request on (while the server runs).
    for (let i = 0; i < 2; i += 1) expect((await fetch(`${url}/api/v1/product`)).status).toBe(200);

    holdLists = true;
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write('GET /api/v1/guides?limit=7 HTTP/1.1\r\nHost: a\r\n\r\n');
    await waiting;
    const closed = t.app.close();
    // The preClose hooks have run once close() has moved on to stop the listener.
    while (t.app.server.listening) await new Promise((resolve) => setImmediate(resolve));
    // Pipelined behind the request in flight, on a connection that stays open while it is.
    socket.write('GET /api/v1/product HTTP/1.1\r\nHost: a\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    await ended;
    await closed;
    await t.close();
    rmSync(dir, { recursive: true, force: true });

    const answers = received
      .split(/(?=HTTP\/1\.1 )/)
      .map((text) => ({ status: text.slice(9, 12), head: text.slice(0, text.indexOf('\r\n\r\n')).toLowerCase() }));
    expect(answers.map((a) => a.status)).toEqual(['200', '200']);
    // Fastify's answer to the product while closing: it tells the client to go, which an early
    // answer (the headers learned while the server ran) would not.
    expect(answers[1]!.head).toContain('connection: close');
    expect(answers[1]!.head).toContain('content-type: application/json');
  });
});

describe('early answers while content changes under a cursor', () => {
  it('answers a cursor page learned before an import from the new content', async () => {
    const h = await harness();
    try {
      const content = makeContent([
        makeGuide({ slug: 'first', publishedAt: '2026-01-03T00:00:00Z' }),
        makeGuide({ slug: 'second', publishedAt: '2026-01-02T00:00:00Z' }),
      ]);
      await h.importContent(content);
      const url = '/api/v1/guides?limit=1';
      const page = await h.request({ url });
      expect((await h.request({ url })).body).toBe(page.body);
      await h.importContent(makeContent([makeGuide({ slug: 'newest', publishedAt: '2026-01-04T00:00:00Z' }), ...content.guides]));
      expect((await h.request({ url })).json<{ items: { slug: string }[] }>().items.map((g) => g.slug)).toEqual(['newest']);
    } finally {
      await h.close();
    }
  });
});

describe('FAST_PATH=0: plain Fastify', () => {
  it('answers every request through Fastify, with the same status, headers and bytes as the fast path', async () => {
    // One cursor key for both, so that a list page's next link is the same bytes.
    const cursorSecret = { CURSOR_SECRET: 'same-key-for-both-apps-of-this-test' };
    const on = await harness(cursorSecret);
    const off = await harness({ ...cursorSecret, FAST_PATH: '0' });
    try {
      const etag = (await on.request({ url: GUIDE })).headers.etag as string;
      for (const url of ['/api/v1/product', '/api/v1/guides?limit=3', GUIDE, '/openapi.json']) {
        for (const headers of [{}, { 'accept-encoding': 'br' }, { 'if-none-match': etag }] as Record<string, string>[]) {
          // Three requests each: a miss, the one that keeps it, and a hit (early on one, Fastify on the other).
          for (let i = 0; i < 2; i += 1) {
            await on.request({ url, headers });
            await off.request({ url, headers });
          }
          const onEarly = await on.early();
          const fast = await on.request({ url, headers });
          const plain = await off.request({ url, headers });
          const label = `${url} ${JSON.stringify(headers)}`;
          expect(await on.early(), `${label}: answered early with the fast path`).toBe(onEarly + 1);
          expect(plain.statusCode, label).toBe(fast.statusCode);
          expect(withoutPerRequest(plain.headers), label).toEqual(withoutPerRequest(fast.headers));
          expect(plain.rawPayload.equals(fast.rawPayload), label).toBe(true);
        }
      }
      // Nothing was answered before Fastify with the switch off.
      expect(await off.early()).toBe(0);
    } finally {
      await on.close();
      await off.close();
    }
  });
});
