import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCursorCodec } from '../../../src/guides/cursor.js';
import type { ContentSet, GuideRecord } from '../../../src/guides/guide.js';
import { buildTestApp, TEST_BASE_URL } from '../../helpers/build-test-app.js';
import type { TestApp } from '../../helpers/build-test-app.js';
import { makeContent, makeGuide } from '../../helpers/guide-factory.js';
import { loadSampleContent } from '../../helpers/sample-content.js';

interface Item {
  slug: string;
  title: string;
  publishedAt: string;
  snippet?: string;
  [key: string]: unknown;
}
interface ListBody {
  items: Item[];
  nextCursor?: string;
}

/** Published guides in contract order: publishedAt desc, then slug in byte order. */
function expectedOrder(guides: readonly GuideRecord[]): string[] {
  return guides
    .filter((g) => g.status === 'published')
    .sort((a, b) => Date.parse(b.publishedAt!) - Date.parse(a.publishedAt!) || (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0))
    .map((g) => g.slug);
}

async function walk(t: TestApp, firstUrl: string): Promise<{ slugs: string[]; pages: number }> {
  const slugs: string[] = [];
  let url: string | undefined = firstUrl;
  let pages = 0;
  while (url) {
    const res = await t.app.inject({ url });
    expect(res.statusCode).toBe(200);
    const body = res.json<ListBody>();
    slugs.push(...body.items.map((i) => i.slug));
    pages += 1;
    if (body.nextCursor) {
      const link = res.headers.link as string;
      expect(link).toMatch(/^<https:\/\/api\.test\.example\/api\/v1\/guides\?[^>]+>; rel="next"$/);
      url = link.slice(1, link.indexOf('>')).replace(TEST_BASE_URL, '');
      expect(new URL(url, TEST_BASE_URL).searchParams.get('cursor')).toBe(body.nextCursor);
    } else {
      expect(res.headers.link).toBeUndefined();
      url = undefined;
    }
    expect(pages).toBeLessThan(500);
  }
  return { slugs, pages };
}

