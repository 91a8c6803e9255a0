/**
 * Per-client rate limits through app.inject (in-process counters) and through real Redis: the
 * shared server with a unique key prefix, and a private redis-server killed mid-test.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clientKey } from '../../../src/http/plugins/rate-limit-counters.js';
import { buildTestApp, injectThroughListener, TEST_BASE_URL } from '../../helpers/build-test-app.js';
import type { TestApp } from '../../helpers/build-test-app.js';
import {
  requireRedisServerBinary,
  requireSharedRedis,
  SHARED_REDIS_URL,
  startPrivateRedis,
  uniqueKeyPrefix,
} from '../../helpers/redis-server.js';
import type { PrivateRedis } from '../../helpers/redis-server.js';

const RATE_LIMIT = /^"per-ip";r=(\d+);t=(\d+)$/;

/** Windows are aligned to the clock minute; start a budget test only when its window has time left. */
async function awayFromWindowEnd(marginMs = 5000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

function remaining(header: unknown): number {
  const match = RATE_LIMIT.exec(String(header));
  if (!match) throw new Error(`not a RateLimit field: ${String(header)}`);
  return Number(match[1]);
}

const apps: TestApp[] = [];
async function app(env: Record<string, string>): Promise<TestApp> {
  const t = await buildTestApp({ env });
  apps.push(t);
  return t;
}
afterEach(async () => {
  for (const t of apps.splice(0)) await t.close();
});

describe('clientKey', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:0db8:0000:0000:abcd::1', '2001:db8:0:0::/64'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['::1', '0:0:0:0::/64'],
  ])('%s is counted as %s', (ip, key) => {
    expect(clientKey(ip)).toBe(key);
  });
});

