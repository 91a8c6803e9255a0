/** Compression negotiation through app.inject: gzip and brotli above 1 KB, one coding, one tag per coding. */
import { brotliCompressSync, brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brotliWindowBits, negotiateContentCoding, ownBytes } from '../../../src/representation/representation.js';
import { buildTestApp } from '../../helpers/build-test-app.js';
import type { TestApp } from '../../helpers/build-test-app.js';
import { makeContent, makeGuide } from '../../helpers/guide-factory.js';

const GUIDE = '/api/v1/guides/reduce-food-waste';

function decode(coding: string | undefined, raw: Buffer): string {
  if (coding === 'gzip') return gunzipSync(raw).toString('utf8');
  if (coding === 'br') return brotliDecompressSync(raw).toString('utf8');
  return raw.toString('utf8');
}

describe('negotiateContentCoding', () => {
  it.each([
    ['gzip, deflate, br', 'br'],
    ['gzip', 'gzip'],
    ['x-gzip', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['gzip;q=1.0, br;q=0.5', 'gzip'],
    ['BR', 'br'],
    ['*', 'br'],
    ['*;q=0, gzip;q=0.1', 'gzip'],
    ['identity', undefined],
    ['gzip;q=0', undefined],
    ['deflate, zstd', undefined],
    ['gzip;q=abc', undefined],
    ['', undefined],
  ])('%j → %s', (header, expected) => {
    expect(negotiateContentCoding(header)).toBe(expected);
  });
});

describe('brotliWindowBits', () => {
  it("fits the window to the body, between brotli's smallest and its default", () => {
    expect([100, 1008, 1009, 6000, 16 * 1024, 1.6e6, 64e6].map(brotliWindowBits)).toEqual([10, 10, 11, 13, 15, 21, 22]);
  });
});

describe('ownBytes', () => {
  it('copies a view of a larger allocation to memory of its exact size, and returns bytes that own theirs as they are', () => {
    // zlib's output is a slice of its 16 KB output chunk; small Buffers are slices of Node's pool.
    for (const view of [brotliCompressSync(Buffer.from('kitchen '.repeat(500))), Buffer.from('a small body')]) {
      expect(view.buffer.byteLength).toBeGreaterThan(view.length);
      const own = ownBytes(view);
      expect(own.equals(view)).toBe(true);
      expect([own.byteOffset, own.buffer.byteLength]).toEqual([0, view.length]);
      expect(ownBytes(own)).toBe(own);
    }
  });
});

describe('response compression', () => {
  let t: TestApp;
  let identity: { body: string; etag: string };
  beforeAll(async () => {
    t = await buildTestApp();
    const res = await t.app.inject({ url: GUIDE });
    identity = { body: res.body, etag: res.headers.etag as string };
  });
  afterAll(() => t.close());

  it('sends the uncompressed body when the client accepts no coding', async () => {
    for (const headers of [{}, { 'accept-encoding': 'identity' }, { 'accept-encoding': 'gzip;q=0, br;q=0' }]) {
      const res = await t.app.inject({ url: GUIDE, headers });
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.body).toBe(identity.body);
      expect(res.headers.etag).toBe(identity.etag);
    }
    expect(Buffer.byteLength(identity.body)).toBeGreaterThan(1024);
  });

  it.each([
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, deflate, br', 'br'],
  ])('compresses a guide once for Accept-Encoding: %s', async (accept, coding) => {
    const res = await t.app.inject({ url: GUIDE, headers: { 'accept-encoding': accept } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-encoding']).toBe(coding);
    expect(res.headers.vary).toBe('Accept, Accept-Encoding');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(res.headers['content-length'])).toBe(res.rawPayload.length);
    expect(res.rawPayload.length).toBeLessThan(Buffer.byteLength(identity.body));
    // Decoding once gives the identity JSON: the body was not compressed twice.
    expect(decode(coding, res.rawPayload)).toBe(identity.body);
    // Each coding is its own representation with its own strong tag.
    expect(res.headers.etag).toBe(`${identity.etag.slice(0, -1)}-${coding}"`);
  });

  it('serves the same compressed bytes again (compressed once per representation)', async () => {
    const a = await t.app.inject({ url: GUIDE, headers: { 'accept-encoding': 'br' } });
    const b = await t.app.inject({ url: GUIDE, headers: { 'accept-encoding': 'br' } });
    expect(b.rawPayload.equals(a.rawPayload)).toBe(true);
    const metrics = (await t.app.inject({ url: '/metrics' })).body;
    const compressions = metrics.split('\n').filter((line) => line.startsWith('guides_compressions_total{'));
    // One compression per coding and representation so far, however many requests.
    expect(compressions).toContain('guides_compressions_total{coding="br"} 1');
  });

  it("answers If-None-Match with any coding's tag of the current content with a 304 carrying this request's tag", async () => {
    const gzipTag = `${identity.etag.slice(0, -1)}-gzip"`;
    const asGzip = await t.app.inject({ url: GUIDE, headers: { 'accept-encoding': 'gzip', 'if-none-match': identity.etag } });
    expect(asGzip.statusCode).toBe(304);
    expect(asGzip.headers.etag).toBe(gzipTag);
    expect(asGzip.headers['content-encoding']).toBeUndefined();
    expect(asGzip.rawPayload.length).toBe(0);
    const asIdentity = await t.app.inject({ url: GUIDE, headers: { 'if-none-match': `"x", W/${gzipTag}` } });
    expect(asIdentity.statusCode).toBe(304);
    expect(asIdentity.headers.etag).toBe(identity.etag);
    const stale = await t.app.inject({ url: GUIDE, headers: { 'accept-encoding': 'br', 'if-none-match': '"nope-br"' } });
    expect(stale.statusCode).toBe(200);
  });

  it('sends the compressed headers on HEAD too', async () => {
    const get = await t.app.inject({ url: GUIDE, headers: { 'accept-encoding': 'gzip' } });
    const head = await t.app.inject({ method: 'HEAD', url: GUIDE, headers: { 'accept-encoding': 'gzip' } });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-encoding']).toBe('gzip');
    expect(head.headers.etag).toBe(get.headers.etag);
    expect(head.rawPayload.length).toBe(0);
  });

  it('leaves bodies under 1 KB uncompressed', async () => {
    const tiny = await buildTestApp({ content: makeContent([makeGuide({ slug: 'tiny', markdown: '# Tiny\n\nShort.\n' })]) });
    try {
      const res = await tiny.app.inject({ url: '/api/v1/guides/tiny', headers: { 'accept-encoding': 'gzip, br' } });
      expect(Buffer.byteLength(res.body)).toBeLessThan(1024);
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
      expect(res.json<{ slug: string }>().slug).toBe('tiny');
    } finally {
      await tiny.close();
    }
  });

  it('compresses a /docs asset once per coding and file version, and serves the kept bytes after', async () => {
    const url = '/docs/static/swagger-ui-bundle.js';
    const plain = await t.app.inject({ url });
    expect(plain.statusCode).toBe(200);
    for (const coding of ['br', 'gzip']) {
      const [a, b] = await Promise.all([1, 2].map(() => t.app.inject({ url, headers: { 'accept-encoding': coding } })));
      const c = await t.app.inject({ url, headers: { 'accept-encoding': coding } });
      for (const res of [a!, b!, c]) {
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-encoding']).toBe(coding);
        expect(res.headers['accept-ranges']).toBeUndefined();
        expect(Number(res.headers['content-length'])).toBe(res.rawPayload.length);
        expect(res.rawPayload.equals(a!.rawPayload)).toBe(true);
      }
      expect(decode(coding, c.rawPayload)).toBe(plain.body);
      expect(c.rawPayload.length).toBeLessThan(plain.rawPayload.length / 3);
    }
  });

  it('compresses misses of every size, small ones in place and large ones on the thread pool, to bytes that decode to the page', async () => {
    // 60 guides with long summaries: a page of 50 is well over 16 KB, a page of 3 a few KB.
    const summary = 'A long summary about stock rotation, prep lists and walk-in order. '.repeat(6);
    const big = await buildTestApp({
      content: makeContent(Array.from({ length: 60 }, (_, i) => makeGuide({ slug: `guide-${i}`, summary }))),
    });
    try {
      for (const limit of [3, 50]) {
        const plain = await big.app.inject({ url: `/api/v1/guides?limit=${limit}` });
        for (const coding of ['br', 'gzip']) {
          // Each request is a miss of its own coding (the representation is not kept on its first miss).
          const res = await big.app.inject({ url: `/api/v1/guides?limit=${limit}`, headers: { 'accept-encoding': coding } });
          expect(res.headers['content-encoding'], `limit ${limit}, ${coding}`).toBe(coding);
          expect(decode(coding, res.rawPayload)).toBe(plain.body);
        }
        expect(Buffer.byteLength(plain.body) > 16 * 1024, `limit ${limit}`).toBe(limit === 50);
      }
    } finally {
      await big.close();
    }
  });

  it('compresses large responses outside the cache once, too (/metrics)', async () => {
    const plain = await t.app.inject({ url: '/metrics' });
    expect(Buffer.byteLength(plain.body)).toBeGreaterThan(1024);
    const res = await t.app.inject({ url: '/metrics', headers: { 'accept-encoding': 'gzip' } });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(decode('gzip', res.rawPayload)).toMatch(/^# HELP /);
    const small = await t.app.inject({ url: '/healthz', headers: { 'accept-encoding': 'gzip' } });
    expect(small.headers['content-encoding']).toBeUndefined();
  });
});
