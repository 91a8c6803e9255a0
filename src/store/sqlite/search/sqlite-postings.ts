/**
 * Query terms resolved against the vocabulary, each into sources of postings that sqlite-block-scan.ts
 * reads block by block: a list as stored with its block table (the common tokens and prefixes), or
 * postings decoded with their BM25 parts (rarer lists, whole; prefixes merged at query time).
 */
import type { SearchQuery } from '../../../guides/search-query.js';
import { RingCache } from './ring-cache.js';
import { BLOCK_DOCS, blockCount, blockTableBytes, blockTableIn, hasBlockTable, readBlockTable } from './sqlite-block-table.js';
import { VarintReader, idfOf, impactOf } from './sqlite-index-format.js';
import { expansionsOf, termIdOf } from './sqlite-index-reader.js';
import type { IndexReader, IndexState, LoadedIndex, SearchScratch } from './sqlite-index-reader.js';
import { wordTokens } from './sqlite-text.js';

/**
 * Lists without a block table of at least this many documents (and prefixes merged at query time)
 * are kept decoded, each posting with its BM25 part already computed, within IMPACT_CACHE_BYTES
 * (12 bytes a posting, and 12 a block). Scoring them is then one subtraction per posting instead
 * of a varint decode and a division, and a prefix's merge is done once per content version
 * instead of per search. A source that would take more than an eighth of the budget is not kept:
 * cycling megabyte arrays through a full cache would cost more than decoding them.
 */
export const IMPACT_MIN_DF = 512;
export const IMPACT_CACHE_BYTES = 8 * 1024 * 1024;

/** A list as stored, with its block table (sqlite-block-table.ts): only the blocks a search needs are decoded. */
export interface ListSource {
  kind: 'list';
  df: number;
  idf: number;
  data: Uint8Array;
  /** Per block: the byte its postings start at, the docno before them, and the highest impact among them (0: none). */
  starts: Int32Array;
  before: Int32Array;
  max: Float64Array;
}

/** Postings decoded, each with its BM25 part. */
export interface ImpactSource {
  kind: 'impacts';
  df: number;
  docs: Int32Array;
  impacts: Float64Array;
  /** Per block: its first entry (one more, for the end of the last), and its highest impact (0: none). */
  starts: Int32Array;
  max: Float64Array;
}

/** A query term's postings, as the scan reads them. */
export type Source = ListSource | ImpactSource;

export interface ResolvedTerm {
  /** Tokens whose ids count as hits of this term in snippets. */
  tokenIds: Set<number>;
  prefix?: string;
  /** For phrases: the token ids that must follow each other in one column. */
  phrase?: number[];
  sources: Source[];
}

export interface PostingSourcesOptions {
  /** Lists without a block table at least this long are kept as decoded impacts (default IMPACT_MIN_DF). */
  impactMinDf?: number;
  /** Bytes of decoded impacts kept (default IMPACT_CACHE_BYTES). */
  impactCacheBytes?: number;
  /** false: read every list whole, as decoded impacts, whatever its block table (tests compare both ways). */
  blockTables?: boolean;
}

export interface PostingSources {
  /** Resolves query terms; undefined when some term matches nothing (so the AND matches nothing). */
  resolve(index: LoadedIndex, query: SearchQuery): ResolvedTerm[] | undefined;
  /** A search begins: impacts made from here on stay cached until it has scored them. */
  turn(): void;
}

/** An ImpactSource of `df` postings over `blocks` blocks, its arrays laid out in `buffer` from `offset` (Float64 first: 8-byte aligned). */
function impactSource(buffer: ArrayBuffer, offset: number, df: number, blocks: number): ImpactSource {
  return {
    kind: 'impacts',
    df,
    impacts: new Float64Array(buffer, offset, df),
    max: new Float64Array(buffer, offset + df * 8, blocks),
    docs: new Int32Array(buffer, offset + (df + blocks) * 8, df),
    starts: new Int32Array(buffer, offset + (df + blocks) * 8 + df * 4, blocks + 1),
  };
}

function impactBytes(df: number, blocks: number): number {
  return (df + blocks) * 12 + 4;
}

/**
 * Memory for one search's sources that are not cached (block tables as read, lists decoded): taken
 * in order, and all free again when the next search begins, so that a search allocates no
 * buffers (V8 tracks and frees each one apart, at a cost per search).
 */
