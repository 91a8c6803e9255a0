/**
 * Ranking: terms → the page of best hits. Every match is scored exactly (BM25F impacts summed,
 * negated: lower is better, as the store contract orders searches) from docno-ordered sources, so
 * the order is a pure function of the query and the content version, and a cursor is a position
 * in it. Ties go by ranksAfter() (sqlite-bounded-heap.ts), the one rule.
 */
import type { Database } from 'better-sqlite3';
import type { SearchPosition } from '../../../guides/cursor.js';
import { bestCandidates, heapOfCandidates, isWorse, keepBest, popBest, ranksAfter } from './sqlite-bounded-heap.js';
import type { TermPattern } from './sqlite-doc-tokens.js';
import { K1_PLUS_1, SATURATION, VarintReader, VarintWriter, idfOf, skipVarints } from './sqlite-index-format.js';
import type { IndexState, LoadedIndex, SearchScratch } from './sqlite-index-reader.js';
import type { DenseSource, ResolvedTerm, Source } from './sqlite-postings.js';

export interface SearchHit {
  docno: number;
  guideId: number;
  publishedMs: number;
  /** Lower is better (a negated BM25 sum), as the store contract orders searches. */
  score: number;
}

export interface SearchResult {
  hits: SearchHit[];
  terms: ResolvedTerm[];
  /** Which search the snippet memo belongs to (see SearchScratch.generation). */
  generation: number;
  /** The query's token ids to search bodies for (see SNIPPET_SEARCH_MAX_IDS), made with the memo; undefined: too many, decode. */
  patterns?: TermPattern[] | undefined;
  /** The index the search ran on (a snippet belongs to its search). */
  index?: LoadedIndex;
}

export interface Ranker {
  /** Up to `count` hits for the resolved `terms`, strictly after `after`, best first. */
  rank(index: LoadedIndex, terms: readonly ResolvedTerm[], count: number, after: SearchPosition | undefined): SearchHit[];
}

export function createRanker(db: Database): Ranker {
  const statements = {
    // Phrase checks need the token ids only: no card to parse, no text to decode.
    tokensOnly: db.prepare<[number], Buffer>('SELECT tokens FROM search_docs WHERE docno = ?').pluck(),
    slugOf: db.prepare<[number], string>('SELECT slug FROM guides WHERE id = ?').pluck(),
  };

  /** The first docno that comes after (publishedMs, slug) in list order. */
  function boundaryAfter(s: IndexState, publishedMs: number, slug: string): number {
    const { publishedMs: ms, guideIds } = s;
    let lo = 0;
    let hi = s.docCount;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((ms[mid] as number) > publishedMs) lo = mid + 1;
      else hi = mid;
    }
    let docno = lo;
    while (docno < s.docCount && ms[docno] === publishedMs && (statements.slugOf.get(guideIds[docno] as number) ?? '') <= slug) docno += 1;
    return docno;
  }

  /** Whether guide `docno` holds every phrase: its words in a row, in one column. */
  function hasPhrases(docno: number, patterns: readonly Buffer[]): boolean {
    const data = statements.tokensOnly.get(docno);
    return data !== undefined && patterns.every((pattern) => phraseIn(data, pattern));
  }

  return {
    rank({ state: s, scratch }, terms, count, after) {
      const sources = terms.flatMap((term) => term.sources);
      const { candidates, scores, heap } = scratch;
      if (
        count > 0 &&
        terms.every((term) => term.phrase === undefined) &&
        sources.every((source): source is DenseSource => source.kind === 'dense')
      ) {
        // Common words only (the costliest searches: most guides match, none narrows the others
        // down): one pass over every guide, keeping the page as it goes (scanDense()).
        const lists = [...sources].sort((a, b) => a.df - b.df).map((source) => source.impacts);
        const found = scanDense(
          lists,
          s.docCount,
          count,
          candidates,
          scores,
          after ? after.score : Number.NEGATIVE_INFINITY,
          after ? boundaryAfter(s, after.publishedMs, after.slug) : 0,
        );
        return hitsInOrder(s, scratch, found);
      }
      let matched = evaluate(scratch, s.docCount, sources);
      if (after) matched = keepAfter(candidates, scores, matched, after.score, boundaryAfter(s, after.publishedMs, after.slug));

      const phrases = terms
        .filter((term) => term.phrase !== undefined)
        .map((term) => {
          const pattern = new VarintWriter();
          for (const id of term.phrase as number[]) pattern.push(id);
          return pattern.toBuffer();
        });
      if (phrases.length === 0) return hitsInOrder(s, scratch, bestCandidates(candidates, scores, matched, count));

      // With a phrase, candidates are checked in rank order until the page is full.
      heapOfCandidates(candidates, scores, heap, matched);
      const hits: SearchHit[] = [];
      for (let size = matched; hits.length < count && size > 0; size -= 1) {
        const top = popBest(candidates, scores, heap, size);
        const docno = candidates[top] as number;
        if (!hasPhrases(docno, phrases)) continue;
        hits.push({
          docno,
          guideId: s.guideIds[docno] as number,
          publishedMs: s.publishedMs[docno] as number,
          score: scores[top] as number,
        });
      }
      return hits;
    },
  };
}

