/**
 * The SQLite search index beyond the shared store contract: pages of a larger generated corpus,
 * snippets from anywhere in long bodies, and databases made by the FTS5 version (schema 1).
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { openSqliteDatabase } from '../../../../src/store/sqlite/sqlite-database.js';
import { afterEach, describe, expect, it } from 'vitest';
import { writeCorpus } from '../../../../bench/corpus.js';
import { loadContentFolder } from '../../../../src/content/load-content.js';
import type { SearchPosition } from '../../../../src/guides/cursor.js';
import { parseSearchQuery } from '../../../../src/guides/search-query.js';
import type { GuideStore, Page } from '../../../../src/store/guide-store.js';
import { SQLITE_MIGRATIONS } from '../../../../src/store/sqlite/sqlite-schema.js';
import { createSqliteGuideStore } from '../../../../src/store/sqlite/sqlite-guide-store.js';
import { createSqliteSearch, searchPage } from '../../../../src/store/sqlite/search/sqlite-search.js';
import type { SqliteSearchOptions } from '../../../../src/store/sqlite/search/sqlite-search.js';
import { makeTempDir } from '../../../helpers/build-test-app.js';
import { makeContent, makeGuide } from '../../../helpers/guide-factory.js';
import { forEachWord, tokenize, tokensOfWord } from '../../../../src/store/sqlite/search/sqlite-text.js';

const dirs: string[] = [];
const stores: GuideStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function openStore(): { store: GuideStore; file: string; dir: string } {
  const dir = makeTempDir('sqlite-search-');
  dirs.push(dir);
  const file = path.join(dir, 'guides.db');
  const store = createSqliteGuideStore(file);
  stores.push(store);
  return { store, file, dir };
}

/** A store with the generated 300-guide corpus imported. */
async function openCorpusStore(): Promise<{ store: GuideStore; file: string }> {
  const { store, file, dir } = openStore();
  writeCorpus(path.join(dir, 'corpus'), { size: 300 });
  const loaded = await loadContentFolder(path.join(dir, 'corpus'));
  await store.importContent(loaded.content!);
  return { store, file };
}

/** Every page (`limit` results each) of a search text, from one search object made with `options` for all the texts it is given. */
function pageWalker(
  db: Parameters<typeof createSqliteSearch>[0],
  options: SqliteSearchOptions,
  limit = 7,
): (text: string) => Page<SearchPosition>[] {
  const search = createSqliteSearch(db, options);
  return (text) => {
    const query = parseSearchQuery(text);
    const pages: Page<SearchPosition>[] = [];
    let after: SearchPosition | undefined;
    do {
      const page = searchPage(search, { query, limit, ...(after ? { after } : {}) });
      pages.push(page);
      after = page.next;
    } while (after);
    return pages;
  };
}

async function walk(store: GuideStore, text: string, limit: number): Promise<{ slugs: string[]; scores: number[] }> {
  const query = parseSearchQuery(text);
  const slugs: string[] = [];
  const scores: number[] = [];
  let after: SearchPosition | undefined;
  for (;;) {
    const page = await store.searchPublishedGuides({ query, limit, ...(after ? { after } : {}) });
    slugs.push(...page.items.map((item) => item.slug));
    if (!page.next) return { slugs, scores };
    scores.push(page.next.score);
    after = page.next;
  }
}