class SearchArena {
  private buffer = new ArrayBuffer(64 * 1024);
  private used = 0;

  /** A new search: what earlier ones took is free again. */
  reset(): void {
    this.used = 0;
  }

  /** The value `make` returns given room for `bytes` (rounded up to a multiple of 8): a buffer and the offset of that room. */
  take<T>(bytes: number, make: (buffer: ArrayBuffer, offset: number) => T): T {
    const size = Math.ceil(bytes / 8) * 8;
    if (this.used + size > this.buffer.byteLength) {
      // Views taken from the old buffer stay valid; it goes once they do.
      this.buffer = new ArrayBuffer(Math.max(this.buffer.byteLength * 2, size));
      this.used = 0;
    }
    const offset = this.used;
    this.used += size;
    return make(this.buffer, offset);
  }
}

export function createPostingSources(reader: IndexReader, options: PostingSourcesOptions = {}): PostingSources {
  const impactMinDf = options.impactMinDf ?? IMPACT_MIN_DF;
  const impactCacheBytes = options.impactCacheBytes ?? IMPACT_CACHE_BYTES;
  const useBlockTables = options.blockTables ?? true;
  // Views into one buffer, overwritten oldest first (see ring-cache.ts); it belongs to one index.
  const impactCache = new RingCache<number | string, ImpactSource>(impactCacheBytes, 8);
  const arena = new SearchArena();
  let cachedFor: IndexState | undefined;

  /**
   * The impacts of `df` postings that `fill` writes (docs and impacts; it returns how many), from
   * the cache under `key` when they are there, kept there when long enough (see IMPACT_MIN_DF),
   * else in the search's arena.
   */
  function impactsOf(
    s: IndexState,
    key: number | string,
    df: number,
    fill: (docs: Int32Array, impacts: Float64Array) => number,
  ): ImpactSource {
    const blocks = blockCount(s.docCount);
    const bytes = impactBytes(df, blocks);
    const isKept = df >= impactMinDf && bytes <= impactCacheBytes / 8;
    const cached = isKept ? impactCache.get(key) : undefined;
    if (cached) return cached;
    const make = (buffer: ArrayBuffer, offset: number): ImpactSource => impactSource(buffer, offset, df, blocks);
    // In the cache's buffer, or, when it has no room this search, apart.
    const source = (isKept ? impactCache.put(key, bytes, make) : undefined) ?? arena.take(bytes, make);
    const length = fill(source.docs, source.impacts);
    indexBlocks(source.docs, source.impacts, length, source.starts, source.max);
    return source;
  }

  function listOf(s: IndexState, id: number, df: number): Source {
    const { docCount } = s;
    const idf = idfOf(docCount, df);
    if (useBlockTables && hasBlockTable(df, docCount)) {
      const { data, blocks } = reader.postingsOf(id);
      if (blocks) {
        const { starts, before, max } = arena.take(blockTableBytes(docCount), (buffer, offset) => blockTableIn(buffer, offset, docCount));
        readBlockTable(blocks, idf, { starts, before, max });
        return { kind: 'list', df, idf, data, starts, before, max };
      }
    }
    return impactsOf(s, id, df, (docs, impacts) => decodeImpacts(reader.postingsOf(id).data, idf, docs, impacts));
  }

  return {
    turn() {
      impactCache.turn();
      arena.reset();
    },
    resolve({ state: s, scratch }, query) {
      if (cachedFor !== s) {
        impactCache.clear();
        cachedFor = s;
      }
      const resolved: ResolvedTerm[] = [];
      const seen = new Set<string>();
      for (const term of query.terms) {
        const tokens = term.words.flatMap((word) => wordTokens(word));
        if (tokens.length === 0) continue;
        const key = `${term.isPrefix && tokens.length === 1 ? 'p' : 't'}:${tokens.join(' ')}`;
        // A repeated term adds nothing: every term must match, and one match is as good as two.
        if (seen.has(key)) continue;
        seen.add(key);
        if (term.isPrefix && tokens.length === 1) {
          const prefix = tokens[0] as string;
          const stored = s.prefixes.get(prefix);
          if (stored) {
            resolved.push({ tokenIds: new Set(), prefix, sources: [listOf(s, stored.id, stored.df)] });
            continue;
          }
          const ids = expansionsOf(s, prefix);
          if (ids.length === 0) return undefined;
          const first = ids[0] as number;
          const source = ids.length === 1 ? listOf(s, first, s.termDf[first] as number) : unionOf(s, scratch, prefix, ids);
          resolved.push({ tokenIds: new Set(ids), prefix, sources: [source] });
          continue;
        }
        const ids: number[] = [];
        for (const token of tokens) {
          const id = termIdOf(s, token);
          if (id === undefined) return undefined;
          ids.push(id);
        }
        resolved.push({
          tokenIds: new Set(ids),
          ...(ids.length > 1 ? { phrase: ids } : {}),
          sources: ids.map((id) => listOf(s, id, s.termDf[id] as number)),
        });
      }
      return resolved;
    },
  };

  /**
   * A prefix without a stored list: its tokens' lists merged, frequencies summed per guide (in
   * scratch: only the last term of a query is a prefix, so one merge is alive at a time), kept as
   * impacts like a list's.
   */
  function unionOf(s: IndexState, scratch: SearchScratch, prefix: string, ids: Int32Array): ImpactSource {
    const key = `union:${prefix}`;
    const cached = impactCache.get(key);
    if (cached) return cached;
    const df = union(reader, s, scratch, ids);
    const idf = idfOf(s.docCount, df);
    const { unionDocs, unionFreqs } = scratch;
    return impactsOf(s, key, df, (docs, impacts) => {
      for (let i = 0; i < df; i += 1) {
        const freq = unionFreqs[i] as number;
        docs[i] = unionDocs[i] as number;
        impacts[i] = impactOf(idf, freq);
      }
      return df;
    });
  }
}