/** The first `size` candidates (a page, unordered) as hits, best first. */
function hitsInOrder(s: IndexState, scratch: SearchScratch, size: number): SearchHit[] {
  const { candidates, scores } = scratch;
  const chosen = Array.from({ length: size }, (_, i) => i).sort((a, b) =>
    isWorse(candidates, scores, a, b) ? 1 : isWorse(candidates, scores, b, a) ? -1 : 0,
  );
  return chosen.map((i) => {
    const docno = candidates[i] as number;
    return { docno, guideId: s.guideIds[docno] as number, publishedMs: s.publishedMs[docno] as number, score: scores[i] as number };
  });
}

/**
 * Keeps only the candidates strictly after the cursor, which sits at `afterScore` just before
 * docno `boundary` (boundaryAfter()); returns how many.
 */
function keepAfter(candidates: Int32Array, scores: Float64Array, matched: number, afterScore: number, boundary: number): number {
  let kept = 0;
  for (let i = 0; i < matched; i += 1) {
    const score = scores[i] as number;
    if (ranksAfter(score, candidates[i] as number, afterScore, boundary - 1)) {
      candidates[kept] = candidates[i] as number;
      scores[kept++] = score;
    }
  }
  return kept;
}

/**
 * AND of every source, adding each source's BM25 contribution. Sources run rarest first; the
 * candidate arrays shrink in place. Returns the candidate count; scores hold the negated sums:
 * -(a + b) and (-a) - b are the same double, so no pass is needed to flip them afterwards.
 */
function evaluate(scratch: SearchScratch, docCount: number, sources: readonly Source[]): number {
  const { candidates, scores } = scratch;
  const ordered = [...sources].sort((a, b) => a.df - b.df);
  let count = 0;
  for (let index = 0; index < ordered.length; index += 1) {
    const source = ordered[index] as Source;
    const isFirst = index === 0;
    if (source.kind === 'list') {
      count = scoreList(candidates, scores, count, source.data, idfOf(docCount, source.df), isFirst);
    } else if (source.kind === 'dense') {
      count = isFirst ? takeDense(candidates, scores, source.impacts, docCount) : intersectDense(candidates, scores, count, source.impacts);
    } else if (source.kind === 'impacts') {
      count = isFirst
        ? takeImpacts(candidates, scores, source.docs, source.impacts, source.df)
        : intersectImpacts(candidates, scores, count, source.docs, source.impacts, source.df);
    } else {
      count = scoreArrays(candidates, scores, count, source.docs, source.freqs, source.length, idfOf(docCount, source.df), isFirst);
    }
  }
  return count;
}

/**
 * The scoring loops, decoded impacts first (the path of every common word's list): top-level
 * functions with everything in locals, so that V8 compiles each loop on its own (inside a closure
 * they ran several times slower). Scores are kept negated, as in evaluate().
 */
