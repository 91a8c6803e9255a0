/**
 * Search input safety on both backends. A corpus of hostile text (FTS5 and tsquery operators,
 * quotes, parentheses, NEAR, `*`, `^`, column filters, SQL fragments, 200-character runs of
 * operators, odd unicode) goes through the HTTP API and straight into each store through
 * parseSearchQuery; generated text and hand-made terms follow. Whatever comes in: no error, only
 * published guides, and no marker word of an unpublished guide in any field, snippet or cursor page.
 * Control characters never reach a store: the HTTP layer refuses them with 400.
 *
 * The store contract suite (test/store/guide-store.contract.ts) has a short hostile list per
 * backend; this file is the long one, with unpublished guides that share every common word.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContentSet } from '../../src/guides/guide.js';
import { parseSearchQuery } from '../../src/guides/search-query.js';
import type { SearchQuery } from '../../src/guides/search-query.js';
import type { GuideStore } from '../../src/store/guide-store.js';
import { createPostgresGuideStore } from '../../src/store/postgres/postgres-guide-store.js';
import { createSqliteGuideStore } from '../../src/store/sqlite/sqlite-guide-store.js';
import { buildTestApp, makeTempDir } from '../helpers/build-test-app.js';
import type { TestApp } from '../helpers/build-test-app.js';
import { createTestDatabase, requirePostgres } from '../helpers/postgres-database.js';
import type { TestDatabase } from '../helpers/postgres-database.js';
import { HOSTILE_QUERIES } from '../store/guide-store.contract.js';
import { MARKERS, markerIn, sampleWithMarkers } from '../helpers/unpublished-markers.js';

const hasPostgres = await requirePostgres('the hostile search suite against PostgreSQL');

const OPERATOR_ALPHABET = [
  ...'()*"^:-+|&!~<>{}[]\'\\/.,;=?@#$%`_',
  ' ',
  'NEAR',
  'NEAR/2',
  'AND',
  'OR',
  'NOT',
  '<->',
  '<2>',
  ':*',
  ':A',
  ':*AB',
];

/** 200-character strings made only of operators, seeded so every run tries the same ones first. */
function operatorRuns(): string[] {
  const generated = fc.sample(
    fc.array(fc.constantFrom(...OPERATOR_ALPHABET), { minLength: 60, maxLength: 200 }).map((parts) => parts.join('').slice(0, 200)),
    { seed: 7, numRuns: 25 },
  );
  return [
    ...generated,
    ...['*', '"', '(', ')', '^', ':', '-', '|', '&', '!', '\\', "'", 'NEAR ', 'OR ', '<-> ', ':* '].map((op) =>
      op.repeat(200).slice(0, 200),
    ),
    '"^*:-'.repeat(40),
    '()*"^:-+|&!~<>{}[]\'\\'.repeat(10),
  ];
}

/** The hostile corpus: every word a search engine might read as syntax, and SQL that might escape a string. */
export const HOSTILE_SEARCH_CORPUS: readonly string[] = [
  ...HOSTILE_QUERIES,
  // FTS5: column filters, NEAR groups, initial-token ^, prefix *, boolean operators, + concatenation, {col col}: sets.
  'title:menu',
  'body:kitchen',
  'summary:food',
  'tags:kitchen',
  'guides_fts:menu',
  'rank:1',
  '{title summary}: menu',
  '- title: menu',
  '-body:menu',
  'NEAR(menu kitchen)',
  'NEAR(menu kitchen, 2)',
  'NEAR(menu kitchen, -1)',
  'NEAR(',
  'NEAR()',
  'menu NEAR/3 kitchen',
  'NEAR/0',
  '^menu',
  'menu ^kitchen',
  'menu* kitchen*',
  '*menu',
  'me*nu',
  'menu +kitchen',
  'menu + kitchen',
  'menu AND kitchen',
  'menu OR kitchen',
  'menu NOT kitchen',
  'NOT menu',
  'AND AND',
  'OR OR OR',
  '(menu',
  'menu)',
  '((((((((((menu))))))))))',
  '"menu" "kitchen"',
  '"menu kitchen',
  'menu" kitchen"',
  '""menu""',
  'bm25(guides_fts)',
  'highlight(guides_fts, 0, "<", ">")',
  'snippet(x)',
  'MATCH',
  "guides_fts MATCH 'menu'",
  // tsquery: & | ! <-> <N> :* weights, quoting, backslashes.
  'menu & kitchen',
  'menu | kitchen',
  '!menu',
  '!!menu',
  'menu <-> kitchen',
  'menu <3> kitchen',
  'menu:*',
  'menu:A',
  'menu:*AB',
  "'menu'",
  "''menu''",
  "'menu' & 'kitchen'",
  'menu\\:*',
  "\\'",
  "\\\\'",
  "to_tsquery('menu')",
  'menu::tsquery',
  "E'\\x00'",
  '$1',
  '$$menu$$',
  '$tag$menu$tag$',
  // SQL fragments.
  "'; DROP TABLE guides; --",
  '"; DROP TABLE guides; --',
  "' UNION SELECT slug, title FROM guides --",
  "' OR status = 'retained",
  "1' OR '1'='1",
  'menu; SELECT 1',
  '/* comment */ menu',
  'menu -- comment',
  "' AND pg_sleep(5) --",
  "'; PRAGMA writable_schema=1; --",
  'randomblob(1000000000)',
  "menu' || (SELECT markdown FROM guides WHERE status <> 'published') || '",
  'status:retained',
  'status:archived',
  'published:false',
  // Unicode oddities: combining marks alone, bidi controls, zero-width joiners, fullwidth, ligatures, surrogates, NFKC expansions.
  '\u0301\u0301\u0301',
  '\u200Dmenu\u200D',
  '\u200B',
  '\uFEFFmenu',
  'ｍｅｎｕ',
  'ﬁ ﬂ ﬃ',
  '㎏',
  'Ⅻ menu',
  '\u{1F468}\u200D\u{1F373}',
  'menu\u{E0001}',
  'İstanbul',
  'ǅ',
  'ß',
  'ΣΑΣ',
  'ﷺ',
  '\u0660\u0661',
  '𝐦𝐞𝐧𝐮',
  'm\u0308enu',
  'cafe\u0301',
  '\uD83D',
  '\uDE00menu',
  ...operatorRuns(),
];