describe('SQLite search', () => {
  it('walks every kind of query over a generated corpus exactly once, in one order, at any page size', async () => {
    const { store } = await openCorpusStore();
    for (const text of ['the', 'food kitchen', 'a', 'th', 'allergen', '"of the"', 'staff sch', 'the of and to', 'menu "the"']) {
      const whole = await walk(store, text, 50);
      expect(whole.slugs.length, text).toBeGreaterThan(0);
      expect(new Set(whole.slugs).size, text).toBe(whole.slugs.length);
      // Scores of successive pages never improve (lower is better).
      for (let i = 1; i < whole.scores.length; i += 1) expect(whole.scores[i]!, text).toBeGreaterThanOrEqual(whole.scores[i - 1]!);
      for (const limit of [1, 7, 20]) expect((await walk(store, text, limit)).slugs, `${text} by ${limit}`).toEqual(whole.slugs);
    }
  });

  it("finds a quoted phrase exactly where its words follow each other in one field (checked against every guide's text)", async () => {
    const { store, file } = await openCorpusStore();
    // Each published guide's fields as the index reads them: title, summary, tags, plain text.
    const db = openSqliteDatabase(file, { readonly: true });
    const parts = db.prepare<[number, number], string>('SELECT text FROM guide_text_parts WHERE id >= ? AND id < ? ORDER BY id').pluck();
    const guides = (
      db.prepare("SELECT id, slug, title, summary, tags FROM guides WHERE status = 'published'").all() as {
        id: number;
        slug: string;
        title: string;
        summary: string;
        tags: string;
      }[]
    )
      .map((g) => ({
        slug: g.slug,
        texts: [g.title, g.summary, (JSON.parse(g.tags) as string[]).join(' '), parts.all(g.id * 65536, (g.id + 1) * 65536).join('')],
      }))
      .map((g) => ({ ...g, fields: g.texts.map((text) => tokenize(text)) }));
    db.close();
    const holds = (fields: string[][], phrase: string[]): boolean =>
      fields.some((tokens) => tokens.some((_, i) => phrase.every((token, j) => tokens[i + j] === token)));
    // Phrases of 2–3 words taken from the guides (so they match somewhere), some shuffled (so
    // they often do not), rare and very common words alike: varints of one and two bytes.
    let state = 7;
    const random = (n: number): number => (state = (state * 48271) % 2147483647) % n;
    const phrases: string[][] = [];
    for (let i = 0; i < 120; i += 1) {
      const text = guides[random(guides.length)]!.texts[random(4)]!;
      const words: string[] = [];
      forEachWord(text, (start, end) => {
        words.push(text.slice(start, end));
      });
      if (words.length < 3) continue;
      const at = random(words.length - 2);
      const phrase = words.slice(at, at + 2 + random(2));
      phrases.push(i % 3 === 0 ? [...phrase].reverse() : phrase);
    }
    let matched = 0;
    for (const words of phrases) {
      const phrase = words.flatMap((word) => tokensOfWord(word));
      const expected = guides
        .filter((g) => holds(g.fields, phrase))
        .map((g) => g.slug)
        .sort();
      const found = (await walk(store, `"${words.join(' ')}"`, 50)).slugs.sort();
      expect(found, words.join(' ')).toEqual(expected);
      if (expected.length > 0) matched += 1;
    }
    expect(matched).toBeGreaterThan(60);
  });

  it('gives the same pages, scores and snippets whether lists are read by blocks or decoded whole (as impacts cached, evicted or not kept)', async () => {
    const { file } = await openCorpusStore();
    const db = openSqliteDatabase(file, { readonly: true });
    try {
      // One search object per variant for all the texts, so its cache fills (and, the last ones, overflows).
      const decoded = pageWalker(db, { blockTables: false, impactMinDf: Number.POSITIVE_INFINITY });
      // The lists of common words have block tables: read by blocks, the blocks that cannot reach the page skipped.
      const byBlocks = pageWalker(db, {});
      const allKept = pageWalker(db, { blockTables: false, impactMinDf: 1 });
      // Room for eight lists of 300 documents: the texts below use more, so lists are evicted and made again.
      const evicting = pageWalker(db, { blockTables: false, impactMinDf: 1, impactCacheBytes: 12 * 300 * 8 });
      // Room for a few lists as read: most are read again, and a query of many words finds its own
      // earlier lists in the way (kept until scored, so the later ones are used uncached).
      const fewLists = pageWalker(db, { postingsCacheBytes: 8 * 1024, impactMinDf: 1, impactCacheBytes: 12 * 300 * 8 });
      const texts = [
        'the',
        'food kitchen',
        'a',
        'th',
        'staff sch',
        'the of and to',
        'menu "the"',
        'kitchen the',
        'of',
        'and',
        'to',
        'with',
        'for',
        'the of and to a in is it for with on that kitchen staff',
        'of the',
        'and to the',
        'a to of and',
        'the of and to a',
        'the the',
        'to of to',
      ];
      for (const round of [1, 2]) {
        for (const text of texts) {
          const expected = decoded(text);
          expect(expected.length, text).toBeGreaterThan(1);
          expect(byBlocks(text), `${text}, round ${round}`).toEqual(expected);
          expect(allKept(text), `${text}, round ${round}`).toEqual(expected);
          expect(evicting(text), `${text}, round ${round}`).toEqual(expected);
          expect(fewLists(text), `${text}, round ${round}`).toEqual(expected);
        }
      }
    } finally {
      db.close();
    }
  });

  it('pages guides of equal score in list order (newest first, then slug) across every page boundary, whether their lists are read by blocks or decoded', async () => {
    const { store, file } = openStore();
    // Eight guides alike but for slug and date (so every word scores the same in each), three
    // sharing one date; four others with "salt" but not "saffron", each its own length.
    const twin = {
      title: 'Saffron notes',
      summary: 'Saffron and salt.',
      tags: ['saffron'],
      markdown: '# Saffron\n\nSaffron with salt and rice.\n',
    };
    const dates = ['2026-03-01', '2026-02-01', '2026-02-01', '2026-04-01', '2026-02-01', '2026-01-01', '2026-05-01', '2026-01-15'];
    const twins = dates.map((date, i) => ({ date, slug: `twin-${'hcfagbed'[i]}` }));
    const others = [1, 2, 3, 4].map((n) =>
      makeGuide({ slug: `other-${n}`, title: 'Pantry', summary: 'Salt.', markdown: `# Pantry\n\n${'Salt and rice, plain. '.repeat(n)}\n` }),
    );
    await store.importContent(
      makeContent([...twins.map(({ date, slug }) => makeGuide({ ...twin, slug, publishedAt: `${date}T09:00:00Z` })), ...others]),
    );
    const listOrder = [...twins].sort((a, b) => b.date.localeCompare(a.date) || (a.slug < b.slug ? -1 : 1)).map((guide) => guide.slug);
    const db = openSqliteDatabase(file, { readonly: true });
    try {
      for (const limit of [1, 2, 3, 7]) {
        // "saffron" is in 8 of the 12 guides and "salt" in all: lists with block tables.
        const byBlocks = pageWalker(db, {}, limit);
        const decoded = pageWalker(db, { blockTables: false, impactMinDf: Number.POSITIVE_INFINITY }, limit);
        for (const text of ['saffron', 'saffron salt', 'salt saffron rice', 'salt']) {
          const slugs = byBlocks(text).flatMap((page) => page.items.map((item) => item.slug));
          expect(
            slugs.filter((slug) => slug.startsWith('twin-')),
            `${text} by ${limit}`,
          ).toEqual(listOrder);
          expect(
            decoded(text).flatMap((page) => page.items.map((item) => item.slug)),
            `${text} by ${limit}`,
          ).toEqual(slugs);
        }
      }
    } finally {
      db.close();
    }
  });

  it("finds the same snippets by searching a body's bytes for the query's ids as by decoding every token", async () => {
    const { file } = await openCorpusStore();
    const db = openSqliteDatabase(file, { readonly: true });
    try {
      const decoding = pageWalker(db, { snippetSearchMaxIds: 0 });
      const searching = pageWalker(db, { snippetSearchMaxIds: 64 });
      // Common words (hits everywhere, windows found early), pairs that rarely meet (whole bodies
      // searched), a word twice, prefixes of few and many expansions, phrases, words in titles only.
      const texts = [
        'the',
        'food kitchen',
        'kitchen the of',
        'staff staff',
        'menu "the"',
        '"of the" kitchen',
        'th',
        'kitch',
        'staff sch',
        'the of and to a in is it for with on that kitchen staff',
        'service prep',
        'a',
      ];
      let snippets = 0;
      for (const text of texts) {
        const expected = decoding(text);
        expect(searching(text), text).toEqual(expected);
        snippets += expected.reduce((sum, page) => sum + page.items.length, 0);
      }
      expect(snippets).toBeGreaterThan(1000);
    } finally {
      db.close();
    }
  });

  it('finds the words, snippets and phrases of a guide whose token ids pass 65,535, and of a body of 70,000 words', async () => {
    const { store } = openStore();
    // Guides are indexed newest first and tokens numbered as met: the newest guide's 70,000
    // distinct words take the ids up to ~70,000, so the older guide's words all come after 65,535
    // (varints of three bytes, in phrases too).
    const many = Array.from({ length: 70_000 }, (_, i) => `w${i.toString(36)}q`).join(' ');
    await store.importContent(
      makeContent([
        makeGuide({
          slug: 'many-words',
          title: 'Many',
          summary: 'Many words.',
          publishedAt: '2026-02-01T09:00:00Z',
          markdown: `# Many\n\n${many} final walrus\n`,
        }),
        makeGuide({
          slug: 'late-words',
          title: 'Late',
          summary: 'Late words.',
          publishedAt: '2026-01-01T09:00:00Z',
          markdown: '# Late\n\nThe zanzibar quokka met a xylophone walrus by the sea.\n',
        }),
      ]),
    );
    const search = async (text: string): Promise<{ slug: string; snippet?: string | undefined }[]> =>
      (await store.searchPublishedGuides({ query: parseSearchQuery(text), limit: 5 })).items.map(({ slug, snippet }) => ({
        slug,
        snippet,
      }));
    expect(await search('quokka')).toEqual([
      { slug: 'late-words', snippet: 'Late · The zanzibar **quokka** met a xylophone walrus by the sea.' },
    ]);
    expect(await search('"zanzibar quokka"')).toEqual([
      { slug: 'late-words', snippet: 'Late · The **zanzibar** **quokka** met a xylophone walrus by the sea.' },
    ]);
    expect(await search('"quokka zanzibar"')).toEqual([]);
    expect((await search('"xylophone walrus"')).map((item) => item.slug)).toEqual(['late-words']);
    // A word of both guides; in the first, at its body's end (70,000 tokens in).
    const walrus = await search('walrus');
    expect(walrus.map((item) => item.slug).sort()).toEqual(['late-words', 'many-words']);
    expect(walrus.find((item) => item.slug === 'many-words')?.snippet).toMatch(/^…(w[0-9a-z]+q ){21}w1i0fq final \*\*walrus\*\*$/);
    expect(await search(`"w${(69_998).toString(36)}q w${(69_999).toString(36)}q final"`)).toHaveLength(1);
  });

  it('takes the first window with the most query terms, not the first hit, for a snippet', async () => {
    const { store } = openStore();
    const filler = (word: string, count: number): string => Array.from({ length: count }, (_, i) => `${word}${i % 7}`).join(' ');
    // "walrus" alone early; "walrus" with "tusk" later; "tusk" with "walrus" and "ivory" later still,
    // past which the scan stops (it has every term); a later window with all three must not win.
    const markdown =
      `# Notes\n\n${filler('alpha', 30)} walrus ${filler('beta', 60)} walrus and tusk ${filler('gamma', 60)} ` +
      `ivory tusk walrus here ${filler('delta', 60)} walrus ivory tusk again ${filler('omega', 30)}\n`;
    await store.importContent(makeContent([makeGuide({ slug: 'walrus', title: 'Notes', summary: 'Notes.', markdown })]));
    const snippet = async (text: string): Promise<string | undefined> =>
      (await store.searchPublishedGuides({ query: parseSearchQuery(text), limit: 5 })).items[0]?.snippet;
    expect(await snippet('walrus')).toMatch(/alpha\d \*\*walrus\*\* beta0/);
    expect(await snippet('walrus tusk')).toMatch(/\*\*walrus\*\* and \*\*tusk\*\* gamma0/);
    expect(await snippet('walrus tusk ivory')).toMatch(/\*\*ivory\*\* \*\*tusk\*\* \*\*walrus\*\* here/);
  });

  it('ranks the guide whose title holds every query word first, however long its body (BM25F: each column against its own length)', async () => {
    const filler = (count: number): string => Array.from({ length: count }, (_, i) => `word${i % 97}`).join(' ');
    for (const bodyWords of [40, 2_000, 20_000]) {
      const { store } = openStore();
      await store.importContent(
        makeContent([
          makeGuide({
            slug: 'both',
            title: 'Walrus tusk care',
            summary: 'Notes.',
            markdown: `# Care\n\nA walrus keeps its tusk clean. ${filler(bodyWords)}\n`,
          }),
          makeGuide({
            slug: 'walrus',
            title: 'Walrus feeding',
            summary: 'Notes.',
            markdown: `# Feeding\n\n${filler(100)} Mind the tusk.\n`,
          }),
          makeGuide({
            slug: 'tusk',
            title: 'Tusk carving',
            summary: 'Notes.',
            markdown: `# Carving\n\n${filler(100)} Never from a live walrus.\n`,
          }),
          ...['a', 'b', 'c', 'd'].map((slug) =>
            makeGuide({ slug, title: `Other ${slug}`, summary: 'Notes.', markdown: `# Other\n\n${filler(300)}\n` }),
          ),
        ]),
      );
      const { items } = await store.searchPublishedGuides({ query: parseSearchQuery('walrus tusk'), limit: 3 });
      expect(
        items.map((item) => item.slug),
        `body of ${bodyWords} words`,
      ).toEqual(['both', expect.any(String), expect.any(String)]);
    }
  });

  it('takes a snippet from the summary, then the title, then the tags when the body has no hit', async () => {
    const { store } = openStore();
    const markdown = '# Rice\n\nCook it slowly and stir often.\n';
    await store.importContent(
      makeContent([
        makeGuide({ slug: 'in-summary', title: 'Rice basics', summary: 'A pinch of saffron goes a long way.', tags: ['rice'], markdown }),
        makeGuide({ slug: 'in-title', title: 'Saffron risotto', summary: 'Rice, slowly.', tags: ['rice'], markdown }),
        makeGuide({ slug: 'in-tags', title: 'Spice shelf', summary: 'What to keep.', tags: ['paprika', 'saffron'], markdown }),
        makeGuide({ slug: 'in-all', title: 'Saffron rice', summary: 'Saffron, twice.', tags: ['saffron'], markdown }),
      ]),
    );
    const { items } = await store.searchPublishedGuides({ query: parseSearchQuery('saffron'), limit: 10 });
    expect(Object.fromEntries(items.map((item) => [item.slug, item.snippet]))).toEqual({
      'in-summary': 'A pinch of **saffron** goes a long way.',
      'in-title': '**Saffron** risotto',
      'in-tags': 'paprika **saffron**',
      'in-all': '**Saffron**, twice.',
    });
  });

  it("renders a snippet's words with one space between them, keeps their punctuation and drops asterisks that are not its marks", async () => {
    const { store } = openStore();
    await store.importContent(
      makeContent([
        makeGuide({
          slug: 'spaced',
          title: 'Pantry',
          summary: 'Keep   the *saffron*  dry,\tplease:  *cool* place.',
          tags: ['pantry'],
          markdown: '# Pantry\n\nShelves and bins.\n',
        }),
      ]),
    );
    const snippet = async (text: string): Promise<string | undefined> =>
      (await store.searchPublishedGuides({ query: parseSearchQuery(text), limit: 5 })).items[0]?.snippet;
    expect(await snippet('saffron')).toBe('Keep the **saffron** dry, please: cool place.');
    expect(await snippet('saffron dry')).toBe('Keep the **saffron** **dry**, please: cool place.');
    expect(await snippet('keep place')).toBe('**Keep** the saffron dry, please: cool **place**.');
  });

  it('takes snippets from anywhere in a long body, past astral characters, with the words around the match', async () => {
    const { store } = openStore();
    const filler = (word: string, count: number): string => Array.from({ length: count }, (_, i) => `${word}${i % 7}`).join(' ');
    const markdown = `# Long\n\n${'😀 '.repeat(700)}${filler('lorem', 400)} the quokka waits by the walk-in door ${filler('ipsum', 400)}\n`;
    await store.importContent(makeContent([makeGuide({ slug: 'long', markdown })]));
    const [item] = (await store.searchPublishedGuides({ query: parseSearchQuery('quokka'), limit: 5 })).items;
    expect(item?.snippet).toMatch(/^….*lorem\d the \*\*quokka\*\* waits by the walk-in door ipsum0.*…$/);
  });

  it("renders the words around a match wherever it falls among the body's stored parts of text", async () => {
    const { store } = openStore();
    // 1,200 distinct words of 5 to 13 characters: ~12,000 characters, twelve stored parts of 1,024,
    // whose ends fall at every place in a word and between words. Every word is searched for: its
    // window starts two words before it (or is the body's last 24 words) and holds 24 words.
    const words = Array.from({ length: 1200 }, (_, i) => `k${String(i).padStart(4, '0')}${'x'.repeat((i * 7) % 9)}`);
    await store.importContent(makeContent([makeGuide({ slug: 'parts', markdown: `# Parts\n\n${words.join(' ')}\n` })]));
    const tokens = ['Parts', ...words];
    for (let hit = 1; hit < tokens.length; hit += 1) {
      const [item] = (await store.searchPublishedGuides({ query: parseSearchQuery(tokens[hit] as string), limit: 5 })).items;
      const start = Math.max(0, Math.min(hit - 2, tokens.length - 24));
      const end = start + 24;
      // The heading `Parts` ends without punctuation: a window that holds it shows the break as ` · `.
      const window = tokens
        .slice(start, end)
        .map((word, i) => (start + i === hit ? `**${word}**` : word))
        .join(' ')
        .replace(/^Parts /, 'Parts · ');
      // A window's last word ending exactly where a part ends was once taken for a word cut by the
      // slice of text read: the snippet came a word short, or at the body's end with it unmarked.
      expect(item?.snippet, tokens[hit]).toBe(`${start > 0 ? '…' : ''}${window}${end < tokens.length ? '…' : ''}`);
    }
  });

  it('migrates a database made by the FTS5 version and finds its guides', async () => {
    const dir = makeTempDir('sqlite-migrate-');
    dirs.push(dir);
    const file = path.join(dir, 'guides.db');
    const old = openSqliteDatabase(file);
    const first = SQLITE_MIGRATIONS[0]!;
    old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
    old.exec(first.sql);
    old.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (1, ?)').run(new Date().toISOString());
    old
      .prepare(
        `INSERT INTO guides (id, slug, status, title, summary, tags, language, published_at, published_ms, updated_at, markdown,
      word_count, reading_time_minutes, headings, content_hash) VALUES (7, 'cold-chain', 'published', 'Cold chain', 'Keep it cold.', '["food-safety"]',
      'en', '2026-01-01T09:00:00Z', ?, NULL, '# Cold chain\n\nReceive chilled deliveries at 5 °C or below.\n', 8, 1, '[]', 'h')`,
      )
      .run(Date.parse('2026-01-01T09:00:00Z'));
    old
      .prepare('INSERT INTO guides_fts (rowid, title, summary, tags, body) VALUES (7, ?, ?, ?, ?)')
      .run('Cold chain', 'Keep it cold.', 'food-safety', 'Cold chain\nReceive chilled deliveries at 5 °C or below.');
    old.prepare("UPDATE meta SET value = '1' WHERE key = 'content_version'").run();
    old.close();

    const store = createSqliteGuideStore(file);
    stores.push(store);
    const page = await store.searchPublishedGuides({ query: parseSearchQuery('deliveries'), limit: 5 });
    expect(page.items.map((item) => [item.slug, item.snippet])).toEqual([
      ['cold-chain', 'Cold chain · Receive chilled **deliveries** at 5 °C or below.'],
    ]);
    expect((await store.listPublishedGuides({ limit: 5 })).items.map((item) => item.slug)).toEqual(['cold-chain']);
  });
});