function takeImpacts(candidates: Int32Array, scores: Float64Array, docs: Int32Array, impacts: Float64Array, df: number): number {
  for (let i = 0; i < df; i += 1) {
    candidates[i] = docs[i] as number;
    scores[i] = -(impacts[i] as number);
  }
  return df;
}

/** As takeImpacts(), from a dense list: every guide whose impact is not 0, in docno order. */
function takeDense(candidates: Int32Array, scores: Float64Array, impacts: Float64Array, docCount: number): number {
  let kept = 0;
  for (let doc = 0; doc < docCount; doc += 1) {
    const impact = impacts[doc] as number;
    if (impact !== 0) {
      candidates[kept] = doc;
      scores[kept++] = -impact;
    }
  }
  return kept;
}

/** As intersectImpacts(), from a dense list: one lookup per candidate, whatever the list's length. */
function intersectDense(candidates: Int32Array, scores: Float64Array, count: number, impacts: Float64Array): number {
  let kept = 0;
  for (let c = 0; c < count; c += 1) {
    const doc = candidates[c] as number;
    const impact = impacts[doc] as number;
    if (impact !== 0) {
      candidates[kept] = doc;
      scores[kept++] = (scores[c] as number) - impact;
    }
  }
  return kept;
}

/** Keeps the candidates (the first `count`) that `docs` also holds, subtracting their impacts; returns how many. */
function intersectImpacts(
  candidates: Int32Array,
  scores: Float64Array,
  count: number,
  docs: Int32Array,
  impacts: Float64Array,
  df: number,
): number {
  let kept = 0;
  let c = 0;
  let candidate = count > 0 ? (candidates[0] as number) : 0;
  for (let i = 0; i < df && c < count; i += 1) {
    const doc = docs[i] as number;
    while (candidate < doc) {
      c += 1;
      if (c >= count) return kept;
      candidate = candidates[c] as number;
    }
    if (candidate === doc) {
      candidates[kept] = doc;
      scores[kept++] = (scores[c] as number) - (impacts[i] as number);
      c += 1;
      if (c < count) candidate = candidates[c] as number;
    }
  }
  return kept;
}

/** As takeImpacts() or intersectImpacts(), from a list as stored: (delta, frequency) varint pairs, each frequency saturated here. */
function scoreList(candidates: Int32Array, scores: Float64Array, count: number, data: Uint8Array, idf: number, isFirst: boolean): number {
  const postings = new VarintReader(data);
  let kept = 0;
  let c = 0;
  let doc = -1;
  while (!postings.done) {
    doc += postings.next() + 1;
    const freq = postings.next();
    if (isFirst) {
      candidates[kept] = doc;
      scores[kept++] = -((idf * (freq * K1_PLUS_1)) / (freq + SATURATION));
      continue;
    }
    // Later lists: only postings of surviving candidates are scored.
    while (c < count && (candidates[c] as number) < doc) c += 1;
    if (c >= count) break;
    if (candidates[c] === doc) {
      candidates[kept] = doc;
      scores[kept++] = (scores[c] as number) - (idf * (freq * K1_PLUS_1)) / (freq + SATURATION);
      c += 1;
    }
  }
  return kept;
}

/** As scoreList(), from a prefix's lists merged at query time (union() in sqlite-postings.ts). */
function scoreArrays(
  candidates: Int32Array,
  scores: Float64Array,
  count: number,
  docs: Int32Array,
  freqs: Int32Array,
  length: number,
  idf: number,
  isFirst: boolean,
): number {
  let kept = 0;
  let c = 0;
  for (let i = 0; i < length; i += 1) {
    const doc = docs[i] as number;
    const freq = freqs[i] as number;
    if (isFirst) {
      candidates[kept] = doc;
      scores[kept++] = -((idf * (freq * K1_PLUS_1)) / (freq + SATURATION));
      continue;
    }
    while (c < count && (candidates[c] as number) < doc) c += 1;
    if (c >= count) break;
    if (candidates[c] === doc) {
      candidates[kept] = doc;
      scores[kept++] = (scores[c] as number) - (idf * (freq * K1_PLUS_1)) / (freq + SATURATION);
      c += 1;
    }
  }
  return kept;
}

