/**
 * The store contract (src/store/guide-store.ts), one suite for every backend. A backend's test file
 * calls describeGuideStoreContract with a harness that gives each test a fresh, empty database.
 * Where engines score differently, the tests assert what the contract promises (membership,
 * order rules, title-first ranking), never engine numbers.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SearchPosition } from '../../src/guides/cursor.js';
import type { ContentSet, GuideRecord, GuideSummaryData } from '../../src/guides/guide.js';
import { parseSearchQuery } from '../../src/guides/search-query.js';
import { hashJson } from '../../src/store/import-plan.js';
import type { ContentStream, GuideStore, ImportSummary, PreparedGuide } from '../../src/store/guide-store.js';
import { makeContent, makeGuide } from '../helpers/guide-factory.js';

export interface StoreHarness {
  /** Opens a store on this test's database; every call opens another connection to the same one. */
  open(): Promise<GuideStore>;
  /** Closes nothing the test closed itself; drops the database. */
  cleanup(): Promise<void>;
}

/** Byte order, as SQL's C collation compares slugs. */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

function expectedListOrder(guides: readonly GuideRecord[]): string[] {
  return guides
    .filter((g) => g.status === 'published')
    .sort((a, b) => Date.parse(b.publishedAt!) - Date.parse(a.publishedAt!) || byteOrder(a.slug, b.slug))
    .map((g) => g.slug);
}

const slugs = (items: readonly GuideSummaryData[]): string[] => items.map((item) => item.slug);

/** The same position after a trip through a cursor (JSON), as the HTTP layer sends it. */
function viaCursor<P>(position: P): P {
  return JSON.parse(JSON.stringify(position)) as P;
}

async function walkList(store: GuideStore, limit: number): Promise<string[]> {
  const seen: string[] = [];
  let page = await store.listPublishedGuides({ limit });
  for (let pages = 0; pages < 1000; pages += 1) {
    expect(page.items.length).toBeLessThanOrEqual(limit);
    seen.push(...slugs(page.items));
    if (!page.next) return seen;
    expect(page.items.length).toBe(limit);
    page = await store.listPublishedGuides({ limit, after: viaCursor(page.next) });
  }
  throw new Error('the walk did not end');
}

async function search(store: GuideStore, text: string, limit = 50): Promise<GuideSummaryData[]> {
  const query = parseSearchQuery(text);
  if (query.terms.length === 0) return [];
  return (await store.searchPublishedGuides({ query, limit })).items;
}

async function walkSearch(store: GuideStore, text: string, limit: number): Promise<string[]> {
  const query = parseSearchQuery(text);
  const seen: string[] = [];
  let after: SearchPosition | undefined;
  for (let pages = 0; pages < 1000; pages += 1) {
    const page = await store.searchPublishedGuides({ query, limit, ...(after ? { after } : {}) });
    seen.push(...slugs(page.items));
    if (!page.next) return seen;
    after = viaCursor(page.next);
  }
  throw new Error('the walk did not end');
}

/**
 * 1,400 words where "saffron" and "vanilla" never come within 130 words of each other (word
 * positions taken from a generated guide on which PostgreSQL's ts_headline marked nothing).
 */
function farApart(): string {
  const at = new Map<number, string>([
    [44, 'saffron'],
    [206, 'saffron'],
    [217, 'saffron'],
    [572, 'saffron'],
    [1036, 'saffron'],
    [1099, 'saffron'],
    [1302, 'saffron'],
    [385, 'vanilla'],
    [705, 'vanilla'],
    [780, 'vanilla'],
    [806, 'vanilla'],
  ]);
  const filler = ['lorem', 'ipsum', 'dolor', 'sit', 'amet', 'elit'];
  return Array.from({ length: 1400 }, (_, i) => `${at.get(i) ?? filler[i % filler.length]!}${i % 12 === 11 ? '.' : ''}`).join(' ');
}