describe('GET /api/v1/guides', () => {
  let t: TestApp;
  let sample: ContentSet;
  beforeAll(async () => {
    sample = await loadSampleContent();
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('lists the first 20 published guides, newest first, with exactly the summary fields', async () => {
    const res = await t.app.inject({ url: '/api/v1/guides' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = res.json<ListBody>();
    expect(body.items.map((i) => i.slug)).toEqual(expectedOrder(sample.guides).slice(0, 20));
    expect(typeof body.nextCursor).toBe('string');
    const first = body.items[0]!;
    const source = sample.guides.find((g) => g.slug === first.slug)!;
    expect(first).toEqual({
      slug: source.slug,
      title: source.title,
      summary: source.summary,
      tags: source.tags,
      language: 'en',
      publishedAt: source.publishedAt,
      updatedAt: source.updatedAt,
      readingTimeMinutes: source.readingTimeMinutes,
      url: `${TEST_BASE_URL}/api/v1/guides/${source.slug}`,
    });
  });

  it.each([1, 7, 20, 50])('walks every published guide exactly once at limit %i', async (limit) => {
    const { slugs, pages } = await walk(t, `/api/v1/guides?limit=${limit}`);
    const expected = expectedOrder(sample.guides);
    expect(slugs).toEqual(expected);
    expect(pages).toBe(Math.max(1, Math.ceil(expected.length / limit)));
  });

  it('omits nextCursor (not null) on the last page', async () => {
    const res = await t.app.inject({ url: '/api/v1/guides?limit=50' });
    expect(Object.keys(res.json())).toEqual(['items']);
  });

  it('lets limit change between pages', async () => {
    const first = (await t.app.inject({ url: '/api/v1/guides?limit=3' })).json<ListBody>();
    const second = (await t.app.inject({ url: `/api/v1/guides?limit=5&cursor=${first.nextCursor}` })).json<ListBody>();
    expect([...first.items, ...second.items].map((i) => i.slug)).toEqual(expectedOrder(sample.guides).slice(0, 8));
  });

  it.each(['0', '51', '-1', '2.5', 'abc', '1e1', '0x10', '+5', '05', '', ' 5', '1000000000000'])(
    'rejects limit=%j with invalid-parameter',
    async (limit) => {
      const res = await t.app.inject({ url: `/api/v1/guides?limit=${encodeURIComponent(limit)}` });
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.json()).toEqual({
        type: `${TEST_BASE_URL}/problems/invalid-parameter`,
        title: 'Invalid parameter',
        status: 400,
        detail: 'One or more query parameters are invalid; see errors.',
        errors: [{ in: 'query', name: 'limit', detail: 'must be an integer from 1 to 50, written in plain decimal digits' }],
      });
    },
  );

  it('names unknown parameters and lists the accepted ones', async () => {
    const res = await t.app.inject({ url: '/api/v1/guides?Limit=5&page=2' });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([
      { in: 'query', name: 'Limit', detail: 'is not a parameter of this operation; accepted parameters: q, limit, cursor' },
      { in: 'query', name: 'page', detail: 'is not a parameter of this operation; accepted parameters: q, limit, cursor' },
    ]);
  });

  it.each(['<script>', 'a"b', "a'b", 'a&b', 'a`b', 'a\\b', 'a b', 'a\u202eb', 'a\u200bb', 'x'.repeat(65)])(
    'does not echo a parameter name that could carry markup (%j)',
    async (raw) => {
      const res = await t.app.inject({ url: `/api/v1/guides?${encodeURIComponent(raw)}=1` });
      expect(res.statusCode).toBe(400);
      expect(res.body).not.toContain(JSON.stringify(raw).slice(1, -1));
      expect(res.json().errors[0].name).toBe('(unprintable name)');
    },
  );

  it.each(['$where', 'a.b', 'ключ', 'filter[tag]', 'x'.repeat(64), '名前', 'é'])(
    'names an unknown parameter as sent when it is plain text (%s)',
    async (raw) => {
      const res = await t.app.inject({ url: `/api/v1/guides?${encodeURIComponent(raw)}=1` });
      expect(res.statusCode).toBe(400);
      expect(res.json().errors).toEqual([
        { in: 'query', name: raw, detail: 'is not a parameter of this operation; accepted parameters: q, limit, cursor' },
      ]);
    },
  );

  it.each(['limit=2&limit=3', 'q=a&q=b', 'cursor=x&cursor=y'])('rejects a repeated parameter (%s)', async (query) => {
    const res = await t.app.inject({ url: `/api/v1/guides?${query}` });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([{ in: 'query', name: query.split('=')[0], detail: 'is repeated; send it once' }]);
  });

  it('measures q after trimming: 200 characters pass, 201 fail', async () => {
    const ok = await t.app.inject({ url: `/api/v1/guides?q=${encodeURIComponent(`   ${'a'.repeat(200)}   `)}` });
    expect(ok.statusCode).toBe(200);
    const tooLong = await t.app.inject({ url: `/api/v1/guides?q=${'a'.repeat(201)}` });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json().errors[0].name).toBe('q');
  });

  it.each(['%00', 'a%01b', '%1F', 'x%7F', '%0A'])('rejects control characters in q (%s)', async (q) => {
    const res = await t.app.inject({ url: `/api/v1/guides?q=${q}` });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([
      { in: 'query', name: 'q', detail: 'must be at most 200 characters after trimming, without control characters' },
    ]);
  });

  it('treats an empty or blank q as no search', async () => {
    const plain = (await t.app.inject({ url: '/api/v1/guides' })).body;
    for (const q of ['', '%20%20', '+']) {
      const res = await t.app.inject({ url: `/api/v1/guides?q=${q}` });
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe(plain);
    }
  });
});

describe('cursors', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  async function firstCursor(query = 'limit=2'): Promise<string> {
    const body = (await t.app.inject({ url: `/api/v1/guides?${query}` })).json<ListBody>();
    return body.nextCursor!;
  }

  async function expectInvalidCursor(url: string): Promise<void> {
    const res = await t.app.inject({ url });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.json()).toMatchObject({ type: `${TEST_BASE_URL}/problems/invalid-cursor`, status: 400, title: 'Invalid cursor' });
  }

  it('rejects an altered, truncated, re-encoded, empty or forged cursor', async () => {
    const cursor = await firstCursor();
    const flip = (s: string, i: number): string => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    await expectInvalidCursor(`/api/v1/guides?cursor=${flip(cursor, 3)}`);
    await expectInvalidCursor(`/api/v1/guides?cursor=${flip(cursor, cursor.length - 2)}`);
    await expectInvalidCursor(`/api/v1/guides?cursor=${cursor.slice(0, -1)}`);
    await expectInvalidCursor(`/api/v1/guides?cursor=${cursor.slice(0, cursor.indexOf('.'))}`);
    await expectInvalidCursor('/api/v1/guides?cursor=');
    await expectInvalidCursor(`/api/v1/guides?cursor=${'x'.repeat(5000)}`);
    await expectInvalidCursor('/api/v1/guides?cursor=%E2%9C%93.%00');
    const foreign = createCursorCodec([Buffer.from('another deployment with its own secret key!!')]);
    await expectInvalidCursor(`/api/v1/guides?cursor=${foreign.encode({ kind: 'list', after: { publishedMs: 0, slug: 'a' } })}`);
  });

  it('continues a search when q is omitted or repeated unchanged, and rejects a different q', async () => {
    const cursor = await firstCursor('q=kitchen&limit=2');
    const omitted = await t.app.inject({ url: `/api/v1/guides?cursor=${cursor}` });
    const same = await t.app.inject({ url: `/api/v1/guides?q=kitchen&cursor=${cursor}` });
    expect(omitted.statusCode).toBe(200);
    expect(same.body).toBe(omitted.body);
    expect(omitted.json<ListBody>().items.every((i) => typeof i.snippet === 'string')).toBe(true);
    await expectInvalidCursor(`/api/v1/guides?q=menu&cursor=${cursor}`);
  });

  it('rejects a list cursor sent with a q', async () => {
    await expectInvalidCursor(`/api/v1/guides?q=kitchen&cursor=${await firstCursor()}`);
  });

  it('stays valid across a restart on the same database', async () => {
    const cursor = await firstCursor();
    const page = (await t.app.inject({ url: `/api/v1/guides?cursor=${cursor}` })).body;
    const { buildApp } = await import('../../../src/app.js');
    const again = buildApp({ config: t.config, store: t.store, logger: false });
    try {
      expect((await again.inject({ url: `/api/v1/guides?cursor=${cursor}` })).body).toBe(page);
    } finally {
      await again.close();
    }
  });

  it('verifies with every CURSOR_SECRET key and signs with the first, so keys rotate', async () => {
    const oldKey = 'old-key-0123456789-0123456789-0123456789';
    const newKey = 'new-key-0123456789-0123456789-0123456789';
    const before = await buildTestApp({ env: { CURSOR_SECRET: oldKey } });
    const during = await buildTestApp({ env: { CURSOR_SECRET: `${newKey},${oldKey}` } });
    const after = await buildTestApp({ env: { CURSOR_SECRET: newKey } });
    try {
      const oldCursor = (await before.app.inject({ url: '/api/v1/guides?limit=2' })).json<ListBody>().nextCursor!;
      expect((await during.app.inject({ url: `/api/v1/guides?cursor=${oldCursor}` })).statusCode).toBe(200);
      expect((await after.app.inject({ url: `/api/v1/guides?cursor=${oldCursor}` })).statusCode).toBe(400);
      const newCursor = (await during.app.inject({ url: '/api/v1/guides?limit=2' })).json<ListBody>().nextCursor!;
      expect((await after.app.inject({ url: `/api/v1/guides?cursor=${newCursor}` })).statusCode).toBe(200);
      expect((await t.app.inject({ url: `/api/v1/guides?cursor=${newCursor}` })).statusCode).toBe(400);
    } finally {
      await Promise.all([before.close(), during.close(), after.close()]);
    }
  });
});

