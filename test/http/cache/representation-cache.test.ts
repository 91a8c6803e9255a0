/** HTTP caching through app.inject: validators, conditional requests, Cache-Control and Vary. */
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepresentationCache } from '../../../src/http/cache/representation-cache.js';
import { buildTestApp } from '../../helpers/build-test-app.js';
import type { TestApp } from '../../helpers/build-test-app.js';
import { makeContent, makeGuide } from '../../helpers/guide-factory.js';
import { loadSampleContent } from '../../helpers/sample-content.js';

const GUIDE = '/api/v1/guides/reduce-food-waste';
const STRONG_ETAG = /^"[A-Za-z0-9_-]{22}"$/;

describe('HTTP caching', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { CACHE_MAX_AGE: '120', CACHE_STALE_WHILE_REVALIDATE: '600' } });
  });
  afterAll(() => t.close());

  it('gives every cacheable 200 a strong ETag, the configured Cache-Control and Vary: Accept, Accept-Encoding', async () => {
    for (const url of ['/api/v1/product', '/api/v1/guides', '/api/v1/guides?q=menu', GUIDE, '/api/v1/resources', '/openapi.json']) {
      const res = await t.app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers.etag, url).toMatch(STRONG_ETAG);
      expect(res.headers['cache-control'], url).toBe('public, max-age=120, stale-while-revalidate=600');
      expect(res.headers.vary, url).toBe('Accept, Accept-Encoding');
    }
  });

  it('defaults to max-age=60 and stale-while-revalidate=300', async () => {
    const plain = await buildTestApp();
    try {
      expect((await plain.app.inject({ url: GUIDE })).headers['cache-control']).toBe('public, max-age=60, stale-while-revalidate=300');
    } finally {
      await plain.close();
    }
  });

  it('keeps up to RESPONSE_CACHE_MB of responses: none at 0, and the same bytes and tags either way', async () => {
    const metric = (text: string, name: string): number =>
      Number(
        text
          .split('\n')
          .find((line) => line.startsWith(`${name} `))
          ?.slice(name.length + 1),
      );
    const none = await buildTestApp({ env: { RESPONSE_CACHE_MB: '0' } });
    try {
      const cached = await t.app.inject({ url: GUIDE });
      for (let i = 0; i < 3; i += 1) {
        const res = await none.app.inject({ url: GUIDE });
        expect(res.statusCode).toBe(200);
        expect(res.headers.etag).toBe(cached.headers.etag);
        expect(res.body).toBe(cached.body);
      }
      const metrics = (await none.app.inject({ url: '/metrics' })).body;
      expect(metric(metrics, 'guides_cache_entries')).toBe(0);
      expect(metric(metrics, 'guides_cache_bytes')).toBe(0);
      expect(metrics).toMatch(/^guides_cache_lookups_total\{result="miss"\} [3-9]$/m);
      expect(metrics).not.toMatch(/^guides_cache_lookups_total\{result="hit"\} [1-9]/m);
      // The default keeps the guide from its second read.
      for (let i = 0; i < 3; i += 1) await t.app.inject({ url: GUIDE });
      expect(metric((await t.app.inject({ url: '/metrics' })).body, 'guides_cache_bytes')).toBeGreaterThan(1000);
    } finally {
      await none.close();
    }
  });

  it('sends Last-Modified on a guide: its updatedAt as an HTTP date', async () => {
    const res = await t.app.inject({ url: GUIDE });
    expect(res.json<{ updatedAt: string }>().updatedAt).toBe('2026-03-02T09:20:00Z');
    expect(res.headers['last-modified']).toBe('Mon, 02 Mar 2026 09:20:00 GMT');
  });

  it('answers If-None-Match with the current tag with a bodiless 304 that keeps the validators', async () => {
    const first = await t.app.inject({ url: GUIDE });
    const etag = first.headers.etag as string;
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await t.app.inject({ method, url: GUIDE, headers: { 'if-none-match': etag } });
      expect(res.statusCode, method).toBe(304);
      expect(res.body, method).toBe('');
      expect(res.headers.etag).toBe(etag);
      expect(res.headers['cache-control']).toBe('public, max-age=120, stale-while-revalidate=600');
      expect(res.headers.vary).toBe('Accept, Accept-Encoding');
      expect(res.headers['content-length'] ?? '0').toBe('0');
    }
  });

  it('matches a list, a weak copy of the tag, and *, and ignores other tags (RFC 9110 weak comparison)', async () => {
    const etag = (await t.app.inject({ url: GUIDE })).headers.etag as string;
    const status = async (ifNoneMatch: string): Promise<number> =>
      (await t.app.inject({ url: GUIDE, headers: { 'if-none-match': ifNoneMatch } })).statusCode;
    expect(await status(`"stale", ${etag}, "other"`)).toBe(304);
    expect(await status(`W/${etag}`)).toBe(304);
    expect(await status('*')).toBe(304);
    expect(await status('"stale"')).toBe(200);
    expect(await status(`"stale",W/"other"`)).toBe(200);
    expect(await status(etag.slice(0, -2) + '"')).toBe(200);
  });

  it('keeps the same ETag for the same content on a fresh instance, and changes it when the guide changes', async () => {
    const other = await buildTestApp();
    try {
      const a = (await t.app.inject({ url: GUIDE })).headers.etag;
      const b = (await other.app.inject({ url: GUIDE })).headers.etag;
      expect(b).toBe(a);
      const sample = await loadSampleContent();
      await other.importContent({
        ...sample,
        guides: sample.guides.map((g) => (g.slug === 'reduce-food-waste' ? { ...g, summary: `${g.summary} Revised.` } : g)),
      });
      const changed = await other.app.inject({ url: GUIDE, headers: { 'if-none-match': a as string } });
      expect(changed.statusCode).toBe(200);
      expect(changed.headers.etag).not.toBe(a);
    } finally {
      await other.close();
    }
  });

  it('never puts an ETag or Cache-Control: public on an error, and never turns one into a 304', async () => {
    const etag = (await t.app.inject({ url: GUIDE })).headers.etag as string;
    for (const url of ['/api/v1/guides/no-such-guide', '/nowhere', '/api/v1/guides?limit=0', '/api/v1/guides?cursor=forged']) {
      for (const ifNoneMatch of [undefined, '*', etag]) {
        const res = await t.app.inject({ url, headers: ifNoneMatch ? { 'if-none-match': ifNoneMatch } : {} });
        expect(res.statusCode, `${url} ${ifNoneMatch}`).toBeGreaterThanOrEqual(400);
        expect(res.headers.etag, url).toBeUndefined();
        expect(res.headers['last-modified'], url).toBeUndefined();
        expect(res.headers['cache-control'], url).toBe('no-store');
        expect(res.headers['content-type'], url).toBe('application/problem+json; charset=utf-8');
      }
    }
  });

  it('serves a list page with its Link header on the 304 as on the 200', async () => {
    const first = await t.app.inject({ url: '/api/v1/guides?limit=2' });
    expect(first.headers.link).toMatch(/^<.+>; rel="next"$/);
    const again = await t.app.inject({ url: '/api/v1/guides?limit=2', headers: { 'if-none-match': first.headers.etag as string } });
    expect(again.statusCode).toBe(304);
    expect(again.headers.link).toBe(first.headers.link);
  });

  it('drops cached representations when an import changes the content', async () => {
    const live = await buildTestApp({ content: makeContent([makeGuide({ slug: 'one' })]) });
    try {
      const before = await live.app.inject({ url: '/api/v1/guides/one' });
      await live.importContent(makeContent([makeGuide({ slug: 'one', title: 'Renamed' })]));
      const after = await live.app.inject({ url: '/api/v1/guides/one', headers: { 'if-none-match': before.headers.etag as string } });
      expect(after.statusCode).toBe(200);
      expect(after.json<{ title: string }>().title).toBe('Renamed');
    } finally {
      await live.close();
    }
  });
});

