/**
 * Query terms resolved against the vocabulary, each into sources of postings: a list as stored, a
 * prefix's lists merged at query time (union), or a list kept decoded as impacts, sparse or dense.
 */
import type { SearchQuery } from '../../../guides/search-query.js';
import { RingCache } from './ring-cache.js';
import { K1_PLUS_1, SATURATION, VarintReader, idfOf } from './sqlite-index-format.js';
import { expansionsOf, termIdOf } from './sqlite-index-reader.js';
import type { IndexReader, IndexState, LoadedIndex, SearchScratch } from './sqlite-index-reader.js';
import { wordTokens } from './sqlite-text.js';

/**
 * Lists of at least this many documents (common words, and prefixes merged at query time) are also
 * kept decoded, each posting with its BM25 part already computed, within IMPACT_CACHE_BYTES (12
 * bytes a posting). Scoring them is then one subtraction per posting instead of a varint decode
 * and a division, and a prefix's merge is done once per content version instead of per search.
 * Lists of two thirds of the guides or more are kept dense instead (see sourceOf()). A list whose
 * postings would take more than an eighth of the budget is not kept (at 100k guides, the commonest
 * words): cycling megabyte arrays through a full cache would cost more than decoding them.
 */
export const IMPACT_MIN_DF = 512;
export const IMPACT_CACHE_BYTES = 8 * 1024 * 1024;

/** A query term resolved against the vocabulary, with the documents it matches. */
export type Source =
  | { kind: 'list'; df: number; data: Uint8Array }
  | { kind: 'arrays'; df: number; docs: Int32Array; freqs: Int32Array; length: number }
  | { kind: 'impacts'; df: number; docs: Int32Array; impacts: Float64Array }
  // One impact per guide, by docno, 0 where the list lacks the guide (see sourceOf()).
  | { kind: 'dense'; df: number; impacts: Float64Array };

export type DenseSource = Source & { kind: 'dense' };

export interface ResolvedTerm {
  /** Tokens whose ids count as hits of this term in snippets. */
  tokenIds: Set<number>;
  prefix?: string;
  /** For phrases: the token ids that must follow each other in one column. */
  phrase?: number[];
  sources: Source[];
}

export interface PostingSourcesOptions {
  /** Lists at least this long are kept as decoded impacts (default IMPACT_MIN_DF). */
  impactMinDf?: number;
  /** Bytes of decoded impacts kept (default IMPACT_CACHE_BYTES). */
  impactCacheBytes?: number;
}

export interface PostingSources {
  /** Resolves query terms; undefined when some term matches nothing (so the AND matches nothing). */
  resolve(index: LoadedIndex, query: SearchQuery): ResolvedTerm[] | undefined;
  /** A search begins: impacts made from here on stay cached until it has scored them. */
  turn(): void;
}

export function createPostingSources(reader: IndexReader, options: PostingSourcesOptions = {}): PostingSources {
  const impactMinDf = options.impactMinDf ?? IMPACT_MIN_DF;
  const impactCacheBytes = options.impactCacheBytes ?? IMPACT_CACHE_BYTES;
  // Views into one buffer, overwritten oldest first (see ring-cache.ts); it belongs to one index.
  const impactCache = new RingCache<number | string, Source & { kind: 'impacts' | 'dense' }>(impactCacheBytes, 8);
  let cachedFor: IndexState | undefined;

  /**
   * The source `make` gives, as decoded impacts when it is long enough (see IMPACT_MIN_DF), from
   * the cache when it is there. `atLeast` is a bound on its length known before making it.
   */
  function sourceOf(s: IndexState, key: number | string, atLeast: number, make: () => Source): Source {
    if (atLeast < impactMinDf || atLeast * 12 > impactCacheBytes / 8) return make();
    const cached = impactCache.get(key);
    if (cached) return cached;
    const made = make();
    if (made.kind === 'impacts' || made.kind === 'dense') return made;
    const { df } = made;
    const { docCount } = s;
    const idf = idfOf(docCount, df);
    // The same expression as in the scoring loops (sqlite-rank.ts), so a score is the same double
    // either way. Never 0: a posting's frequency is at least 1 and the IDF above 0, so 0 can mark
    // "absent" in a dense list.
    const impactOf = (freq: number): number => (idf * (freq * K1_PLUS_1)) / (freq + SATURATION);
    const forEachPosting = (visit: (i: number, doc: number, freq: number) => void): void => {
      if (made.kind === 'list') {
        const postings = new VarintReader(made.data);
        for (let i = 0, doc = -1; !postings.done; i += 1) {
          doc += postings.next() + 1;
          visit(i, doc, postings.next());
        }
      } else {
        for (let i = 0; i < made.length; i += 1) visit(i, made.docs[i] as number, made.freqs[i] as number);
      }
    };
    // A list of two thirds of the guides or more (common words, short prefixes) is kept dense, one
    // impact per guide by docno: no more bytes than its postings (8 a guide against 12 a posting),
    // and intersecting it is one lookup per candidate instead of a walk along the whole list.
    if (df * 12 >= docCount * 8) {
      const source = impactCache.put(key, docCount * 8, (buffer, offset) => ({
        kind: 'dense' as const,
        df,
        impacts: new Float64Array(buffer, offset, docCount).fill(0),
      })) ?? { kind: 'dense' as const, df, impacts: new Float64Array(docCount) };
      const { impacts } = source;
      forEachPosting((_, doc, freq) => {
        impacts[doc] = impactOf(freq);
      });
      return source;
    }
    // In the cache's buffer (impacts first: 8-byte aligned), or, when it has no room this search, apart.
    const source = impactCache.put(key, df * 12, (buffer, offset) => ({
      kind: 'impacts' as const,
      df,
      impacts: new Float64Array(buffer, offset, df),
      docs: new Int32Array(buffer, offset + df * 8, df),
    })) ?? { kind: 'impacts' as const, df, docs: new Int32Array(df), impacts: new Float64Array(df) };
    const { docs, impacts } = source;
    forEachPosting((i, doc, freq) => {
      docs[i] = doc;
      impacts[i] = impactOf(freq);
    });
    return source;
  }

  function listOf(s: IndexState, id: number, df: number): Source {
    return sourceOf(s, id, df, () => ({ kind: 'list', df, data: reader.postingsOf(id) }));
  }

  return {
    turn() {
      impactCache.turn();
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
          const source =
            ids.length === 1
              ? listOf(s, first, s.termDf[first] as number)
              : sourceOf(s, `union:${prefix}`, Math.max(...Array.from(ids, (id) => s.termDf[id] as number)), () =>
                  union(reader, s, scratch, ids),
                );
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
}

/**
 * Merges several posting lists into one (a prefix without a stored list), summing frequencies.
 * Scratch, not new arrays: only the last term of a query is a prefix, so one union is alive at a time.
 */
function union(reader: IndexReader, s: IndexState, scratch: SearchScratch, ids: Int32Array): Source {
  const { unionSums: sums, unionDocs: docs, unionOutDocs: outDocs, unionOutFreqs: outFreqs } = scratch;
  let count = 0;
  for (const id of ids) {
    const postings = new VarintReader(reader.postingsOf(id));
    let doc = -1;
    while (!postings.done) {
      doc += postings.next() + 1;
      const freq = postings.next();
      if (sums[doc] === 0) docs[count++] = doc;
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
    for (const doc of docs.subarray(0, count).sort()) emit(doc);
  }
  return { kind: 'arrays', df: count, docs: outDocs, freqs: outFreqs, length: count };
}
