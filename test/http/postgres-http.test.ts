/**
 * The HTTP API on PostgreSQL. Two apps serve the sample content, one per backend, with the same
 * CURSOR_SECRET: everything but search ranking must be byte-identical between them (bodies, ETags,
 * cursors, 404s); search must find the same guides and survive hostile text; a lost database
 * answers 503. The judged queries run on both backends in test/search/relevance.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createPostgresGuideStore } from '../../src/store/postgres/postgres-guide-store.js';
import { buildTestApp, TEST_BASE_URL } from '../helpers/build-test-app.js';
import type { TestApp } from '../helpers/build-test-app.js';
import { createTestDatabase, requirePostgres } from '../helpers/postgres-database.js';
import type { TestDatabase } from '../helpers/postgres-database.js';
import { loadSampleContent } from '../helpers/sample-content.js';
import { HOSTILE_QUERIES } from '../store/guide-store.contract.js';

const hasPostgres = await requirePostgres('the HTTP tests on PostgreSQL');

interface ListBody {
  items: { slug: string; snippet?: string }[];
  nextCursor?: string;
}

// No search shedding on event-loop lag: two apps share this process on a busy test machine.
const env = { CURSOR_SECRET: 'a shared secret for both backends in this test file' };

describe.runIf(hasPostgres)('the HTTP API on PostgreSQL', () => {
  let database: TestDatabase;
  let pgApp: TestApp;
  let sqliteApp: TestApp;

  beforeAll(async () => {
    database = await createTestDatabase();
    pgApp = await buildTestApp({ env, store: createPostgresGuideStore({ connectionString: database.url, poolSize: 4 }) });
    sqliteApp = await buildTestApp({ env });
  });

  afterAll(async () => {
    await pgApp?.close();
    await sqliteApp?.close();
    await database?.drop();
  });

  const get = (t: TestApp, url: string) => t.app.inject({ method: 'GET', url });

  async function walk(t: TestApp, firstUrl: string): Promise<{ slugs: string[]; bodies: string[] }> {
    const slugs: string[] = [];
    const bodies: string[] = [];
    let url: string | undefined = firstUrl;
    while (url !== undefined && bodies.length < 200) {
      const res = await get(t, url);
      expect(res.statusCode, url).toBe(200);
      bodies.push(res.body);
      const body = res.json<ListBody>();
      slugs.push(...body.items.map((item) => item.slug));
      const link = res.headers.link as string | undefined;
      expect(link === undefined).toBe(body.nextCursor === undefined);
      url = link === undefined ? undefined : link.slice(1, link.indexOf('>')).replace(TEST_BASE_URL, '');
    }
    return { slugs, bodies };
  }

  it('serves the same bytes and ETags as SQLite for everything but search', async () => {
    const sample = await loadSampleContent();
    const urls = [
      '/api/v1/product',
      '/api/v1/resources',
      '/api/v1/guides',
      '/api/v1/guides?limit=5',
      '/api/v1/guides?limit=50',
      ...sample.guides.map((guide) => `/api/v1/guides/${guide.slug}`),
      '/api/v1/guides/not-a-guide',
      '/api/v1/guides/Bad--Slug',
      '/api/v1/guides/',
      '/llms.txt',
    ];
    for (const url of urls) {
      const [a, b] = await Promise.all([get(pgApp, url), get(sqliteApp, url)]);
      expect(a.statusCode, url).toBe(b.statusCode);
      expect(a.headers['content-type'], url).toBe(b.headers['content-type']);
      expect(a.headers.etag, url).toBe(b.headers.etag);
      expect(a.headers.link, url).toBe(b.headers.link);
      expect(a.body, url).toBe(b.body);
    }
  });

  it('walks the list through cursors, page by page identical to SQLite, each published guide once', async () => {
    const sample = await loadSampleContent();
    const published = sample.guides
      .filter((g) => g.status === 'published')
      .map((g) => g.slug)
      .sort();
    for (const limit of [1, 4, 7]) {
      const [a, b] = await Promise.all([walk(pgApp, `/api/v1/guides?limit=${limit}`), walk(sqliteApp, `/api/v1/guides?limit=${limit}`)]);
      expect(a.bodies).toEqual(b.bodies);
      expect([...a.slugs].sort()).toEqual(published);
    }
  });

  it('answers the same 404 for retained, archived, unknown and malformed slugs', async () => {
    const urls = [
      '/api/v1/guides/loyalty-program-design',
      '/api/v1/guides/contactless-service-during-covid',
      '/api/v1/guides/no-such-guide',
      '/api/v1/guides/UPPER',
      '/api/v1/guides/a--b',
      `/api/v1/guides/${'a'.repeat(101)}`,
      '/api/v1/guides/%E2%28',
      '/api/v1/guides/',
    ];
    const responses = await Promise.all(urls.map((url) => get(pgApp, url)));
    for (const res of responses) {
      expect(res.statusCode).toBe(404);
      expect(res.headers.etag).toBeUndefined();
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.body).toBe(responses[0]!.body);
    }
  });

  it('serves the same Markdown as SQLite: .md twins, negotiated guides, llms-full.txt, and the one 404 whatever the Accept', async () => {
    const sample = await loadSampleContent();
    const markdown = { accept: 'text/markdown' };
    for (const guide of sample.guides.filter((g) => g.status === 'published')) {
      const [a, b, negotiated] = await Promise.all([
        get(pgApp, `/api/v1/guides/${guide.slug}.md`),
        get(sqliteApp, `/api/v1/guides/${guide.slug}.md`),
        pgApp.app.inject({ url: `/api/v1/guides/${guide.slug}`, headers: markdown }),
      ]);
      expect(a.statusCode, guide.slug).toBe(200);
      expect(a.headers['content-type']).toBe('text/markdown; charset=utf-8');
      expect(a.body.endsWith(guide.markdown), guide.slug).toBe(true);
      for (const name of ['etag', 'last-modified', 'link', 'x-markdown-tokens'])
        expect(a.headers[name], `${guide.slug} ${name}`).toBe(b.headers[name]);
      expect(a.body).toBe(b.body);
      expect(negotiated.body).toBe(a.body);
      expect(negotiated.headers.etag).toBe(a.headers.etag);
    }
    const [fullPg, fullSqlite] = await Promise.all([get(pgApp, '/llms-full.txt'), get(sqliteApp, '/llms-full.txt')]);
    expect(fullPg.statusCode).toBe(200);
    expect(fullPg.body).toBe(fullSqlite.body);
    const notFound = (await get(pgApp, '/api/v1/guides/no-such-guide')).body;
    for (const url of [
      '/api/v1/guides/loyalty-program-design.md',
      '/api/v1/guides/contactless-service-during-covid',
      '/api/v1/guides/no-such-guide.md',
      '/api/v1/guides/UPPER.md',
    ]) {
      const res = await pgApp.app.inject({ url, headers: markdown });
      expect(res.statusCode, url).toBe(404);
      expect(res.body, url).toBe(notFound);
    }
  });

  it('finds the same guides as SQLite for the same searches', async () => {
    for (const q of [
      'menus',
      'cafe',
      'allerg',
      'food waste',
      '"walk in"',
      'the',
      'cross-contamination',
      'par level',
      'labor cost',
      'temperature log',
    ]) {
      const url = `/api/v1/guides?limit=50&q=${encodeURIComponent(q)}`;
      const [a, b] = await Promise.all([get(pgApp, url), get(sqliteApp, url)]);
      expect(a.statusCode, q).toBe(200);
      const found = a.json<ListBody>().items;
      expect(found.map((i) => i.slug).sort(), q).toEqual(
        b
          .json<ListBody>()
          .items.map((i) => i.slug)
          .sort(),
      );
      expect(
        found.every((i) => typeof i.snippet === 'string'),
        q,
      ).toBe(true);
    }
    const cafe = (await get(pgApp, '/api/v1/guides?q=cafe')).json<ListBody>();
    expect(cafe.items[0]?.slug).toBe('opening-a-cafe');
    expect(cafe.items[0]?.snippet).toMatch(/\*\*Café\*\*/);
  });

  it('walks a search through cursors: every match exactly once, in the order of one big page', async () => {
    const all = (await get(pgApp, '/api/v1/guides?q=the&limit=50')).json<ListBody>().items.map((i) => i.slug);
    expect(all.length).toBeGreaterThan(10);
    for (const limit of [1, 3, 8]) {
      expect((await walk(pgApp, `/api/v1/guides?q=the&limit=${limit}`)).slugs).toEqual(all);
    }
  });

  it('answers 200 to hostile search text', async () => {
    // Control characters are a 400 before search (tested with the guides route); the rest reach the store.
    // eslint-disable-next-line no-control-regex -- finding control characters is the point
    for (const q of HOSTILE_QUERIES.filter((text) => !/[\u0000-\u001F\u007F]/.test(text))) {
      const res = await get(pgApp, `/api/v1/guides?q=${encodeURIComponent(q)}`);
      expect(res.statusCode, q).toBe(200);
    }
  });

  it('answers 503, never 500, when PostgreSQL cannot be reached', async () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none',
      PUBLIC_BASE_URL: TEST_BASE_URL,
      LOG_LEVEL: 'silent',
      ...env,
    });
    const store = createPostgresGuideStore({ connectionString: config.databaseUrl, connectionTimeoutMs: 1000 });
    const app = buildApp({ config, store, logger: false });
    try {
      await app.ready();
      for (const url of ['/api/v1/guides', '/api/v1/guides/reduce-food-waste', '/api/v1/guides?q=menu', '/readyz']) {
        const res = await app.inject({ url });
        expect(res.statusCode, url).toBe(503);
        expect(res.headers['retry-after'], url).toMatch(/^\d+$/);
        expect(res.json()).toMatchObject({ type: `${TEST_BASE_URL}/problems/service-unavailable`, status: 503 });
        expect(res.body).not.toMatch(/postgres|ECONNREFUSED|127\.0\.0\.1|stack/i);
      }
    } finally {
      await app.close();
      await store.close();
    }
  });
});