/**
 * A list as stored, decoded into `docs` and `impacts`; returns its length. The impact is the
 * same expression everywhere (here, the scan's loops, block bounds), so a score is the same
 * double whichever way a list is read.
 */
function decodeImpacts(data: Uint8Array, idf: number, docs: Int32Array, impacts: Float64Array): number {
  const postings = new VarintReader(data);
  let length = 0;
  for (let doc = -1; !postings.done; length += 1) {
    doc += postings.next() + 1;
    const freq = postings.next();
    docs[length] = doc;
    impacts[length] = impactOf(idf, freq);
  }
  return length;
}

/** Where each block's entries start among `length` docno-ordered postings (`starts`, one per block and one more), and each block's highest impact (`max`). */
function indexBlocks(docs: Int32Array, impacts: Float64Array, length: number, starts: Int32Array, max: Float64Array): void {
  max.fill(0);
  let i = 0;
  for (let block = 0; block < max.length; block += 1) {
    starts[block] = i;
    const end = (block + 1) * BLOCK_DOCS;
    let highest = 0;
    for (; i < length && (docs[i] as number) < end; i += 1) highest = Math.max(highest, impacts[i] as number);
    max[block] = highest;
  }
  starts[max.length] = i;
}

/**
 * Merges several posting lists into one (a prefix without a stored list), summing frequencies,
 * into scratch.unionDocs and unionFreqs; returns its length.
 */
function union(reader: IndexReader, s: IndexState, scratch: SearchScratch, ids: Int32Array): number {
  const { unionSums: sums, unionSeen: seen, unionDocs: outDocs, unionFreqs: outFreqs } = scratch;
  let count = 0;
  for (const id of ids) {
    const postings = new VarintReader(reader.postingsOf(id).data);
    let doc = -1;
    while (!postings.done) {
      doc += postings.next() + 1;
      const freq = postings.next();
      if (sums[doc] === 0) seen[count++] = doc;
      sums[doc] = (sums[doc] as number) + freq;
    }
  }
  let written = 0;
  const emit = (doc: number): void => {
    outDocs[written] = doc;
    outFreqs[written++] = sums[doc] as number;
    sums[doc] = 0;
  };
  // Many documents: scanning them all in order beats sorting the ones touched.
  if (count > s.docCount / 8) {
    for (let doc = 0; doc < s.docCount; doc += 1) if (sums[doc] !== 0) emit(doc);
  } else {
    for (const doc of seen.subarray(0, count).sort()) emit(doc);
  }
  return count;
}
