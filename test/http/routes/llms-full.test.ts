/**
 * /llms-full.txt: every published guide's Markdown, newest first, separated by `---` lines,
 * streamed page by page from the store, ETagged by content version; and `GET /`, the index.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuideStore } from '../../../src/store/guide-store.js';
import { createSqliteGuideStore } from '../../../src/store/sqlite/sqlite-guide-store.js';
import { buildTestApp, makeTempDir, TEST_BASE_URL } from '../../helpers/build-test-app.js';
import type { TestApp } from '../../helpers/build-test-app.js';
import { makeContent, makeGuide } from '../../helpers/guide-factory.js';
import path from 'node:path';

/** 120 published guides (more than one page of the store), some unpublished, some ending without a newline. */
function corpus(prefix: string) {
  const guides = Array.from({ length: 120 }, (_, i) =>
    makeGuide({
      slug: `${prefix}-${String(i).padStart(3, '0')}`,
      // Pairs share a publication time, so the order falls back to the slug across page boundaries too.
      publishedAt: new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 2) * 3_600_000).toISOString().replace('.000Z', 'Z'),
      markdown: i % 3 === 0 ? `# Guide ${i}\n\nNo final newline` : `# Guide ${i}\n\nBody ${i}.\n`,
    }),
  );
  return makeContent([
    ...guides,
    makeGuide({ slug: `${prefix}-hidden`, status: 'retained' }),
    makeGuide({ slug: `${prefix}-gone`, status: 'archived' }),
  ]);
}

