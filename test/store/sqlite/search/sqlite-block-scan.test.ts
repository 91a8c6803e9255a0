/**
 * Block-max pruning (sqlite-block-scan.ts) skips guides that cannot reach a page: the page must be
 * the one that scoring every match gives, to the last bit of every score, in the same order, at
 * every page size and cursor position. Checked against a reference written here from the stored
 * posting lists alone (every match scored, sorted, cut after the cursor), over generated queries of
 * every kind the benchmark sends and more, on a corpus of many blocks.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeCorpus } from '../../../../bench/corpus.js';
import { SEARCH_KINDS, searchPaths } from '../../../../bench/searches.js';
import { loadContentFolder } from '../../../../src/content/load-content.js';
import type { SearchPosition } from '../../../../src/guides/cursor.js';
import { parseSearchQuery } from '../../../../src/guides/search-query.js';
import { BLOCK_DOCS } from '../../../../src/store/sqlite/search/sqlite-block-table.js';
import { VarintReader, idfOf, impactOf } from '../../../../src/store/sqlite/search/sqlite-index-format.js';
import { createSqliteSearch } from '../../../../src/store/sqlite/search/sqlite-search.js';
import type { SqliteSearch, SqliteSearchOptions } from '../../../../src/store/sqlite/search/sqlite-search.js';
import { wordTokens } from '../../../../src/store/sqlite/search/sqlite-text.js';
import { openSqliteDatabase } from '../../../../src/store/sqlite/sqlite-database.js';
import { createSqliteGuideStore } from '../../../../src/store/sqlite/sqlite-guide-store.js';
import { makeTempDir } from '../../../helpers/build-test-app.js';

const GUIDES = 1500;

interface Ranked {
  docno: number;
  score: number;
}

/** Every match of a query, best first, scored as docs/search.md says, from the stored lists alone; undefined for a query with a phrase. */
type Reference = (text: string) => Ranked[] | undefined;

function referenceOf(db: ReturnType<typeof openSqliteDatabase>): { rank: Reference; positionOf(hit: Ranked): SearchPosition } {
  const meta = db.prepare<[string], Buffer>('SELECT value FROM search_meta WHERE key = ?').pluck();
  const terms = meta.get('vocabulary')!.toString('utf8').split('\n');
  const docCount = (JSON.parse(meta.get('stats')!.toString('utf8')) as { docCount: number }).docCount;
  const documents = meta.get('documents')!;
  const listOf = db.prepare<[number], Buffer>('SELECT data FROM search_postings WHERE id = ?').pluck();
  const slugOf = db.prepare<[number], string>('SELECT slug FROM guides WHERE id = ?').pluck();
  const decoded = new Map<number, Map<number, number>>();
  const merged = new Map<string, Map<number, number>>();
  /** A token's postings: docno → frequency. */
  const postings = (id: number): Map<number, number> => {
    let list = decoded.get(id);
    if (!list) {
      list = new Map();
      const reader = new VarintReader(listOf.get(id)!);
      for (let doc = -1; !reader.done;) {
        doc += reader.next() + 1;
        list.set(doc, reader.next());
      }
      decoded.set(id, list);
    }
    return list;
  };
  const rank: Reference = (text) => {
    // Each term's frequencies by docno: a token's list, or a prefix's tokens' lists summed.
    const sources: Map<number, number>[] = [];
    const seen = new Set<string>();
    for (const term of parseSearchQuery(text).terms) {
      const tokens = term.words.flatMap((word) => wordTokens(word));
      if (tokens.length === 0) continue;
      if (tokens.length > 1) return undefined;
      const token = tokens[0]!;
      const key = `${term.isPrefix}:${token}`;
      if (seen.has(key)) continue;
      seen.add(key);
      let sums = merged.get(key);
      if (!sums) {
        sums = new Map<number, number>();
        for (const [id, t] of terms.entries())
          if (term.isPrefix ? t.startsWith(token) : t === token)
            for (const [doc, freq] of postings(id)) sums.set(doc, (sums.get(doc) ?? 0) + freq);
        merged.set(key, sums);
      }
      sources.push(sums);
    }
    if (sources.length === 0) return [];
    // Rarest first (a stable sort), each impact subtracted in turn: the order the store sums in.
    sources.sort((a, b) => a.size - b.size);
    const ranked: Ranked[] = [];
    for (const doc of sources[0]!.keys()) {
      if (!sources.every((source) => source.has(doc))) continue;
      let score = 0;
      for (const source of sources) {
        const freq = source.get(doc)!;
        score -= impactOf(idfOf(docCount, source.size), freq);
      }
      ranked.push({ docno: doc, score });
    }
    return ranked.sort((a, b) => a.score - b.score || a.docno - b.docno);
  };
  return {
    rank,
    positionOf: ({ docno, score }) => ({
      score,
      publishedMs: documents.readDoubleLE(docno * 16 + 8),
      slug: slugOf.get(documents.readInt32LE(docno * 16))!,
    }),
  };
}