/** Guides written for the search tests: each word placed so one behaviour decides the match. */
function searchContent(): ContentSet {
  return makeContent([
    makeGuide({
      slug: 'menu-basics',
      title: 'Writing a short carte',
      summary: 'Fewer dishes sell better.',
      markdown: '# Writing a short carte\n\nA short menu sells better than a long one.\n',
      publishedAt: '2026-01-05T09:00:00Z',
    }),
    makeGuide({
      slug: 'opening-a-cafe',
      title: 'Opening a Café',
      summary: 'The first weeks of a new café.',
      markdown: '# Opening a Café\n\nA café needs a reliable espresso machine and a morning rush plan.\n',
      publishedAt: '2026-01-06T09:00:00Z',
    }),
    makeGuide({
      slug: 'allergen-matrix',
      title: 'Allergen matrix',
      summary: 'Track the fourteen allergens.',
      markdown: '# Allergen matrix\n\nKeep the **allergen matrix** at the pass, next to the order rail.\n',
      publishedAt: '2026-01-07T09:00:00Z',
    }),
    makeGuide({
      slug: 'walk-in-cooler',
      title: 'Cold storage',
      summary: 'Shelving and temperatures.',
      markdown: '# Cold storage\n\nKeep the walk-in cooler at 3 °C and label every shelf.\n',
      publishedAt: '2026-01-08T09:00:00Z',
    }),
    makeGuide({
      slug: 'cooler-and-a-walk',
      title: 'Staff breaks',
      summary: 'Rest matters.',
      markdown: '# Staff breaks\n\nAfter a shift, a walk in the park beats a cooler full of drinks.\n',
      publishedAt: '2026-01-09T09:00:00Z',
    }),
    makeGuide({
      slug: 'grill-basics',
      title: 'Grill basics',
      summary: 'Heat zones and timing.',
      markdown: '# Grill basics\n\nPreheat for fifteen minutes.\n',
      publishedAt: '2026-01-01T09:00:00Z',
    }),
    makeGuide({
      slug: 'kitchen-notes',
      title: 'Kitchen notes',
      summary: 'Assorted notes from the line.',
      markdown: `# Kitchen notes\n\n${'The grill station needs the grill brush and the grill scraper. '.repeat(12)}\n`,
      publishedAt: '2026-02-01T09:00:00Z',
    }),
    makeGuide({
      slug: 'knife-skills',
      title: 'Knife skills',
      summary: 'Sharpening schedule for the brigade.',
      markdown: '# Knife skills\n\nHone daily, sharpen weekly.\n',
      publishedAt: '2026-01-02T09:00:00Z',
    }),
    makeGuide({
      slug: 'staff-handbook',
      title: 'Staff handbook',
      summary: 'Rules for everyone.',
      markdown: '# Staff handbook\n\nThe sharpening of knives happens on Mondays, and breaks are paid.\n',
      publishedAt: '2026-03-01T09:00:00Z',
    }),
    makeGuide({
      slug: 'secret-menu',
      status: 'retained',
      title: 'Secret menu',
      summary: 'Not for the public: espresso allergen grill menu.',
      markdown: '# Secret menu\n\nEspresso, allergen, grill, menu, café, walk-in cooler.\n',
      publishedAt: '2026-01-03T09:00:00Z',
    }),
    makeGuide({
      slug: 'old-menu',
      status: 'archived',
      title: 'Old menu',
      summary: 'Gone: espresso allergen grill menu.',
      markdown: '# Old menu\n\nEspresso, allergen, grill, menu, café.\n',
      publishedAt: '2026-01-04T09:00:00Z',
    }),
  ]);
}

export const HOSTILE_QUERIES = [
  'C++',
  "O'Reilly",
  '100%',
  'a:b',
  'title:x',
  'NEAR(a b)',
  '"',
  '*',
  '^',
  ') OR (',
  "' OR 1=1 --",
  '""',
  '"unclosed phrase',
  'menu*',
  '-menu',
  'menu AND NOT cafe',
  '{title}: menu',
  'a & b | !c',
  "'",
  '\\',
  'col:"x" *',
  '<-> <2>',
  ':*',
  'x:*A',
  '\u0000',
  'menu\u0000cafe',
  '\u202Ecafe',
  '😀 menu',
  'ﬁle',
  'Ⅻ',
  'x'.repeat(200),
  '()*"^:-+|&!~<>{}[]\'\\'.repeat(11).slice(0, 200),
  // Letters that unaccent turns into a quote or an apostrophe, so a lexeme itself can hold one.
  'aʼb',
  'ŉ',
  'ʼ',
  'ʺ',
  'xʺ',
  'ʼʼ',
  '"aʼb cʺd"',
  'menu ʼ',
];

/**
 * A content set as a folder reader streams it, one guide per turn of the event loop. With
 * `failAfter`, the stream throws once that many guides are out, as a problem found later in the
 * folder does; `onYielded` runs after each guide is taken.
 */
function streamOf(content: ContentSet, options: { failAfter?: number; onYielded?: (count: number) => Promise<void> } = {}): ContentStream {
  async function* guides(): AsyncGenerator<PreparedGuide> {
    let count = 0;
    for (const guide of content.guides) {
      if (count === options.failAfter) throw new Error('a problem found later in the folder');
      await new Promise((resolve) => setImmediate(resolve));
      yield { guide, contentHash: hashJson(guide) };
      count += 1;
      await options.onYielded?.(count);
    }
    if (count === options.failAfter) throw new Error('a problem found later in the folder');
  }
  return { product: content.product, resources: content.resources, guides: guides() };
}

/** The store's importStream; every backend has one. */
function streamInto(store: GuideStore): (content: ContentStream) => Promise<ImportSummary> {
  expect(store.importStream).toBeTypeOf('function');
  return (content) => store.importStream!(content);
}

/** Everything a store holds that an import changes: what it serves, and every guide's row as an import plans against it. */
async function storeState(store: GuideStore): Promise<string> {
  const index = await store.listPublishedIndex();
  const existing = (await store.existingGuides()).toSorted((a, b) => byteOrder(a.slug, b.slug));
  return JSON.stringify([
    await store.contentVersion(),
    await store.getProduct(),
    await store.getResources(),
    await Promise.all(index.map((entry) => store.getPublishedGuide(entry.slug))),
    existing,
  ]);
}