/** Texts with a control character never reach a store over HTTP (400); the rest must be a 200. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001F\u007F]/;
// eslint-disable-next-line no-control-regex -- removing control characters is the point
const CONTROL_ALL = /[\u0000-\u001F\u007F]/g;

/** Lone surrogates cannot be percent-encoded as UTF-8: they go out as U+FFFD, as a browser sends them. */
function encodeQuery(text: string): string {
  return encodeURIComponent(text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD'));
}

interface Backend {
  name: string;
  open(): Promise<{ store: GuideStore; cleanup(): Promise<void> }>;
}

const backends: Backend[] = [
  {
    name: 'sqlite',
    open: async () => {
      const dir = makeTempDir('guides-hostile-');
      return { store: createSqliteGuideStore(`${dir}/guides.db`), cleanup: async () => undefined };
    },
  },
];
if (hasPostgres) {
  backends.push({
    name: 'postgres',
    open: async () => {
      const database: TestDatabase = await createTestDatabase();
      return { store: createPostgresGuideStore({ connectionString: database.url, poolSize: 4 }), cleanup: () => database.drop() };
    },
  });
}

describe.each(backends)('hostile search text on $name', (backend) => {
  let t: TestApp;
  let content: ContentSet;
  let published: Set<string>;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    content = await sampleWithMarkers();
    published = new Set(content.guides.filter((g) => g.status === 'published').map((g) => g.slug));
    const opened = await backend.open();
    cleanup = opened.cleanup;
    t = await buildTestApp({ store: opened.store, content, env: { RATE_LIMIT_PER_MINUTE: '1000000', MAX_EVENT_LOOP_DELAY_MS: '0' } });
  });
  afterAll(async () => {
    await t?.close();
    await cleanup?.();
  });

  /** Searches the store directly and walks up to `pages` pages at `limit`, checking every item. */
  async function searchStore(query: SearchQuery, limit = 5, pages = 3): Promise<string[]> {
    const found: string[] = [];
    if (query.terms.length === 0) return found;
    let after: Awaited<ReturnType<GuideStore['searchPublishedGuides']>>['next'];
    for (let page = 0; page < pages; page += 1) {
      const result = await t.store.searchPublishedGuides({ query, limit, ...(after ? { after } : {}) });
      for (const item of result.items) {
        expect(published.has(item.slug), `${JSON.stringify(query.terms)}: ${item.slug} is not published`).toBe(true);
        expect(markerIn(JSON.stringify(item)), JSON.stringify(query.terms)).toBeUndefined();
        expect(typeof item.snippet, item.slug).toBe('string');
        found.push(item.slug);
      }
      if (!result.next) break;
      after = result.next;
    }
    expect(new Set(found).size, JSON.stringify(query.terms)).toBe(found.length);
    return found;
  }

  it(`answers all ${HOSTILE_SEARCH_CORPUS.length} hostile texts over HTTP with 200 and published guides only, or 400 for control characters`, async () => {
    for (const q of HOSTILE_SEARCH_CORPUS) {
      const res = await t.app.inject({ url: `/api/v1/guides?q=${encodeQuery(q)}&limit=50` });
      const trimmed = q.trim();
      if (CONTROL.test(q)) {
        expect(res.statusCode, JSON.stringify(q)).toBe(400);
        expect(res.json().errors, JSON.stringify(q)).toEqual([expect.objectContaining({ name: 'q' })]);
      } else if (trimmed.length > 200) {
        expect(res.statusCode, JSON.stringify(q)).toBe(400);
      } else {
        expect(res.statusCode, `${JSON.stringify(q)} ${res.body.slice(0, 200)}`).toBe(200);
        const items = res.json<{ items: { slug: string }[] }>().items;
        for (const item of items) expect(published.has(item.slug), `${JSON.stringify(q)} → ${item.slug}`).toBe(true);
      }
      expect(markerIn(res.body), JSON.stringify(q)).toBeUndefined();
    }
  });

  it('passes every hostile text through parseSearchQuery into the store without an error, a leak or a duplicate across pages', async () => {
    for (const text of HOSTILE_SEARCH_CORPUS) await searchStore(parseSearchQuery(text), 2, 4);
  });

  it('finds nothing when a marker word of an unpublished guide is a term, whatever operators surround it', async () => {
    const wrappers = [
      '%',
      '"%"',
      '%*',
      '*%',
      '^%',
      'title:%',
      'body:%',
      '% OR menu',
      'menu OR %',
      'NOT %',
      '!%',
      '% | menu',
      'menu | %',
      '%:*',
      "'%'",
      '(%)',
      'NEAR(% menu)',
      '"% kitchen"',
      '{title}: %',
      '-%',
      '% --',
      "' OR title LIKE '%' --",
      '%.slice(0, 5)',
    ];
    for (const marker of MARKERS) {
      for (const wrapper of wrappers) {
        const text = wrapper === '%.slice(0, 5)' ? marker.slice(0, 5) : wrapper.replaceAll('%', marker);
        const found = await searchStore(parseSearchQuery(text));
        // A five-letter prefix is a real prefix search: it may find published guides, never the marked ones.
        if (wrapper !== '%.slice(0, 5)') expect(found, text).toEqual([]);
      }
    }
  });

  it('survives generated text: any unicode, operator soup and hostile fragments, up to 200 characters', async () => {
    let cases = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 200 }),
          fc.string({ unit: 'grapheme', maxLength: 60 }),
          fc
            .array(fc.constantFrom(...OPERATOR_ALPHABET, 'menu', 'kitchen', 'food', 'a', 'the', ...MARKERS), { maxLength: 40 })
            .map((p) => p.join('').slice(0, 200)),
          fc.array(fc.constantFrom(...HOSTILE_SEARCH_CORPUS.slice(0, 150)), { maxLength: 5 }).map((p) => p.join(' ').slice(0, 200)),
        ),
        async (text) => {
          cases += 1;
          await searchStore(parseSearchQuery(text), 3, 2);
        },
      ),
      { numRuns: 300 },
    );
    console.log(`[hostile-search] ${backend.name}: ${cases} generated texts through parseSearchQuery`);
  });

  // Found by the property below (CI, seed -1051998158): PostgreSQL kept only the last of several
  // prefix terms, so a marker word in an earlier one was dropped and published guides came back.
  it('matches every one of several prefix terms (none is dropped)', async () => {
    const terms = [
      { words: ['zqxhidden'], isPrefix: true },
      { words: ['!menu'], isPrefix: true },
    ];
    expect(await searchStore({ text: 'zqxhidden !menu', terms })).toEqual([]);
    expect(
      await searchStore({
        text: 'menu zqxhidden',
        terms: [
          { words: ['menu'], isPrefix: true },
          { words: ['zqxhidden'], isPrefix: true },
        ],
      }),
    ).toEqual([]);
    // And two real prefixes still find guides that have both.
    expect(
      await searchStore({
        text: 'menu kitchen',
        terms: [
          { words: ['menu'], isPrefix: true },
          { words: ['kitchen'], isPrefix: true },
        ],
      }),
    ).not.toEqual([]);
  });

  // Control characters stay out: the HTTP layer refuses them and parseSearchQuery never yields them
  // (FTS5 reads a NUL inside a quoted string as its end, "unterminated string").
  it('survives hand-made terms that parseSearchQuery never produces (quotes, operators, empty and huge words)', async () => {
    const oddWord = fc.oneof(
      fc.constantFrom(
        '',
        '"',
        '""',
        '*',
        "'",
        "''",
        '\\',
        ':*',
        'a b',
        'menu"',
        'NEAR',
        '-',
        'title:menu',
        '&',
        '!menu',
        '|',
        '<->',
        ')',
        '(',
        '^',
        'x'.repeat(5000),
        '\uD800',
        'zqxhidden',
        'menu',
        'kitchen',
      ),
      fc.string({ unit: 'binary', maxLength: 20 }).map((word) => word.replace(CONTROL_ALL, '')),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ words: fc.array(oddWord, { minLength: 1, maxLength: 3 }), isPrefix: fc.boolean() }), {
          minLength: 1,
          maxLength: 4,
        }),
        async (terms) => {
          const found = await searchStore({ text: terms.flatMap((term) => term.words).join(' '), terms }, 3, 2);
          // Every term must match, and marker words are in unpublished guides only.
          if (terms.some((term) => term.words.some((word) => (MARKERS as readonly string[]).includes(word)))) expect(found).toEqual([]);
        },
      ),
      { numRuns: 200 },
    );
  });
});
