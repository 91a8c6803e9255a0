/**
 * The index as a search reads it: per content version, the vocabulary, prefix table and document
 * table, loaded once from search_meta (IndexState), the scratch arrays every search on it reuses
 * (SearchScratch, kept apart), and the posting lists kept in memory as read.
 */
import type { Database } from 'better-sqlite3';
import { RingCache } from './ring-cache.js';
import { BLOCK_DOCS } from './sqlite-block-table.js';
import { SEARCH_FORMAT_VERSION, readInt32Array } from './sqlite-index-format.js';
import type { SearchStats } from './sqlite-index-format.js';

/**
 * Posting lists kept in memory as read, by total bytes (the common terms' lists); see ring-cache.ts.
 * The smallest size that searched as fast as a larger one (docs/performance.md#search-workers).
 */
export const POSTINGS_CACHE_BYTES = 8 * 1024 * 1024;

/** One content version's index as loaded: read only after load. */
export interface IndexState {
  contentVersion: string;
  docCount: number;
  terms: string[];
  /** Term ids sorted by term text, for prefix ranges. */
  sortedTermIds: Int32Array;
  termDf: Int32Array;
  prefixes: Map<string, { id: number; df: number }>;
  guideIds: Int32Array;
  publishedMs: Float64Array;
}

/** Arrays sized to one index, reused by every search on it (searches are synchronous, one at a time). */
export interface SearchScratch {
  candidates: Int32Array;
  scores: Float64Array;
  heap: Int32Array;
  /** One block's guides while the scan reads it (sqlite-block-scan.ts). */
  blockDocs: Int32Array;
  blockScores: Float64Array;
  /** A prefix merged at query time (union() in sqlite-postings.ts). */
  unionSums: Int32Array;
  unionSeen: Int32Array;
  unionDocs: Int32Array;
  unionFreqs: Int32Array;
  /** Snippets' memo of token id → query term index, valid where the generation is the search's. */
  termCacheGeneration: Int32Array;
  termCacheValue: Int16Array;
  generation: number;
}

export interface LoadedIndex {
  state: IndexState;
  scratch: SearchScratch;
}

/** A posting list as stored: its postings, and its block table if it has one (sqlite-block-table.ts). */
export interface StoredList {
  data: Uint8Array;
  blocks: Uint8Array | undefined;
}

export interface IndexReader {
  /** The index of the current content version, loaded when the version changed. */
  current(): LoadedIndex;
  /** Posting list `id` (a token's; a prefix's after the tokens'), from the cache when it is there. */
  postingsOf(id: number): StoredList;
  /** A search begins: lists read from here on stay cached until it has scored them. */
  turn(): void;
}