/**
 * The best `count` guides that every one of the dense `lists` holds (in evaluate()'s order, summed
 * as evaluate() sums them: the same doubles), among those after the cursor (`afterScore` and
 * `boundary`, as keepAfter() filters): one pass in docno order, each list read in order, keeping the
 * best in a bounded heap as it goes; what evaluate() and bestCandidates() give, without writing
 * every match down first and reading it all back. They go to `candidates` and `scores` (unordered:
 * hitsInOrder() orders them); returns how many.
 *
 * The loop for two to four lists names each list, which runs faster than the general loop for
 * those. Guides come in docno order, so one with the same score as the worst kept ranks below it.
 */
export function scanDense(
  lists: readonly Float64Array[],
  docCount: number,
  count: number,
  candidates: Int32Array,
  scores: Float64Array,
  afterScore: number,
  boundary: number,
): number {
  const k = lists.length;
  const first = lists[0] as Float64Array;
  let size = 0;
  if (k >= 2 && k <= 4) {
    const second = lists[1] as Float64Array;
    const third = lists[Math.min(2, k - 1)] as Float64Array;
    const fourth = lists[k - 1] as Float64Array;
    for (let doc = 0; doc < docCount; doc += 1) {
      const a = first[doc] as number;
      if (a === 0) continue;
      const b = second[doc] as number;
      if (b === 0) continue;
      let score = -a - b;
      if (k >= 3) {
        const c = third[doc] as number;
        if (c === 0) continue;
        score -= c;
        if (k === 4) {
          const d = fourth[doc] as number;
          if (d === 0) continue;
          score -= d;
        }
      }
      if (!ranksAfter(score, doc, afterScore, boundary - 1)) continue;
      if (size === count && !ranksAfter(scores[0] as number, candidates[0] as number, score, doc)) continue;
      size = keepBest(candidates, scores, size, count, doc, score);
    }
    return size;
  }
  for (let doc = 0; doc < docCount; doc += 1) {
    const value = first[doc] as number;
    if (value === 0) continue;
    let score = -value;
    let held = 1;
    for (; held < k; held += 1) {
      const next = (lists[held] as Float64Array)[doc] as number;
      if (next === 0) break;
      score -= next;
    }
    if (held < k || !ranksAfter(score, doc, afterScore, boundary - 1)) continue;
    if (size === count && !ranksAfter(scores[0] as number, candidates[0] as number, score, doc)) continue;
    size = keepBest(candidates, scores, size, count, doc, score);
  }
  return size;
}

/**
 * Whether the token ids of one search document (`search_docs.tokens`: four column lengths, the
 * checkpoint count and checkpoints, then each column's ids, body last; sqlite-index-format.ts) hold
 * a phrase within one column. `pattern` is the phrase's ids as varints: varints are prefix-free, so
 * the phrase is there exactly where those bytes are, starting where a varint starts (after a byte
 * below 0x80) and not crossing a column's end. The search is Buffer.indexOf (native); only the
 * header and the three short columns are walked. A phrase of common words may be checked against
 * thousands of guides before a page fills.
 */
function phraseIn(data: Buffer, pattern: Buffer): boolean {
  const reader = new VarintReader(data);
  const lengths = [reader.next(), reader.next(), reader.next()];
  reader.next();
  const checkpointCount = reader.next();
  reader.pos = skipVarints(data, reader.pos, checkpointCount * 2);
  // Where each column's ids start, and where the last (the body) ends.
  const bounds = [reader.pos];
  for (const length of lengths) {
    reader.pos = skipVarints(data, reader.pos, length);
    bounds.push(reader.pos);
  }
  bounds.push(data.length);
  for (let at = data.indexOf(pattern, bounds[0]); at >= 0; at = data.indexOf(pattern, at + 1)) {
    if ((data[at - 1] as number) >= 0x80) continue;
    let column = 0;
    while ((bounds[column + 1] as number) <= at) column += 1;
    if (at + pattern.length <= (bounds[column + 1] as number)) return true;
  }
  return false;
}