describe('GET /llms-full.txt', () => {
  let t: TestApp;
  let listings: number[];
  beforeAll(async () => {
    listings = [];
    const dir = makeTempDir('llms-full-');
    const real = createSqliteGuideStore(path.join(dir, 'guides.db'));
    // Counts the store's list pages, to see that the file is read a page at a time.
    const store = new Proxy(real, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== 'function') return value;
        if (name !== 'listPublishedGuides') return value.bind(target);
        return (options: Parameters<GuideStore['listPublishedGuides']>[0]) => {
          listings.push(options.limit);
          return real.listPublishedGuides(options);
        };
      },
    });
    t = await buildTestApp({ store, content: corpus('g') });
  });
  afterAll(() => t.close());

  it("is every published guide's Markdown, newest first, separated by --- lines, read from the store a page at a time", async () => {
    const list: string[] = [];
    for (let url: string | undefined = '/api/v1/guides?limit=50'; url !== undefined;) {
      const page: { items: Array<{ slug: string }>; nextCursor?: string } = (await t.app.inject({ url })).json();
      list.push(...page.items.map((item) => item.slug));
      url = page.nextCursor === undefined ? undefined : `/api/v1/guides?limit=50&cursor=${page.nextCursor}`;
    }
    listings.length = 0;
    const res = await t.app.inject({ url: '/llms-full.txt' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(listings.length).toBe(3);
    expect(Math.max(...listings)).toBeLessThanOrEqual(50);
    expect(list).toHaveLength(120);
    expect(res.body.split('\n\n---\n\n')).toHaveLength(120);
    // Each guide as its .md URL answers it, ended by a blank line so that `---` is a thematic break.
    const pieces = await Promise.all(list.map(async (slug) => (await t.app.inject({ url: `/api/v1/guides/${slug}.md` })).body));
    expect(res.body).toBe(pieces.map((md) => `${md}${md.endsWith('\n') ? '\n' : '\n\n'}`).join('---\n\n'));
    expect(res.body).not.toContain('g-hidden');
    expect(res.body).not.toContain('g-gone');
  });

  it('has a strong ETag per coding, 304s without reading the store, HEAD, gzip and brotli, and a new ETag after an import', async () => {
    const live = await buildTestApp({ content: corpus('h') });
    try {
      const plain = await live.app.inject({ url: '/llms-full.txt' });
      expect(plain.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      expect(plain.headers['cache-control']).toMatch(/^public, max-age=\d+, stale-while-revalidate=\d+$/);
      expect(plain.headers.vary).toBe('Accept, Accept-Encoding');
      for (const coding of ['br', 'gzip'] as const) {
        const res = await live.app.inject({ url: '/llms-full.txt', headers: { 'accept-encoding': coding } });
        expect(res.headers['content-encoding']).toBe(coding);
        expect(res.headers.etag).toBe(`${(plain.headers.etag as string).slice(0, -1)}-${coding}"`);
        expect((coding === 'br' ? brotliDecompressSync(res.rawPayload) : gunzipSync(res.rawPayload)).toString('utf8')).toBe(plain.body);
        // Any coding's tag revalidates; the 304 names the coding asked for.
        const again = await live.app.inject({
          url: '/llms-full.txt',
          headers: { 'accept-encoding': coding, 'if-none-match': plain.headers.etag as string },
        });
        expect(again.statusCode).toBe(304);
        expect(again.body).toBe('');
        expect(again.headers.etag).toBe(res.headers.etag);
      }
      const head = await live.app.inject({ method: 'HEAD', url: '/llms-full.txt' });
      expect(head.statusCode).toBe(200);
      expect(head.body).toBe('');
      expect(head.headers.etag).toBe(plain.headers.etag);
      expect(head.headers['content-type']).toBe('text/markdown; charset=utf-8');

      await live.importContent(makeContent([makeGuide({ slug: 'only-one' })]));
      const after = await live.app.inject({ url: '/llms-full.txt', headers: { 'if-none-match': plain.headers.etag as string } });
      expect(after.statusCode).toBe(200);
      expect(after.headers.etag).not.toBe(plain.headers.etag);
      expect(after.body).toBe(`${(await live.app.inject({ url: '/api/v1/guides/only-one.md' })).body}\n`);
    } finally {
      await live.close();
    }
  });

  it('answers 503 when the store cannot be read, before any byte of the file', async () => {
    const broken = await buildTestApp({ content: corpus('b') });
    await broken.store.close();
    try {
      const res = await broken.app.inject({ url: '/llms-full.txt' });
      expect(res.statusCode).toBe(503);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    } finally {
      await broken.app.close();
    }
  });
});

describe('GET /', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('is the index: name, description, API version and links to everything an agent needs, all of which answer', async () => {
    const res = await t.app.inject({ url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = res.json<{ name: string; description: string; apiVersion: string; links: Record<string, string> }>();
    expect(body).toEqual({
      name: 'Restaurant Guides',
      description: 'Practical guides for running a restaurant, from food safety and allergens to menu costing, staffing and service.',
      apiVersion: 'v1',
      links: {
        product: `${TEST_BASE_URL}/api/v1/product`,
        guides: `${TEST_BASE_URL}/api/v1/guides`,
        resources: `${TEST_BASE_URL}/api/v1/resources`,
        openapi: `${TEST_BASE_URL}/openapi.json`,
        docs: `${TEST_BASE_URL}/docs`,
        mcp: `${TEST_BASE_URL}/mcp`,
        llmsTxt: `${TEST_BASE_URL}/llms.txt`,
        llmsFullTxt: `${TEST_BASE_URL}/llms-full.txt`,
      },
    });
    // The MCP endpoint is another helper's route; every other link answers here.
    for (const [name, href] of Object.entries(body.links)) {
      if (name === 'mcp') continue;
      const linked = await t.app.inject({ method: 'HEAD', url: href.replace(TEST_BASE_URL, '') });
      expect([200, 302], name).toContain(linked.statusCode);
    }
  });

  it('has a strong ETag, 304, HEAD, and a 400 for any query parameter', async () => {
    const first = await t.app.inject({ url: '/' });
    expect(first.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect((await t.app.inject({ url: '/', headers: { 'if-none-match': first.headers.etag as string } })).statusCode).toBe(304);
    const head = await t.app.inject({ method: 'HEAD', url: '/' });
    expect(head.statusCode).toBe(200);
    expect(head.headers.etag).toBe(first.headers.etag);
    expect((await t.app.inject({ url: '/?x=1' })).statusCode).toBe(400);
  });

  it('answers 503 before any content was imported', async () => {
    const empty = await buildTestApp({ content: 'none' });
    try {
      expect((await empty.app.inject({ url: '/' })).statusCode).toBe(503);
    } finally {
      await empty.close();
    }
  });
});
