/**
 * Scoring: the guides that every source holds, with their scores, block by block in docno order
 * (blocks of BLOCK_DOCS docnos, sqlite-block-table.ts), keeping the page in a bounded heap as it
 * goes. Before a block is read, the sum of each source's highest impact in it bounds the score of
 * any guide there; once the heap is full, a block whose bound cannot beat the worst guide kept is
 * skipped unread (block-max pruning, as in Ding and Suel's block-max indexes). The bound is exact,
 * so the page is the one that scoring every match gives, to the last bit of every score.
 *
 * Within a block read, a guide whose score so far, with the highest impacts the sources still to
 * come have in the block, cannot beat the worst guide kept is dropped before the next source is
 * read (MaxScore, Turtle and Flood's, per block).
 *
 * Scores are the negated sum of the impacts in the sources' order (lower is better); -(a + b) and
 * (-a) - b are the same double. A bound is summed in the same order from numbers no lower than
 * each impact, and rounding keeps order, so no guide scores better than its bound.
 */
import { BLOCK_DOCS, blockCount } from './sqlite-block-table.js';
import { keepBest, ranksAfter } from './sqlite-bounded-heap.js';
import { VarintReader, impactOf } from './sqlite-index-format.js';
import type { SearchScratch } from './sqlite-index-reader.js';
import type { Source } from './sqlite-postings.js';

/**
 * The best `count` guides that every one of `sources` holds, among those after the cursor (at
 * `afterScore`, before docno `boundary`: see boundaryAfter() in sqlite-rank.ts), in
 * `scratch.candidates` and `scratch.scores` (unordered); returns how many. With `keepAll`, every
 * such guide instead (for a filter that needs them in rank order: phrases), nothing skipped.
 */
export function scanBlocks(
  sources: readonly Source[],
  docCount: number,
  count: number,
  keepAll: boolean,
  scratch: SearchScratch,
  afterScore: number,
  boundary: number,
): number {
  const { candidates, scores, blockDocs, blockScores } = scratch;
  const blocks = blockCount(docCount);
  // The block's highest impact of each source, in their order.
  const highest = new Float64Array(sources.length);
  let size = 0;
  for (let block = 0; block < blocks; block += 1) {
    const first = block * BLOCK_DOCS;
    let bound = 0;
    let isEmpty = false;
    for (let index = 0; index < sources.length; index += 1) {
      const max = (sources[index] as Source).max[block] as number;
      if (max === 0) {
        isEmpty = true;
        break;
      }
      highest[index] = max;
      bound -= max;
    }
    if (isEmpty) continue;
    // No guide of the block scores better than `bound` or comes before `first`: when that ranks
    // after the worst guide kept, none of them would be kept.
    const isFull = !keepAll && size === count;
    if (isFull && ranksAfter(bound, first, scores[0] as number, candidates[0] as number)) continue;

    let found = 0;
    for (let index = 0; index < sources.length && (index === 0 || found > 0); index += 1) {
      if (isFull && index > 0)
        found = dropHopeless(blockDocs, blockScores, found, highest, index, scores[0] as number, candidates[0] as number);
      const source = sources[index] as Source;
      const isFirst = index === 0;
      if (source.kind === 'list') {
        const start = source.starts[block] as number;
        const before = source.before[block] as number;
        const end = first + BLOCK_DOCS;
        found = isFirst
          ? takeList(source.data, start, before, end, source.idf, blockDocs, blockScores)
          : intersectList(source.data, start, before, source.idf, blockDocs, blockScores, found);
      } else {
        const from = source.starts[block] as number;
        const to = source.starts[block + 1] as number;
        found = isFirst
          ? takeImpacts(source.docs, source.impacts, from, to, blockDocs, blockScores)
          : intersectImpacts(source.docs, source.impacts, from, to, blockDocs, blockScores, found);
      }
    }
    for (let i = 0; i < found; i += 1) {
      const doc = blockDocs[i] as number;
      const score = blockScores[i] as number;
      if (!ranksAfter(score, doc, afterScore, boundary - 1)) continue;
      if (keepAll) {
        candidates[size] = doc;
        scores[size++] = score;
      } else {
        size = keepBest(candidates, scores, size, count, doc, score);
      }
    }
  }
  return size;
}