/** Many small guides, more than a backend writes in one statement. */
function bulkGuides(count: number, prefix = 'bulk'): GuideRecord[] {
  return Array.from({ length: count }, (_, i) =>
    makeGuide({ slug: `${prefix}-${i}`, markdown: `# Bulk ${i}\n\nFresh body number ${i}.\n`, publishedAt: '2026-02-01T09:00:00Z' }),
  );
}

export function describeGuideStoreContract(backend: 'sqlite' | 'postgres', createHarness: () => Promise<StoreHarness>, variant = ''): void {
  describe(`GuideStore contract: ${backend}${variant ? `, ${variant}` : ''}`, () => {
    let harness: StoreHarness;
    let store: GuideStore;
    const opened: GuideStore[] = [];

    /** Another store on the same database, closed after the test. */
    async function openAnother(): Promise<GuideStore> {
      const another = await harness.open();
      opened.push(another);
      return another;
    }

    beforeEach(async () => {
      harness = await createHarness();
      store = await openAnother();
      await store.migrate();
    });

    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
      await harness.cleanup();
    });

    describe('before the first import', () => {
      it('is empty, at content version 0, with no product and no resources', async () => {
        expect(await store.isEmpty()).toBe(true);
        expect(await store.contentVersion()).toBe(0);
        expect(await store.getProduct()).toBeUndefined();
        expect(await store.getResources()).toEqual([]);
        expect(await store.listPublishedGuides({ limit: 10 })).toEqual({ items: [] });
        expect(await store.listPublishedIndex()).toEqual([]);
      });

      it('migrates again, and from several connections at once, without error', async () => {
        const others = await Promise.all([openAnother(), openAnother(), openAnother()]);
        await Promise.all([store.migrate(), ...others.map((s) => s.migrate())]);
        expect(await others[0]!.contentVersion()).toBe(0);
        // Ready once searches can run too: a store with search workers says so once they are up.
        await vi.waitFor(() => store.ping(), { timeout: 20_000, interval: 20 });
      });
    });

    describe('visibility', () => {
      const content = (): ContentSet =>
        makeContent([
          makeGuide({ slug: 'visible', title: 'Visible kitchen guide', publishedAt: '2026-01-02T09:00:00Z' }),
          makeGuide({ slug: 'kept-back', status: 'retained', title: 'Retained kitchen guide' }),
          makeGuide({ slug: 'gone', status: 'archived', title: 'Archived kitchen guide' }),
          makeGuide({ slug: 'draft-without-date', status: 'retained', title: 'Retained undated kitchen guide', publishedAt: null }),
          makeGuide({ slug: 'also-visible', title: 'Another kitchen guide', publishedAt: '2026-01-01T09:00:00Z' }),
        ]);

      it('lists, indexes and finds published guides only', async () => {
        await store.importContent(content());
        expect(slugs((await store.listPublishedGuides({ limit: 50 })).items)).toEqual(['visible', 'also-visible']);
        expect((await store.listPublishedIndex()).map((g) => g.slug)).toEqual(['visible', 'also-visible']);
        expect(slugs(await search(store, 'kitchen'))).toEqual(expect.arrayContaining(['visible', 'also-visible']));
        expect(slugs(await search(store, 'kitchen'))).toHaveLength(2);
        expect(await search(store, 'retained')).toEqual([]);
        expect(await search(store, 'archived')).toEqual([]);
      });

      it('answers the same undefined for retained, archived, unknown and malformed slugs', async () => {
        await store.importContent(content());
        for (const slug of [
          'kept-back',
          'gone',
          'draft-without-date',
          'never-existed',
          'Visible',
          'visible ',
          'a--b',
          '',
          'x'.repeat(300),
          'vis\u0000ible',
          "visible' OR '1'='1",
        ]) {
          expect(await store.getPublishedGuide(slug)).toBeUndefined();
        }
        expect(await store.getPublishedGuide('visible')).toBeDefined();
      });

      it('returns every field of a published guide, and omits author and canonicalUrl when unset', async () => {
        const full = makeGuide({
          slug: 'full',
          title: 'Full guide',
          summary: 'Everything set.',
          tags: ['safety', 'cold chain'],
          language: 'fr-CA',
          publishedAt: '2026-01-10T09:00:00Z',
          updatedAt: '2026-02-01T12:30:00.250Z',
          author: { name: 'Ana Ruiz', url: 'https://example.com/ana' },
          canonicalUrl: 'https://guides.example.com/full',
          markdown: '# Full guide\n\n## Measure first\n\nWeigh the **waste** bin.\n',
        });
        const bare = makeGuide({ slug: 'bare', publishedAt: '2026-01-09T09:00:00Z', updatedAt: null });
        await store.importContent(makeContent([full, bare]));
        expect(await store.getPublishedGuide('full')).toEqual({
          slug: 'full',
          title: 'Full guide',
          summary: 'Everything set.',
          tags: ['safety', 'cold chain'],
          language: 'fr-CA',
          publishedAt: '2026-01-10T09:00:00Z',
          updatedAt: '2026-02-01T12:30:00.250Z',
          readingTimeMinutes: full.readingTimeMinutes,
          markdown: full.markdown,
          wordCount: full.wordCount,
          headings: full.headings,
          author: { name: 'Ana Ruiz', url: 'https://example.com/ana' },
          canonicalUrl: 'https://guides.example.com/full',
        });
        const bareDetail = await store.getPublishedGuide('bare');
        expect(bareDetail).not.toHaveProperty('author');
        expect(bareDetail).not.toHaveProperty('canonicalUrl');
        // Without updatedAt, a guide was last updated when it was published.
        expect(bareDetail?.updatedAt).toBe('2026-01-09T09:00:00Z');
        const [summary] = (await store.listPublishedGuides({ limit: 1 })).items;
        expect(summary).toEqual({
          slug: 'full',
          title: 'Full guide',
          summary: 'Everything set.',
          tags: ['safety', 'cold chain'],
          language: 'fr-CA',
          publishedAt: '2026-01-10T09:00:00Z',
          updatedAt: '2026-02-01T12:30:00.250Z',
          readingTimeMinutes: full.readingTimeMinutes,
        });
      });

      it('keeps the product and resources of the last import', async () => {
        const resources = [{ rel: 'terms-of-service', href: 'https://example.com/terms', title: 'Terms' }];
        await store.importContent(makeContent([makeGuide({ slug: 'one' })], { resources }));
        expect(await store.getProduct()).toEqual(makeContent([]).product);
        expect(await store.getResources()).toEqual(resources);
        expect(await store.isEmpty()).toBe(false);
      });
    });

    describe('ordering and pagination', () => {
      it('orders by publishedAt descending, then slug in byte order', async () => {
        const tie = '2026-02-01T09:00:00Z';
        await store.importContent(
          makeContent([
            makeGuide({ slug: 'a0', publishedAt: tie }),
            makeGuide({ slug: 'c-earlier', publishedAt: '2026-01-01T09:00:00Z' }),
            makeGuide({ slug: 'b', publishedAt: tie }),
            makeGuide({ slug: 'a-b', publishedAt: tie }),
            makeGuide({ slug: 'z-later', publishedAt: '2026-03-01T09:00:00Z' }),
            makeGuide({ slug: 'a', publishedAt: tie }),
            makeGuide({ slug: 'a-b-hidden', status: 'retained', publishedAt: tie }),
            makeGuide({ slug: 'ms-later', publishedAt: '2026-02-01T09:00:00.001Z' }),
          ]),
        );
        // 'a-b' before 'a0': '-' (0x2D) sorts before '0' (0x30), as SQL's C collation does.
        expect(slugs((await store.listPublishedGuides({ limit: 50 })).items)).toEqual([
          'z-later',
          'ms-later',
          'a',
          'a-b',
          'a0',
          'b',
          'c-earlier',
        ]);
        expect((await store.listPublishedIndex()).map((g) => g.slug)).toEqual(['z-later', 'ms-later', 'a', 'a-b', 'a0', 'b', 'c-earlier']);
      });

      it('walks every published guide exactly once, in order, at any page size', async () => {
        const days = ['2026-01-01', '2026-01-02', '2026-01-02', '2026-01-03'];
        const guides = Array.from({ length: 29 }, (_, i) =>
          makeGuide({
            slug: `guide-${(i * 7) % 29}${i % 3 === 0 ? '-x' : ''}`,
            status: i % 5 === 4 ? 'retained' : 'published',
            publishedAt: `${days[i % days.length]!}T09:00:00Z`,
          }),
        );
        await store.importContent(makeContent(guides));
        const expected = expectedListOrder(guides);
        expect(expected.length).toBeGreaterThan(20);
        for (const limit of [1, 2, 3, 5, 7, 23, 50]) {
          expect(await walkList(store, limit)).toEqual(expected);
        }
      });

      it('continues strictly after a position, even when that guide has gone', async () => {
        await store.importContent(
          makeContent([
            makeGuide({ slug: 'a', publishedAt: '2026-01-03T09:00:00Z' }),
            makeGuide({ slug: 'b', publishedAt: '2026-01-02T09:00:00Z' }),
            makeGuide({ slug: 'c', publishedAt: '2026-01-01T09:00:00Z' }),
          ]),
        );
        const after = { publishedMs: Date.parse('2026-01-02T09:00:00Z'), slug: 'aa' };
        expect(slugs((await store.listPublishedGuides({ limit: 10, after })).items)).toEqual(['b', 'c']);
        const afterB = { publishedMs: Date.parse('2026-01-02T09:00:00Z'), slug: 'b' };
        expect(await store.listPublishedGuides({ limit: 10, after: afterB })).toEqual({ items: [expect.objectContaining({ slug: 'c' })] });
      });
    });

    describe('search', () => {
      beforeEach(async () => {
        await store.importContent(searchContent());
      });

      it('stems English words both ways (menus finds menu)', async () => {
        expect(slugs(await search(store, 'menus'))).toEqual(['menu-basics']);
        expect(slugs(await search(store, 'menus sell'))).toEqual(['menu-basics']);
        expect(slugs(await search(store, 'selling menu'))).toEqual(['menu-basics']);
      });

      it('ignores case and diacritics (cafe finds Café)', async () => {
        expect(slugs(await search(store, 'cafe'))).toEqual(['opening-a-cafe']);
        expect(slugs(await search(store, 'CAFÉ espresso'))).toEqual(['opening-a-cafe']);
        expect(slugs(await search(store, 'ESPRESSO CAFE'))).toEqual(['opening-a-cafe']);
      });

      it('matches the last bare word as a prefix, and only the last', async () => {
        expect(slugs(await search(store, 'allerg'))).toEqual(['allergen-matrix']);
        expect(slugs(await search(store, 'fourteen allerg'))).toEqual(['allergen-matrix']);
        expect(await search(store, 'allerg matrix')).toEqual([]);
        expect(await search(store, '"allerg"')).toEqual([]);
      });

      it('matches a quoted phrase only in order, and every term must match', async () => {
        expect(slugs(await search(store, '"walk in cooler"'))).toEqual(['walk-in-cooler']);
        expect(slugs(await search(store, 'walk in cooler')).sort()).toEqual(['cooler-and-a-walk', 'walk-in-cooler']);
        expect(slugs(await search(store, 'walk-in cooler')).sort()).toEqual(['cooler-and-a-walk', 'walk-in-cooler']);
        expect(await search(store, '"cooler walk"')).toEqual([]);
        expect(await search(store, 'espresso allergen')).toEqual([]);
        expect(slugs(await search(store, '"morning rush" espresso'))).toEqual(['opening-a-cafe']);
        // A phrase never runs from the end of one field into the next (title "Cold storage", summary "Shelving …").
        expect(await search(store, '"storage shelving"')).toEqual([]);
        expect(slugs(await search(store, '"cold storage"'))).toEqual(['walk-in-cooler']);
      });

      it('has no stop words: "the" and "a" are words like any other', async () => {
        expect((await search(store, 'the')).length).toBeGreaterThanOrEqual(5);
        expect(slugs(await search(store, '"a walk in the park"'))).toEqual(['cooler-and-a-walk']);
      });

      it('ranks title matches first', async () => {
        // kitchen-notes says "grill" 36 times in its body; grill-basics has it once, in the title.
        const grill = slugs(await search(store, 'grill'));
        expect(grill).toEqual(['grill-basics', 'kitchen-notes']);
        // A summary match outranks a body match.
        expect(slugs(await search(store, 'sharpening'))).toEqual(['knife-skills', 'staff-handbook']);
      });

      it('marks matched terms with ** in a plain-text snippet', async () => {
        const [matrix] = await search(store, 'matrix');
        expect(matrix?.snippet).toMatch(/\*\*matrix\*\*/i);
        // The body's own **bold** is Markdown syntax and never reaches the snippet.
        expect(matrix?.snippet).not.toMatch(/\*\*\*\*|\*\*allergen matrix\*\*/i);
        const [cafe] = await search(store, 'cafe');
        expect(cafe?.snippet).toMatch(/\*\*café\*\*/i);
        const [cooler] = await search(store, '"walk in cooler"');
        expect(cooler?.snippet).toContain('**');
        // Terms in different fields are still marked.
        const [spread] = await search(store, 'espresso weeks');
        expect(spread?.slug).toBe('opening-a-cafe');
        expect(spread?.snippet).toContain('**');
      });

      it('gives a snippet on one line: breaks between blocks shown, cuts marked with …', async () => {
        const filler = (word: string): string => Array.from({ length: 60 }, (_, i) => `${word}${i % 7}`).join(' ');
        await store.importContent(
          makeContent([
            makeGuide({
              slug: 'spice-shelf',
              title: 'Spice notes',
              summary: 'Where they go.',
              markdown: '# Storing saffron\n\nKeep it dry and dark.\n\n- Airtight tin\n- Cool shelf\n',
            }),
            makeGuide({
              slug: 'long-middle',
              title: 'Long middle',
              summary: 'A word in the middle.',
              markdown: `${filler('lorem')}\n\n## Turmeric\n\n${filler('ipsum')}\n`,
            }),
          ]),
        );
        const [shelf] = await search(store, 'tin');
        // A heading and a list item without closing punctuation end with ` · `; after `.` one space does.
        expect(shelf?.snippet).toBe('Storing saffron · Keep it dry and dark. Airtight **tin** · Cool shelf');
        const [middle] = await search(store, 'turmeric');
        expect(middle?.snippet).toMatch(/^…[^…\n]* · \*\*Turmeric\*\* · [^…\n]*…$/);
      });

      it('marks terms that never come close to each other', async () => {
        await store.importContent(
          makeContent([
            makeGuide({
              slug: 'long-read',
              title: 'A long read',
              summary: 'Spices, far apart.',
              markdown: `# A long read\n\n${farApart()}\n`,
            }),
          ]),
        );
        const [far] = await search(store, 'saffron vanilla');
        expect(far?.slug).toBe('long-read');
        expect(far?.snippet).toMatch(/\*\*(saffron|vanilla)\*\*/i);
      });

      it('walks a search exactly once at any page size, through cursors', async () => {
        const all = slugs(await search(store, 'the', 50));
        expect(all.length).toBeGreaterThanOrEqual(5);
        expect(new Set(all).size).toBe(all.length);
        for (const limit of [1, 2, 3, 4]) expect(await walkSearch(store, 'the', limit)).toEqual(all);
      });

      it('never fails on hostile text', async () => {
        for (const text of HOSTILE_QUERIES) {
          const items = await search(store, text);
          expect(Array.isArray(items), text).toBe(true);
          expect(items.every((item) => item.snippet !== undefined)).toBe(true);
        }
        expect(slugs(await search(store, "' OR 1=1 -- espresso"))).toEqual([]);
        expect(slugs(await search(store, '( espresso ) AND ('))).toEqual(['opening-a-cafe']);
        expect(slugs(await search(store, 'cafe:*'))).toEqual(['opening-a-cafe']);
      });
    });

    describe('import', () => {
      const base = (): GuideRecord[] => [
        makeGuide({ slug: 'one', markdown: '# One\n\nFirst body.\n', publishedAt: '2026-01-01T09:00:00Z' }),
        makeGuide({ slug: 'two', markdown: '# Two\n\nSecond body.\n', publishedAt: '2026-01-02T09:00:00Z' }),
        makeGuide({ slug: 'three', status: 'retained', markdown: '# Three\n\nThird body.\n' }),
      ];

      it('reports what it created, and changes nothing when run again', async () => {
        const content = makeContent(base());
        expect(await store.importContent(content)).toEqual({
          created: ['one', 'two', 'three'],
          updated: [],
          unchanged: 0,
          moved: [],
          productChanged: true,
          resourcesChanged: true,
          contentVersion: 1,
        });
        expect(await store.importContent(content)).toEqual({
          created: [],
          updated: [],
          unchanged: 3,
          moved: [],
          productChanged: false,
          resourcesChanged: false,
          contentVersion: 1,
        });
        expect(await store.contentVersion()).toBe(1);
      });

      it('lists every guide as an import plans against it: slug, status, content hash, unpublished ones too', async () => {
        expect(await store.existingGuides()).toEqual([]);
        const guides = base();
        await store.importContent(makeContent(guides));
        const existing = await store.existingGuides();
        expect(existing.toSorted((a, b) => a.slug.localeCompare(b.slug))).toEqual(
          guides
            .map((guide) => ({ slug: guide.slug, status: guide.status, contentHash: hashJson(guide) }))
            .toSorted((a, b) => a.slug.localeCompare(b.slug)),
        );
        await store.importContent(makeContent(guides.slice(1)));
        expect((await store.existingGuides()).find((row) => row.slug === 'one')?.status).toBe('archived');
      });

      it('updates changed guides and reports guides that change state', async () => {
        const guides = base();
        await store.importContent(makeContent(guides));
        const next = [
          { ...guides[0]!, title: 'One, renamed' },
          { ...guides[1]!, status: 'retained' as const },
          { ...guides[2]!, status: 'published' as const, publishedAt: '2026-01-03T09:00:00Z' },
        ];
        expect(await store.importContent(makeContent(next))).toEqual({
          created: [],
          updated: ['one', 'two', 'three'],
          unchanged: 0,
          productChanged: false,
          resourcesChanged: false,
          contentVersion: 2,
          moved: [
            { slug: 'two', from: 'published', to: 'retained' },
            { slug: 'three', from: 'retained', to: 'published' },
          ],
        });
        expect(slugs((await store.listPublishedGuides({ limit: 10 })).items)).toEqual(['three', 'one']);
        expect((await store.getPublishedGuide('one'))?.title).toBe('One, renamed');
        expect(await store.getPublishedGuide('two')).toBeUndefined();
        expect(slugs(await search(store, 'renamed'))).toEqual(['one']);
        expect(await search(store, 'second')).toEqual([]);
      });

      it('archives guides that left the folder, never deletes them, and brings them back', async () => {
        const guides = base();
        await store.importContent(makeContent(guides));
        expect(await store.importContent(makeContent([guides[0]!]))).toMatchObject({
          created: [],
          updated: [],
          unchanged: 1,
          contentVersion: 2,
          moved: [
            { slug: 'two', from: 'published', to: 'archived' },
            { slug: 'three', from: 'retained', to: 'archived' },
          ],
        });
        expect(slugs((await store.listPublishedGuides({ limit: 10 })).items)).toEqual(['one']);
        expect(await store.getPublishedGuide('two')).toBeUndefined();
        expect(await search(store, 'second')).toEqual([]);
        // Archived again is no change.
        expect(await store.importContent(makeContent([guides[0]!]))).toMatchObject({ moved: [], contentVersion: 2 });
        expect(await store.importContent(makeContent(guides))).toMatchObject({
          created: [],
          updated: ['two', 'three'],
          unchanged: 1,
          contentVersion: 3,
          moved: [
            { slug: 'two', from: 'archived', to: 'published' },
            { slug: 'three', from: 'archived', to: 'retained' },
          ],
        });
        expect(slugs((await store.listPublishedGuides({ limit: 10 })).items)).toEqual(['two', 'one']);
      });

      it('changes nothing when an import fails part-way', async () => {
        const guides = base();
        await store.importContent(makeContent(guides, { resources: [{ rel: 'help', href: 'https://example.com/help', title: 'Help' }] }));
        const before = JSON.stringify([
          await store.listPublishedIndex(),
          await store.getPublishedGuide('one'),
          await store.getProduct(),
          await store.getResources(),
          await store.contentVersion(),
        ]);
        // 'two' and 'three' leave the folder, 'one' changes, 'new' arrives, then 'broken' breaks the
        // rule that a published guide has a date: the database refuses it after the other writes.
        const failing = makeContent(
          [
            makeGuide({ slug: 'new', markdown: '# New\n\nFresh body.\n' }),
            { ...guides[0]!, title: 'Changed title' },
            makeGuide({ slug: 'broken', publishedAt: null }),
          ],
          { product: { name: 'Changed', description: 'Changed.' }, resources: [] },
        );
        await expect(store.importContent(failing)).rejects.toThrow();
        const after = JSON.stringify([
          await store.listPublishedIndex(),
          await store.getPublishedGuide('one'),
          await store.getProduct(),
          await store.getResources(),
          await store.contentVersion(),
        ]);
        expect(after).toBe(before);
        expect(await store.getPublishedGuide('new')).toBeUndefined();
        expect(await search(store, 'fresh')).toEqual([]);
        expect(slugs(await search(store, 'second'))).toEqual(['two']);
        // And the store still works: the same content without the broken guide goes in.
        expect(await store.importContent(makeContent(failing.guides.slice(0, 2), { product: failing.product }))).toMatchObject({
          contentVersion: 2,
        });
      });

      it('moves the content version only when something changed', async () => {
        const guides = base();
        const content = makeContent(guides);
        await store.importContent(content);
        expect(await store.contentVersion()).toBe(1);
        await store.importContent(content);
        expect(await store.contentVersion()).toBe(1);
        expect(await store.importContent({ ...content, product: { ...content.product, description: 'New words.' } })).toMatchObject({
          productChanged: true,
          resourcesChanged: false,
          contentVersion: 2,
          updated: [],
          created: [],
        });
        expect(
          await store.importContent({
            ...content,
            product: { ...content.product, description: 'New words.' },
            resources: [{ rel: 'help', href: 'https://example.com/h', title: 'Help' }],
          }),
        ).toMatchObject({ productChanged: false, resourcesChanged: true, contentVersion: 3 });
        expect(await store.contentVersion()).toBe(3);
      });

      describe('streamed as a folder is read (importStream)', () => {
        it('reports what it created, and changes nothing when streamed again', async () => {
          const importStream = streamInto(store);
          const content = makeContent(base());
          expect(await importStream(streamOf(content))).toEqual({
            created: ['one', 'two', 'three'],
            updated: [],
            unchanged: 0,
            moved: [],
            productChanged: true,
            resourcesChanged: true,
            contentVersion: 1,
          });
          const after = await storeState(store);
          expect(await importStream(streamOf(content))).toEqual({
            created: [],
            updated: [],
            unchanged: 3,
            moved: [],
            productChanged: false,
            resourcesChanged: false,
            contentVersion: 1,
          });
          expect(await storeState(store)).toBe(after);
          // The same content given whole finds nothing to change either: both paths write the same rows.
          expect(await store.importContent(content)).toMatchObject({ unchanged: 3, contentVersion: 1 });
          expect(slugs((await store.listPublishedGuides({ limit: 10 })).items)).toEqual(['two', 'one']);
        });

        it('moves the content version only when something changed', async () => {
          const importStream = streamInto(store);
          const content = makeContent(base());
          await importStream(streamOf(content));
          const product = { ...content.product, description: 'New words.' };
          expect(await importStream(streamOf({ ...content, product }))).toMatchObject({
            productChanged: true,
            resourcesChanged: false,
            contentVersion: 2,
            created: [],
            updated: [],
          });
          const resources = [{ rel: 'help', href: 'https://example.com/h', title: 'Help' }];
          expect(await importStream(streamOf({ ...content, product, resources }))).toMatchObject({
            productChanged: false,
            resourcesChanged: true,
            contentVersion: 3,
          });
          expect(await importStream(streamOf({ ...content, product, resources }))).toMatchObject({ unchanged: 3, contentVersion: 3 });
          const changed = [{ ...content.guides[0]!, title: 'One, renamed' }, ...content.guides.slice(1)];
          expect(await importStream(streamOf({ ...content, product, resources, guides: changed }))).toMatchObject({
            updated: ['one'],
            unchanged: 2,
            contentVersion: 4,
          });
          expect(await store.contentVersion()).toBe(4);
        });

        it('archives guides that left the folder, never deletes them, and brings them back', async () => {
          const importStream = streamInto(store);
          const guides = base();
          await importStream(streamOf(makeContent(guides)));
          expect(await importStream(streamOf(makeContent([guides[0]!])))).toMatchObject({
            unchanged: 1,
            contentVersion: 2,
            moved: [
              { slug: 'two', from: 'published', to: 'archived' },
              { slug: 'three', from: 'retained', to: 'archived' },
            ],
          });
          expect(slugs((await store.listPublishedGuides({ limit: 10 })).items)).toEqual(['one']);
          expect(await search(store, 'second')).toEqual([]);
          expect((await store.existingGuides()).map((row) => row.status).sort()).toEqual(['archived', 'archived', 'published']);
          expect(await importStream(streamOf(makeContent([guides[0]!])))).toMatchObject({ moved: [], contentVersion: 2 });
          expect(await importStream(streamOf(makeContent(guides)))).toMatchObject({
            updated: ['two', 'three'],
            contentVersion: 3,
            moved: [
              { slug: 'two', from: 'archived', to: 'published' },
              { slug: 'three', from: 'archived', to: 'retained' },
            ],
          });
          expect(slugs(await search(store, 'second'))).toEqual(['two']);
        });

        it('changes nothing when the stream throws after some guides, and imports them once it does not', async () => {
          const importStream = streamInto(store);
          const guides = base();
          await importStream(
            streamOf(makeContent(guides, { resources: [{ rel: 'help', href: 'https://example.com/help', title: 'Help' }] })),
          );
          const before = await storeState(store);
          // More guides than one statement writes, a changed one, one left out and another product;
          // the folder's problem shows only after all of them were read.
          const next = makeContent([...bulkGuides(600), { ...guides[0]!, title: 'Changed title' }, guides[2]!], {
            product: { name: 'Changed', description: 'Changed.' },
            resources: [],
          });
          await expect(importStream(streamOf(next, { failAfter: next.guides.length }))).rejects.toThrow(
            'a problem found later in the folder',
          );
          expect(await storeState(store)).toBe(before);
          await expect(importStream(streamOf(next, { failAfter: 300 }))).rejects.toThrow('a problem found later in the folder');
          expect(await storeState(store)).toBe(before);
          expect(await store.getPublishedGuide('bulk-0')).toBeUndefined();
          expect(await search(store, 'fresh')).toEqual([]);
          // The import lock and the connection were given back: the same stream without the problem goes in.
          expect(await importStream(streamOf(next))).toMatchObject({
            updated: ['one'],
            unchanged: 1,
            moved: [{ slug: 'two', from: 'published', to: 'archived' }],
            productChanged: true,
            resourcesChanged: true,
            contentVersion: 2,
          });
          expect((await store.listPublishedIndex()).length).toBe(601);
          expect((await store.getPublishedGuide('bulk-599'))?.markdown).toBe(next.guides[599]!.markdown);
          expect(slugs(await search(store, '"fresh body number 599"'))).toEqual(['bulk-599']);
        });

        it('is seen by other connections only once the last guide is in', async () => {
          const importStream = streamInto(store);
          await importStream(streamOf(makeContent(base())));
          const reader = await openAnother();
          const before = await storeState(reader);
          let checked = 0;
          const next = makeContent([...base(), ...bulkGuides(400)]);
          const summary = await importStream(
            streamOf(next, {
              onYielded: async (count) => {
                if (count !== 350) return;
                expect(await storeState(reader)).toBe(before);
                checked += 1;
              },
            }),
          );
          expect(checked).toBe(1);
          expect(summary).toMatchObject({ created: bulkGuides(400).map((g) => g.slug), contentVersion: 2 });
          expect(await reader.contentVersion()).toBe(2);
          expect(await reader.getPublishedGuide('bulk-399')).toBeDefined();
        });
      });

      it('refuses a slug given twice, streamed or whole, and changes nothing', async () => {
        const guides = base();
        await store.importContent(makeContent(guides));
        const before = await storeState(store);
        const twice = makeContent([
          makeGuide({ slug: 'new' }),
          { ...guides[0]!, title: 'First copy' },
          ...bulkGuides(300),
          { ...guides[0]!, title: 'Second copy' },
        ]);
        await expect(store.importContent(twice)).rejects.toThrow(/one.*given twice/);
        expect(await storeState(store)).toBe(before);
        await expect(streamInto(store)(streamOf(twice))).rejects.toThrow(/one.*given twice/);
        expect(await storeState(store)).toBe(before);
        // The same guide twice, unchanged, is refused too: no copy is chosen silently.
        await expect(streamInto(store)(streamOf(makeContent([guides[1]!, guides[1]!])))).rejects.toThrow(/two.*given twice/);
        expect(await storeState(store)).toBe(before);
      });

      it('is seen at once by another connection to the same database', async () => {
        const reader = await openAnother();
        expect(await reader.contentVersion()).toBe(0);
        await store.importContent(makeContent(base()));
        expect(await reader.contentVersion()).toBe(1);
        expect(slugs((await reader.listPublishedGuides({ limit: 10 })).items)).toEqual(['two', 'one']);
      });
    });

    describe('cursor key', () => {
      it('is generated once and shared by every connection, even when they ask at the same time', async () => {
        const others = await Promise.all([openAnother(), openAnother()]);
        const keys = await Promise.all([store.cursorKey(), ...others.map((s) => s.cursorKey()), store.cursorKey()]);
        expect(keys[0]!.length).toBeGreaterThanOrEqual(32);
        for (const key of keys) expect(key.equals(keys[0]!)).toBe(true);
        const later = await openAnother();
        expect((await later.cursorKey()).equals(keys[0]!)).toBe(true);
        await store.importContent(makeContent([makeGuide({ slug: 'one' })]));
        expect((await store.cursorKey()).equals(keys[0]!)).toBe(true);
      });
    });
  });
}