export function createIndexReader(db: Database, postingsCacheBytes = POSTINGS_CACHE_BYTES): IndexReader {
  const statements = {
    version: db.prepare<[], string>("SELECT value FROM meta WHERE key = 'content_version'").pluck(),
    meta: db.prepare<[string], Buffer>('SELECT value FROM search_meta WHERE key = ?').pluck(),
    postings: db.prepare<[number], [Buffer, Buffer | null]>('SELECT data, blocks FROM search_postings WHERE id = ?').raw(true),
  };
  let loaded: LoadedIndex | undefined;
  // Views into one buffer, overwritten oldest first (see ring-cache.ts).
  const postingsCache = new RingCache<number, StoredList>(postingsCacheBytes, 8);

  function load(contentVersion: string): LoadedIndex {
    const statsBlob = statements.meta.get('stats');
    const stats = statsBlob ? (JSON.parse(statsBlob.toString('utf8')) as SearchStats) : undefined;
    const docCount = stats && stats.format === SEARCH_FORMAT_VERSION ? stats.docCount : 0;
    const terms = docCount > 0 ? statements.meta.get('vocabulary')!.toString('utf8').split('\n') : [];
    const termDf = docCount > 0 ? readInt32Array(statements.meta.get('term_df')!) : new Int32Array(0);
    const sortedTermIds = Int32Array.from(terms.keys()).sort((a, b) => {
      const x = terms[a] as string;
      const y = terms[b] as string;
      return x < y ? -1 : x > y ? 1 : 0;
    });
    const prefixes = new Map<string, { id: number; df: number }>();
    if (docCount > 0) {
      const prefixBlob = statements.meta.get('prefixes')!.toString('utf8');
      const prefixDf = readInt32Array(statements.meta.get('prefix_df')!);
      if (prefixBlob !== '')
        prefixBlob.split('\n').forEach((prefix, i) => prefixes.set(prefix, { id: terms.length + i, df: prefixDf[i] as number }));
    }
    const documents = docCount > 0 ? statements.meta.get('documents')! : Buffer.alloc(0);
    const guideIds = new Int32Array(docCount);
    const publishedMs = new Float64Array(docCount);
    for (let docno = 0; docno < docCount; docno += 1) {
      guideIds[docno] = documents.readInt32LE(docno * 16);
      publishedMs[docno] = documents.readDoubleLE(docno * 16 + 8);
    }
    postingsCache.clear();
    return {
      state: { contentVersion, docCount, terms, sortedTermIds, termDf, prefixes, guideIds, publishedMs },
      scratch: {
        candidates: new Int32Array(docCount),
        scores: new Float64Array(docCount),
        heap: new Int32Array(docCount),
        blockDocs: new Int32Array(BLOCK_DOCS),
        blockScores: new Float64Array(BLOCK_DOCS),
        unionSums: new Int32Array(docCount),
        unionSeen: new Int32Array(docCount),
        unionDocs: new Int32Array(docCount),
        unionFreqs: new Int32Array(docCount),
        termCacheGeneration: new Int32Array(terms.length),
        termCacheValue: new Int16Array(terms.length),
        generation: 0,
      },
    };
  }

  return {
    current() {
      const version = statements.version.get() ?? '0';
      if (!loaded || loaded.state.contentVersion !== version) loaded = load(version);
      return loaded;
    },
    postingsOf(id) {
      const cached = postingsCache.get(id);
      if (cached) return cached;
      // Read into new buffers that die young; the cache keeps a copy in its own.
      const [data, blocks] = statements.postings.get(id) ?? [Buffer.alloc(0), null];
      const tableBytes = blocks?.length ?? 0;
      return (
        postingsCache.put(id, data.length + tableBytes, (buffer, offset) => {
          const kept = new Uint8Array(buffer, offset, data.length + tableBytes);
          kept.set(data);
          if (blocks) kept.set(blocks, data.length);
          return { data: kept.subarray(0, data.length), blocks: blocks ? kept.subarray(data.length) : undefined };
        }) ?? { data, blocks: blocks ?? undefined }
      );
    },
    turn() {
      postingsCache.turn();
    },
  };
}

/**
 * Term ids whose text starts with `prefix`: a view of the sorted vocabulary, found by two binary
 * searches (the terms that start with a prefix are contiguous in sorted order). A one-letter
 * prefix expands to thousands of terms; walking them with startsWith() on every search cost more
 * than scoring.
 */
export function expansionsOf(s: IndexState, prefix: string): Int32Array {
  const { terms, sortedTermIds } = s;
  const textAt = (i: number): string => terms[sortedTermIds[i] as number] as string;
  let lo = 0;
  let hi = sortedTermIds.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (textAt(mid) < prefix) lo = mid + 1;
    else hi = mid;
  }
  const start = lo;
  hi = sortedTermIds.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (textAt(mid).startsWith(prefix)) lo = mid + 1;
    else hi = mid;
  }
  return sortedTermIds.subarray(start, lo);
}

/** The id of `token` in the vocabulary, if it is there. */
export function termIdOf(s: IndexState, token: string): number | undefined {
  const { terms, sortedTermIds } = s;
  let lo = 0;
  let hi = sortedTermIds.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((terms[sortedTermIds[mid] as number] as string) < token) lo = mid + 1;
    else hi = mid;
  }
  const id = sortedTermIds[lo];
  return id !== undefined && terms[id] === token ? id : undefined;
}