describe('rate limits, in-process', () => {
  it('counts down in RateLimit, then answers 429 rate-limited with Retry-After, CORS and no ETag', async () => {
    const t = await app({ RATE_LIMIT_PER_MINUTE: '3' });
    await awayFromWindowEnd();
    const seen: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      const res = await t.app.inject({ url: '/api/v1/guides/reduce-food-waste' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-policy']).toBe('"per-ip";q=3;w=60');
      seen.push(remaining(res.headers.ratelimit));
    }
    expect(seen).toEqual([2, 1, 0]);
    const limited = await t.app.inject({
      url: '/api/v1/guides/reduce-food-waste',
      headers: { origin: 'https://app.example', 'if-none-match': '*' },
    });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(limited.json()).toEqual({
      type: `${TEST_BASE_URL}/problems/rate-limited`,
      title: 'Too many requests',
      status: 429,
      detail: 'This client sent more than 3 requests this minute. Retry after the number of seconds in Retry-After.',
    });
    const [, left, reset] = RATE_LIMIT.exec(String(limited.headers.ratelimit))!;
    expect(left).toBe('0');
    expect(limited.headers['retry-after']).toBe(reset);
    expect(Number(reset)).toBeGreaterThanOrEqual(1);
    expect(Number(reset)).toBeLessThanOrEqual(60);
    expect(limited.headers['ratelimit-policy']).toBe('"per-ip";q=3;w=60');
    expect(limited.headers['access-control-allow-origin']).toBe('*');
    expect(limited.headers['access-control-expose-headers']).toMatch(/RateLimit/);
    expect(limited.headers.etag).toBeUndefined();
    expect(limited.headers['cache-control']).toBe('no-store');
    expect(limited.headers['x-request-id']).toBeDefined();
  });

  it('limits and labels unknown routes, errors and HEAD too', async () => {
    const t = await app({ RATE_LIMIT_PER_MINUTE: '2' });
    await awayFromWindowEnd();
    const notFound = await t.app.inject({ url: '/no/such/route' });
    expect(notFound.statusCode).toBe(404);
    expect(remaining(notFound.headers.ratelimit)).toBe(1);
    const invalid = await t.app.inject({ method: 'HEAD', url: '/api/v1/guides?limit=0' });
    expect(invalid.statusCode).toBe(400);
    expect(remaining(invalid.headers.ratelimit)).toBe(0);
    const limited = await t.app.inject({ url: '/no/such/route' });
    expect(limited.statusCode).toBe(429);
    expect(limited.json<{ type: string }>().type).toBe(`${TEST_BASE_URL}/problems/rate-limited`);
  });

  it('never limits the health probes and /metrics', async () => {
    const t = await app({ RATE_LIMIT_PER_MINUTE: '1' });
    await awayFromWindowEnd();
    await t.app.inject({ url: '/api/v1/product' });
    expect((await t.app.inject({ url: '/api/v1/product' })).statusCode).toBe(429);
    for (const url of ['/healthz', '/readyz', '/metrics', '/healthz']) {
      const res = await t.app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers.ratelimit, url).toBeUndefined();
    }
  });

  it('never counts nor refuses a CORS preflight, so browsers can always read the 429 itself', async () => {
    const t = await app({ RATE_LIMIT_PER_MINUTE: '1' });
    await awayFromWindowEnd();
    const preflight = () =>
      t.app.inject({
        method: 'OPTIONS',
        url: '/api/v1/product',
        headers: {
          origin: 'https://app.example',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'if-none-match',
        },
      });
    expect((await preflight()).statusCode).toBe(204);
    expect((await t.app.inject({ url: '/api/v1/product' })).statusCode).toBe(200);
    const again = await preflight();
    expect(again.statusCode).toBe(204);
    expect(again.headers['access-control-allow-headers']).toBe('if-none-match');
    expect(again.headers['access-control-max-age']).toBe('86400');
    expect((await t.app.inject({ url: '/api/v1/product', headers: { origin: 'https://app.example' } })).statusCode).toBe(429);
  });

  it('gives each client address its own budget, and one budget to an IPv6 /64', async () => {
    const t = await app({ RATE_LIMIT_PER_MINUTE: '1' });
    await awayFromWindowEnd();
    const status = async (remoteAddress: string): Promise<number> =>
      (await t.app.inject({ url: '/api/v1/product', remoteAddress })).statusCode;
    expect(await status('198.51.100.1')).toBe(200);
    expect(await status('198.51.100.2')).toBe(200);
    expect(await status('198.51.100.1')).toBe(429);
    expect(await status('2001:db8::1')).toBe(200);
    expect(await status('2001:db8::ffff')).toBe(429);
    expect(await status('2001:db8:0:1::1')).toBe(200);
  });

  it('ignores X-Forwarded-For from a peer that TRUST_PROXY does not name, so rotating it does not reset the budget', async () => {
    for (const trust of ['off', '10.0.0.0/8']) {
      const t = await app({ RATE_LIMIT_PER_MINUTE: '2', TRUST_PROXY: trust });
      await awayFromWindowEnd();
      const statuses: number[] = [];
      for (let i = 1; i <= 4; i += 1) {
        const res = await t.app.inject({
          url: '/api/v1/product',
          remoteAddress: '198.51.100.9',
          headers: { 'x-forwarded-for': `203.0.113.${i}` },
        });
        statuses.push(res.statusCode);
      }
      expect(statuses, trust).toEqual([200, 200, 429, 429]);
    }
  });

  it('counts the client named by X-Forwarded-For when the peer is a trusted proxy, and not what the client wrote in it', async () => {
    const t = await app({ RATE_LIMIT_PER_MINUTE: '1', TRUST_PROXY: '10.0.0.0/8' });
    await awayFromWindowEnd();
    const via = (xff: string) => t.app.inject({ url: '/api/v1/product', remoteAddress: '10.1.2.3', headers: { 'x-forwarded-for': xff } });
    expect((await via('203.0.113.1')).statusCode).toBe(200);
    expect((await via('203.0.113.2')).statusCode).toBe(200);
    expect((await via('203.0.113.1')).statusCode).toBe(429);
    // The client prepended a fake address; the proxy appended the real one, which is what counts.
    expect((await via('198.51.100.77, 203.0.113.2')).statusCode).toBe(429);
    // A chain of trusted proxies is walked to the first untrusted address.
    expect((await via('203.0.113.3, 10.9.9.9')).statusCode).toBe(200);
    expect((await via('203.0.113.3')).statusCode).toBe(429);
  });

  it('turns off with RATE_LIMIT_PER_MINUTE=0', async () => {
    const t = await app({ RATE_LIMIT_PER_MINUTE: '0' });
    for (let i = 0; i < 5; i += 1) {
      const res = await t.app.inject({ url: '/api/v1/product' });
      expect(res.statusCode).toBe(200);
      expect(res.headers.ratelimit).toBeUndefined();
    }
  });
});