describe('ordering and walks while content changes', () => {
  it('breaks publishedAt ties by slug in byte order (a-b before a0)', async () => {
    const at = '2026-02-02T10:00:00Z';
    const t = await buildTestApp({
      content: makeContent([
        makeGuide({ slug: 'b', publishedAt: at }),
        makeGuide({ slug: 'a0', publishedAt: at }),
        makeGuide({ slug: 'a-b', publishedAt: at }),
        makeGuide({ slug: 'z', publishedAt: '2026-02-03T10:00:00Z' }),
        makeGuide({ slug: 'old', publishedAt: '2020-01-01T00:00:00Z' }),
      ]),
    });
    try {
      const { slugs } = await walk(t, '/api/v1/guides?limit=1');
      expect(slugs).toEqual(['z', 'a-b', 'a0', 'b', 'old']);
    } finally {
      await t.close();
    }
  });

  it('never repeats or skips a guide that stayed published when guides are added and unpublished mid-walk', async () => {
    const guides = Array.from({ length: 12 }, (_, i) =>
      makeGuide({ slug: `g${String(i).padStart(2, '0')}`, publishedAt: `2026-01-${String(i + 1).padStart(2, '0')}T00:00:00Z` }),
    );
    const t = await buildTestApp({ content: makeContent(guides) });
    try {
      const seen: string[] = [];
      let body = (await t.app.inject({ url: '/api/v1/guides?limit=4' })).json<ListBody>();
      seen.push(...body.items.map((i) => i.slug));
      // g11..g08 seen. Now: a newer guide appears, a seen one and an unseen one are unpublished.
      await t.importContent(
        makeContent([
          ...guides.map((g) => (g.slug === 'g10' || g.slug === 'g03' ? { ...g, status: 'retained' as const } : g)),
          makeGuide({ slug: 'new', publishedAt: '2026-03-01T00:00:00Z' }),
        ]),
      );
      while (body.nextCursor) {
        body = (await t.app.inject({ url: `/api/v1/guides?limit=4&cursor=${body.nextCursor}` })).json<ListBody>();
        seen.push(...body.items.map((i) => i.slug));
      }
      expect(new Set(seen).size).toBe(seen.length);
      const stayedPublished = guides.map((g) => g.slug).filter((s) => s !== 'g10' && s !== 'g03');
      for (const slug of stayedPublished) expect(seen).toContain(slug);
      expect(seen).not.toContain('g03');
    } finally {
      await t.close();
    }
  });
});

