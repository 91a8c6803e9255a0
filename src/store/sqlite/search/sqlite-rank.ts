/**
 * Ranking: terms → the page of best hits. Scores are BM25F impacts summed, negated (lower is
 * better, as the store contract orders searches), the same for a guide whichever way its lists are
 * read; the page is the exact top of every match (sqlite-block-scan.ts skips only guides that
 * provably cannot reach it), so the order is a pure function of the query and the content version,
 * and a cursor is a position in it. Ties go by ranksAfter() (sqlite-bounded-heap.ts), the one rule.
 */
import type { Database } from 'better-sqlite3';
import type { SearchPosition } from '../../../guides/cursor.js';
import { scanBlocks } from './sqlite-block-scan.js';
import { heapOfCandidates, isWorse, popBest } from './sqlite-bounded-heap.js';
import type { TermPattern } from './sqlite-doc-tokens.js';
import { VarintReader, VarintWriter, skipVarints } from './sqlite-index-format.js';
import type { IndexState, LoadedIndex, SearchScratch } from './sqlite-index-reader.js';
import type { ResolvedTerm } from './sqlite-postings.js';

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
      if (count <= 0) return [];
      // Rarest first: the candidates shrink fastest, and this is the order every score is summed in.
      const sources = terms.flatMap((term) => term.sources).sort((a, b) => a.df - b.df);
      const afterScore = after ? after.score : Number.NEGATIVE_INFINITY;
      const boundary = after ? boundaryAfter(s, after.publishedMs, after.slug) : 0;
      const phrases = terms
        .filter((term) => term.phrase !== undefined)
        .map((term) => {
          const pattern = new VarintWriter();
          for (const id of term.phrase as number[]) pattern.push(id);
          return pattern.toBuffer();
        });
      if (phrases.length === 0)
        return hitsInOrder(s, scratch, scanBlocks(sources, s.docCount, count, false, scratch, afterScore, boundary));

      // With a phrase, every match is scored and candidates are checked in rank order until the page is full.
      const matched = scanBlocks(sources, s.docCount, count, true, scratch, afterScore, boundary);
      const { candidates, scores, heap } = scratch;
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