describe('the representation cache', () => {
  /** A real Fastify app with one cached route, whose renderings are counted. */
  async function cachedRoute(limits: { maxEntries: number; maxBytes: number; admitOnSecondMiss?: boolean }) {
    const cache = createRepresentationCache({ ...limits, cacheControl: 'public, max-age=60', currentVersion: () => 1 });
    const rendered: string[] = [];
    const app = Fastify();
    app.get('/things/:name', (request, reply) => {
      const { name } = request.params as { name: string };
      return cache.serve(request, reply, name, async () => {
        rendered.push(name);
        return { payload: name.repeat(100), contentType: 'text/plain; charset=utf-8' };
      });
    });
    await app.ready();
    const get = async (name: string): Promise<void> => {
      expect((await app.inject({ url: `/things/${name}` })).statusCode).toBe(200);
    };
    return { app, cache, rendered, get };
  }

  it('evicts the least recently used representation, a hit counting as a use', async () => {
    const { app, cache, rendered, get } = await cachedRoute({ maxEntries: 3, maxBytes: 1_000_000 });
    try {
      for (const name of ['a', 'b', 'c', 'a', 'd']) await get(name);
      // d evicted b (a was used after b); a and c are still there, b is rendered again.
      for (const name of ['a', 'c', 'd', 'b']) await get(name);
      expect(rendered).toEqual(['a', 'b', 'c', 'd', 'b']);
      expect(cache.size).toBe(3);
      expect(cache.stats).toMatchObject({ hits: 4, misses: 5 });
    } finally {
      await app.close();
    }
  });

  it('with admission, keeps a representation from its second miss, so one-off requests never displace kept ones', async () => {
    const { app, cache, rendered, get } = await cachedRoute({ maxEntries: 10, maxBytes: 1_000_000, admitOnSecondMiss: true });
    try {
      for (const name of ['a', 'a', 'a']) await get(name);
      // Rendered at the first miss (declined) and the second (kept); the third read is a hit.
      expect(rendered).toEqual(['a', 'a']);
      expect(cache.size).toBe(1);
      expect(cache.stats).toMatchObject({ hits: 1, misses: 2, declined: 1 });
      // A run of one-off reads is rendered and sent, and not kept: `a` stays.
      for (const name of ['b', 'c', 'd', 'e', 'a']) await get(name);
      expect(rendered).toEqual(['a', 'a', 'b', 'c', 'd', 'e']);
      expect(cache.size).toBe(1);
      // b's second read, within the window, is kept.
      for (const name of ['b', 'b']) await get(name);
      expect(rendered.at(-1)).toBe('b');
      expect(rendered).toHaveLength(7);
      expect(cache.size).toBe(2);
      expect(cache.stats).toMatchObject({ hits: 3, misses: 7, declined: 5 });
    } finally {
      await app.close();
    }
  });

  it("with admission, keeps hardly any of many one-off reads (its filter's false positives)", async () => {
    const { app, cache } = await cachedRoute({ maxEntries: 1000, maxBytes: 100_000_000, admitOnSecondMiss: true });
    try {
      const reads = 5000;
      for (let i = 0; i < reads; i += 1) expect((await app.inject({ url: `/things/search-${i}` })).statusCode).toBe(200);
      // About 0.4 % expected with both of its generations full; 5.5 % when its two bit positions
      // were not independent.
      expect(cache.size).toBeLessThan(reads * 0.01);
      expect(cache.stats.declined).toBe(reads - cache.size);
    } finally {
      await app.close();
    }
  });

  it('with admission, forgets a one-off read after two windows of maxEntries misses', async () => {
    const { app, cache, rendered, get } = await cachedRoute({ maxEntries: 2, maxBytes: 1_000_000, admitOnSecondMiss: true });
    try {
      for (const name of ['x', 'y1', 'y2', 'y3', 'y4', 'x']) await get(name);
      // x's first read was forgotten: its second is declined again, and nothing is kept.
      expect(rendered).toEqual(['x', 'y1', 'y2', 'y3', 'y4', 'x']);
      expect(cache.size).toBe(0);
      await get('x');
      expect(cache.size).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('evicts by bytes too, oldest first, and keeps its byte count exact', async () => {
    // Each body is 100 bytes: room for two.
    const { app, cache, rendered, get } = await cachedRoute({ maxEntries: 100, maxBytes: 250 });
    try {
      for (const name of ['a', 'b', 'c', 'b', 'a']) await get(name);
      expect(rendered).toEqual(['a', 'b', 'c', 'a']);
      expect(cache.size).toBe(2);
      expect(cache.bytes).toBe(200);
      cache.clear();
      expect(cache.bytes).toBe(0);
      await get('b');
      expect(rendered.at(-1)).toBe('b');
    } finally {
      await app.close();
    }
  });
});