describe('GET /api/v1/guides/{slug}', () => {
  let t: TestApp;
  let sample: ContentSet;
  beforeAll(async () => {
    sample = await loadSampleContent();
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('returns the summary fields plus markdown, wordCount, headings, author and canonicalUrl', async () => {
    const source = sample.guides.find((g) => g.status === 'published' && g.author && g.canonicalUrl)!;
    const res = await t.app.inject({ url: `/api/v1/guides/${source.slug}` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      slug: source.slug,
      title: source.title,
      summary: source.summary,
      tags: source.tags,
      language: source.language,
      publishedAt: source.publishedAt,
      updatedAt: source.updatedAt,
      readingTimeMinutes: source.readingTimeMinutes,
      url: `${TEST_BASE_URL}/api/v1/guides/${source.slug}`,
      markdown: source.markdown,
      wordCount: source.wordCount,
      headings: source.headings,
      author: source.author,
      canonicalUrl: source.canonicalUrl,
    });
    expect(res.headers['last-modified']).toBe(new Date(source.updatedAt!).toUTCString());
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
  });

  it('leaves out author and canonicalUrl when the content does not set them', async () => {
    const source = sample.guides.find((g) => g.status === 'published' && !g.canonicalUrl)!;
    const body = (await t.app.inject({ url: `/api/v1/guides/${source.slug}` })).json();
    expect(body).not.toHaveProperty('canonicalUrl');
    expect(body).not.toHaveProperty('snippet');
  });

  it('gives retained, archived, unknown and malformed slugs the same 404, byte for byte', async () => {
    const retained = sample.guides.find((g) => g.status === 'retained')!.slug;
    const archived = sample.guides.find((g) => g.status === 'archived')!.slug;
    const urls = [
      `/api/v1/guides/${retained}`,
      `/api/v1/guides/${archived}`,
      '/api/v1/guides/no-such-guide',
      `/api/v1/guides/${'a'.repeat(101)}`,
      '/api/v1/guides/Reduce-Food-Waste',
      '/api/v1/guides/a--b',
      '/api/v1/guides/-a',
      '/api/v1/guides/%zz%',
      '/api/v1/guides/%E2%9C%93',
      '/api/v1/guides/a%2Fb',
      '/api/v1/guides/',
      '/api/v1/guides/reduce-food-waste/extra',
      '/api/v1/nothing-here',
    ];
    const responses = await Promise.all(urls.map((url) => t.app.inject({ url, headers: { 'if-none-match': '*' } })));
    // The contract exempts Date, X-Request-Id and the rate-limit counters from sameness.
    const exempt = new Set(['date', 'x-request-id', 'ratelimit']);
    const strip = (headers: Record<string, unknown>): Record<string, unknown> =>
      Object.fromEntries(Object.entries(headers).filter(([name]) => !exempt.has(name)));
    for (const [i, res] of responses.entries()) {
      expect.soft(res.statusCode, urls[i]).toBe(404);
      expect.soft(res.body, urls[i]).toBe(responses[0]!.body);
      expect.soft(strip(res.headers), urls[i]).toEqual(strip(responses[0]!.headers));
      expect.soft(res.headers.etag, urls[i]).toBeUndefined();
    }
    expect(responses[0]!.json()).toEqual({
      type: `${TEST_BASE_URL}/problems/not-found`,
      title: 'Not found',
      status: 404,
      detail: 'There is no published guide or API resource at this URL.',
    });
  });
});

describe('search', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({
      content: makeContent([
        makeGuide({
          slug: 'cafe-opening',
          title: 'Opening a Café',
          markdown: '# Opening a Café\n\nEspresso machines and **bold** claims about crème brûlée.\n',
        }),
        makeGuide({
          slug: 'menu-design',
          title: 'Designing menus',
          markdown: '# Menus\n\nA good menu sells. Escaped \\*\\* stars and *emphasis* too.\n',
        }),
        makeGuide({
          slug: 'cold-chain',
          title: 'Receiving deliveries',
          markdown: '# Receiving\n\nKeep the cold chain intact from truck to walk-in.\n',
        }),
        makeGuide({ slug: 'store-chains', title: 'Chains of stores', markdown: '# Chains\n\nA chain of stores, some cold, some warm.\n' }),
        makeGuide({ slug: 'allergens', title: 'Allergen basics', markdown: '# Allergens\n\nDeclare every allergen on the menu.\n' }),
        makeGuide({
          slug: 'body-mention',
          title: 'Staff meals',
          summary: 'Feeding the team.',
          markdown: '# Staff meals\n\nAsk about every allergen before staff meals.\n',
        }),
        makeGuide({
          slug: 'secret-draft',
          status: 'retained',
          title: 'Zanzibar draft',
          markdown: '# Zanzibar\n\nUnpublished zanzibar text.\n',
        }),
        makeGuide({ slug: 'old-archive', status: 'archived', title: 'Quokka archive', markdown: '# Quokka\n\nArchived quokka text.\n' }),
      ]),
    });
  });
  afterAll(() => t.close());

  async function search(q: string): Promise<Item[]> {
    const res = await t.app.inject({ url: `/api/v1/guides?q=${encodeURIComponent(q)}` });
    expect(res.statusCode, q).toBe(200);
    return res.json<ListBody>().items;
  }
  const slugs = async (q: string): Promise<string[]> => (await search(q)).map((i) => i.slug).sort();

  it('folds case and diacritics both ways', async () => {
    expect(await slugs('cafe')).toEqual(['cafe-opening']);
    expect(await slugs('CAFÉ')).toEqual(['cafe-opening']);
    expect(await slugs('creme brulee')).toEqual(['cafe-opening']);
  });

  it('stems English words (menus finds menu)', async () => {
    expect(await slugs('menus')).toEqual(['allergens', 'menu-design']);
    expect(await slugs('designed')).toEqual(['menu-design']);
  });

  it('matches the last term as a prefix, and only the last', async () => {
    expect(await slugs('allerg')).toEqual(['allergens', 'body-mention']);
    expect(await slugs('allergen menu')).toEqual(['allergens']);
    expect(await slugs('allerg menu')).toEqual([]);
    expect(await slugs('recei')).toEqual(['cold-chain']);
    expect(await slugs('recei deliveries')).toEqual([]);
  });

  it('requires every term (AND)', async () => {
    expect(await slugs('cold chain')).toEqual(['cold-chain', 'store-chains']);
    expect(await slugs('cold espresso')).toEqual([]);
  });

  it('treats "double quotes" as a phrase', async () => {
    expect(await slugs('"cold chain"')).toEqual(['cold-chain']);
    expect(await slugs('"chain cold"')).toEqual([]);
    expect(await slugs('"cold chain')).toEqual(['cold-chain']);
  });

  it('ranks a title match above a body match', async () => {
    expect((await search('allergen')).map((i) => i.slug)).toEqual(['allergens', 'body-mention']);
  });

  it('marks matched terms with ** in a plain-text snippet that never carries Markdown', async () => {
    const [cafe] = await search('espresso');
    expect(cafe!.snippet).toContain('**Espresso**');
    expect(cafe!.snippet).not.toMatch(/\*\*bold\*\*/);
    const [menu] = await search('stars');
    expect(menu!.snippet!.replaceAll('**stars**', '')).not.toContain('*');
  });

  it('never finds retained or archived guides', async () => {
    expect(await search('zanzibar')).toEqual([]);
    expect(await search('quokka')).toEqual([]);
    expect(await search('secret')).toEqual([]);
  });

  it.each([
    'C++',
    "O'Reilly",
    '100%',
    'a:b',
    'title:cafe',
    'body:x',
    'NEAR(cold chain)',
    'cold NEAR chain',
    '"',
    '""',
    '"""',
    '*',
    '^cafe',
    'cafe*',
    ') OR (',
    "' OR 1=1 --",
    '; DROP TABLE guides; --',
    'AND',
    'OR',
    'NOT',
    'cold AND',
    '- cafe',
    '+cafe',
    '{title}: x',
    '\\',
    '%',
    '_',
    '[',
    '(',
    ')',
    ':',
    '$',
    '`',
    '\u{1F600}',
    '\u0301',
    '‮',
    'ﬁ',
    '𝔠𝔞𝔣𝔢',
    '"(*^:)"',
    '*'.repeat(200),
    '"^*:-'.repeat(40),
  ])('answers hostile input %j with 200 and no unpublished guide', async (q) => {
    const res = await t.app.inject({ url: `/api/v1/guides?q=${encodeURIComponent(q)}` });
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toMatch(/zanzibar|quokka|secret-draft|old-archive/i);
  });

  it('finds nothing, without error, when q has no letters or digits', async () => {
    expect(await search('!!! ??? ...')).toEqual([]);
  });

  it('walks search results page by page exactly once, in one consistent order', async () => {
    const all = (await t.app.inject({ url: '/api/v1/guides?q=a&limit=50' })).json<ListBody>().items.map((i) => i.slug);
    expect(all.length).toBeGreaterThan(2);
    const { slugs: walked } = await walk(t, '/api/v1/guides?q=a&limit=1');
    expect(walked).toEqual(all);
  });
});