/** Queries of every kind: the benchmark's (their last word a prefix), the same with the last word exact, and repeated words. */
function queries(): string[] {
  const texts = SEARCH_KINDS.flatMap((kind) => [...searchPaths(kind, 120, 7), ...searchPaths(kind, 60, 99)]).map((p) =>
    new URL(p, 'http://test').searchParams.get('q')!,
  );
  const exact = texts.filter((_, i) => i % 3 === 0).map((text) => text.replace(/(\S+)$/, '"$1"'));
  const repeated = texts.filter((_, i) => i % 11 === 0).map((text) => `${text} ${text.split(' ')[0]}`);
  return [...texts, ...exact, ...repeated];
}

describe('SQLite search: pages pruned by blocks', () => {
  let dir: string;
  let db: ReturnType<typeof openSqliteDatabase>;
  let reference: ReturnType<typeof referenceOf>;

  beforeAll(async () => {
    dir = makeTempDir('sqlite-block-scan-');
    writeCorpus(path.join(dir, 'corpus'), { size: GUIDES });
    const loaded = await loadContentFolder(path.join(dir, 'corpus'));
    const store = createSqliteGuideStore(path.join(dir, 'guides.db'));
    await store.importContent(loaded.content!);
    await store.close();
    db = openSqliteDatabase(path.join(dir, 'guides.db'), { readonly: true });
    reference = referenceOf(db);
  }, 120_000);

  afterAll(() => {
    db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('gives the page that scoring every match gives, for every kind of query, page size and cursor position', () => {
    // Block tables read by blocks; lists decoded and cached as impacts; lists decoded and evicted.
    const variants: [string, SqliteSearchOptions][] = [
      ['by blocks', {}],
      ['decoded impacts, cached', { blockTables: false, impactMinDf: 1 }],
      ['decoded impacts, evicted', { blockTables: false, impactMinDf: 1, impactCacheBytes: 64 * 1024 }],
    ];
    const searches = variants.map(([name, options]): [string, SqliteSearch] => [name, createSqliteSearch(db, options)]);
    let state = 12345;
    const random = (n: number): number => (state = (state * 48271) % 2147483647) % n;
    let compared = 0;
    let deep = 0;
    const texts = queries();
    for (const [index, text] of texts.entries()) {
      const expected = reference.rank(text);
      if (expected === undefined || expected.length === 0) continue;
      const query = parseSearchQuery(text);
      // Page sizes 1–51; from the start, from a position anywhere, and from near the end.
      const count = 1 + random(51);
      const positions = [-1, random(expected.length), Math.max(0, expected.length - 1 - random(3))];
      for (const position of positions) {
        const after = position < 0 ? undefined : reference.positionOf(expected[position]!);
        const page = expected.slice(position + 1, position + 1 + count);
        const [name, search] = searches[index % searches.length]!;
        const hits = search.search(query, count, after).hits.map(({ docno, score }) => ({ docno, score }));
        expect(hits, `${text} (${name}), ${count} after ${position}`).toEqual(page);
        compared += 1;
        if (position > BLOCK_DOCS) deep += 1;
      }
    }
    expect(compared).toBeGreaterThan(1500);
    expect(deep).toBeGreaterThan(300);
  }, 120_000);
});