const hasSharedRedis = await requireSharedRedis('rate limits shared through Redis');
describe.runIf(hasSharedRedis)('rate limits shared through the real Redis', () => {
  let redis: Redis;
  const prefix = uniqueKeyPrefix();
  beforeAll(() => {
    redis = new Redis(SHARED_REDIS_URL);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('shares one budget between two instances and answers 429 with the same headers', async () => {
    const env = { RATE_LIMIT_PER_MINUTE: '3', REDIS_URL: SHARED_REDIS_URL, RATE_LIMIT_KEY_PREFIX: prefix };
    const a = await app(env);
    const b = await app(env);
    await awayFromWindowEnd();
    const remote = { remoteAddress: '198.51.100.50' };
    expect(remaining((await a.app.inject({ url: '/api/v1/product', ...remote })).headers.ratelimit)).toBe(2);
    expect(remaining((await b.app.inject({ url: '/api/v1/guides', ...remote })).headers.ratelimit)).toBe(1);
    expect(remaining((await a.app.inject({ url: '/nowhere', ...remote })).headers.ratelimit)).toBe(0);
    const limited = await b.app.inject({ url: '/api/v1/product', ...remote });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe(RATE_LIMIT.exec(String(limited.headers.ratelimit))![2]);
    expect(limited.json<{ type: string }>().type).toBe(`${TEST_BASE_URL}/problems/rate-limited`);
    const keys = await redis.keys(`${prefix}*`);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\d+:198\\.51\\.100\\.50$`));
    expect(await redis.get(keys[0]!)).toBe('4');
    // The key expires with its window instead of piling up.
    expect(await redis.pttl(keys[0]!)).toBeGreaterThan(0);
    expect(await redis.pttl(keys[0]!)).toBeLessThanOrEqual(61_000);
  });

  it('counts requests answered before Fastify (cache hits) in the shared budget too', async () => {
    const keyPrefix = `${prefix}early:`;
    const env = { RATE_LIMIT_PER_MINUTE: '4', REDIS_URL: SHARED_REDIS_URL, RATE_LIMIT_KEY_PREFIX: keyPrefix };
    const a = await app(env);
    const b = await app(env);
    await awayFromWindowEnd();
    const remote = { remoteAddress: '198.51.100.51' };
    // Into the server's request listener, where the fast path answers cache hits before Fastify.
    const [viaA, viaB] = [injectThroughListener(a.app), injectThroughListener(b.app)];
    const early = async (): Promise<number> =>
      Number(/^guides_early_answers_total (\d+)$/m.exec((await a.app.inject({ url: '/metrics' })).body)?.[1]);
    // Another client's request first: a representation is kept from its second request (admission).
    await viaA({ url: '/api/v1/product', remoteAddress: '198.51.100.52' });
    const before = await early();
    const left: number[] = [];
    for (let i = 0; i < 3; i += 1) left.push(remaining((await viaA({ url: '/api/v1/product', ...remote })).headers.ratelimit));
    expect(await early()).toBe(before + 2);
    left.push(remaining((await viaB({ url: '/api/v1/product', ...remote })).headers.ratelimit));
    expect(left).toEqual([3, 2, 1, 0]);
    const limited = await viaA({ url: '/api/v1/product', ...remote });
    expect(limited.statusCode).toBe(429);
    expect(await early()).toBe(before + 2);
    // One key for each client: the one that warmed the cache, and the one counted here.
    const keys = (await redis.keys(`${keyPrefix}*`)).filter((key) => key.includes('198.51.100.51'));
    expect(keys).toHaveLength(1);
    expect(await redis.keys(`${keyPrefix}*`)).toHaveLength(2);
    // Five requests, each counted once: the early answer that found the budget spent handed its count to the 429.
    expect(await redis.get(keys[0]!)).toBe('5');
  });
});

const hasRedisServer = await requireRedisServerBinary('fail-open when Redis dies');
describe.runIf(hasRedisServer)('rate limits when Redis goes away', () => {
  let server: PrivateRedis;
  beforeAll(async () => {
    server = await startPrivateRedis();
  });
  afterAll(() => server.kill());

  it('keeps serving (counting in-process) when Redis is killed mid-test, counts the failures, and goes back to Redis', async () => {
    const t = await app({ RATE_LIMIT_PER_MINUTE: '1000', REDIS_URL: server.url, RATE_LIMIT_KEY_PREFIX: 'x:' });
    await awayFromWindowEnd(8000);
    const probe = new Redis(server.url, { lazyConnect: true, retryStrategy: () => null });
    await probe.connect();
    expect((await t.app.inject({ url: '/api/v1/product' })).statusCode).toBe(200);
    expect(await probe.keys('x:*')).toHaveLength(1);
    probe.disconnect();

    await server.kill();
    const started = Date.now();
    for (let i = 0; i < 20; i += 1) {
      const res = await t.app.inject({ url: '/api/v1/guides/reduce-food-waste' });
      expect(res.statusCode).toBe(200);
      expect(res.headers.ratelimit).toMatch(RATE_LIMIT);
    }
    // Twenty requests, not twenty times ioredis' 10 s offline wait (a loose bound; it is ~1 ms each).
    expect(Date.now() - started).toBeLessThan(5000);
    const metrics = (await t.app.inject({ url: '/metrics' })).body;
    const errors = /^guides_rate_limit_store_errors_total (\d+)$/m.exec(metrics);
    expect(Number(errors?.[1])).toBeGreaterThan(0);

    await server.restart();
    const back = new Redis(server.url);
    try {
      let counted = 0;
      for (let i = 0; i < 100 && counted === 0; i += 1) {
        await t.app.inject({ url: '/api/v1/product' });
        counted = (await back.keys('x:*')).length;
        if (counted === 0) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(counted).toBe(1);
    } finally {
      back.disconnect();
    }
  });
});