/**
 * The scoring loops: top-level functions with everything in locals, so that V8 compiles each
 * loop on its own (inside a closure they ran several times slower). Each reads one block of one
 * source into, or against, the block's guides so far (`docs`, `scores`, the first `count`).
 */

/**
 * Keeps the block's guides (the first `count`) that could still rank before the worst guide kept
 * (`worstScore`, `worstDoc`) if every source from `next` on added its highest impact in the block
 * (`highest`); returns how many.
 */
function dropHopeless(
  docs: Int32Array,
  scores: Float64Array,
  count: number,
  highest: Float64Array,
  next: number,
  worstScore: number,
  worstDoc: number,
): number {
  let kept = 0;
  for (let c = 0; c < count; c += 1) {
    const doc = docs[c] as number;
    const score = scores[c] as number;
    let bound = score;
    for (let index = next; index < highest.length; index += 1) bound -= highest[index] as number;
    if (ranksAfter(bound, doc, worstScore, worstDoc)) continue;
    docs[kept] = doc;
    scores[kept++] = score;
  }
  return kept;
}

/** A block's postings of a list as stored (varint pairs from byte `start`, the docno before being `before`), up to docno `end`. */
function takeList(
  data: Uint8Array,
  start: number,
  before: number,
  end: number,
  idf: number,
  docs: Int32Array,
  scores: Float64Array,
): number {
  const postings = new VarintReader(data);
  postings.pos = start;
  let found = 0;
  let doc = before;
  while (!postings.done) {
    doc += postings.next() + 1;
    if (doc >= end) break;
    const freq = postings.next();
    docs[found] = doc;
    scores[found++] = -impactOf(idf, freq);
  }
  return found;
}

/** Keeps the block's guides that the list also holds, subtracting their impacts; returns how many. */
function intersectList(
  data: Uint8Array,
  start: number,
  before: number,
  idf: number,
  docs: Int32Array,
  scores: Float64Array,
  count: number,
): number {
  const postings = new VarintReader(data);
  postings.pos = start;
  let kept = 0;
  let c = 0;
  let doc = before;
  while (c < count && !postings.done) {
    doc += postings.next() + 1;
    const freq = postings.next();
    while (c < count && (docs[c] as number) < doc) c += 1;
    if (c < count && docs[c] === doc) {
      docs[kept] = doc;
      scores[kept++] = (scores[c] as number) - impactOf(idf, freq);
      c += 1;
    }
  }
  return kept;
}

/** A block's postings of decoded impacts (entries `from` to `to`). */
function takeImpacts(
  sourceDocs: Int32Array,
  impacts: Float64Array,
  from: number,
  to: number,
  docs: Int32Array,
  scores: Float64Array,
): number {
  let found = 0;
  for (let i = from; i < to; i += 1) {
    docs[found] = sourceDocs[i] as number;
    scores[found++] = -(impacts[i] as number);
  }
  return found;
}

/** As intersectList(), from decoded impacts. */
function intersectImpacts(
  sourceDocs: Int32Array,
  impacts: Float64Array,
  from: number,
  to: number,
  docs: Int32Array,
  scores: Float64Array,
  count: number,
): number {
  let kept = 0;
  let c = 0;
  for (let i = from; i < to && c < count; i += 1) {
    const doc = sourceDocs[i] as number;
    while (c < count && (docs[c] as number) < doc) c += 1;
    if (c < count && docs[c] === doc) {
      docs[kept] = doc;
      scores[kept++] = (scores[c] as number) - (impacts[i] as number);
      c += 1;
    }
  }
  return kept;
}
