/**
 * The one rank order of search results, and the heaps that keep it: a bounded heap of the best
 * candidates (a page), and a heap that hands candidates out best first (the phrase filter's).
 */

/** The tie rule: whether guide `doc` with `score` ranks after guide `other` with `otherScore`: a higher (negated) score, or the same score later in list order. */
export function ranksAfter(score: number, doc: number, otherScore: number, other: number): boolean {
  return score > otherScore || (score === otherScore && doc > other);
}

/** Whether candidate `a` ranks after candidate `b` (ranksAfter()). */
export function isWorse(candidates: Int32Array, scores: Float64Array, a: number, b: number): boolean {
  return ranksAfter(scores[a] as number, candidates[a] as number, scores[b] as number, candidates[b] as number);
}

/**
 * Offers guide `doc` with `score` to a bounded heap of the best `count` so far, held in the first
 * `size` entries of `candidates` and `scores` with the worst (isWorse()) on top; returns the new size.
 */
export function keepBest(candidates: Int32Array, scores: Float64Array, size: number, count: number, doc: number, score: number): number {
  if (size < count) {
    let at = size;
    while (at > 0) {
      const parent = (at - 1) >>> 1;
      const above = scores[parent] as number;
      if (!ranksAfter(score, doc, above, candidates[parent] as number)) break;
      candidates[at] = candidates[parent] as number;
      scores[at] = above;
      at = parent;
    }
    candidates[at] = doc;
    scores[at] = score;
    return size + 1;
  }
  if (!ranksAfter(scores[0] as number, candidates[0] as number, score, doc)) return size;
  let at = 0;
  for (;;) {
    const left = 2 * at + 1;
    if (left >= size) break;
    const right = left + 1;
    const child = right < size && isWorse(candidates, scores, right, left) ? right : left;
    const below = scores[child] as number;
    if (!ranksAfter(below, candidates[child] as number, score, doc)) break;
    candidates[at] = candidates[child] as number;
    scores[at] = below;
    at = child;
  }
  candidates[at] = doc;
  scores[at] = score;
  return size;
}

/**
 * Orders the first `size` candidate indexes in `heap` as a binary heap, best on top, for
 * popBest(): so a filter checks candidates in rank order and stops once a page is full.
 */
export function heapOfCandidates(candidates: Int32Array, scores: Float64Array, heap: Int32Array, size: number): void {
  for (let i = 0; i < size; i += 1) heap[i] = i;
  for (let i = (size >>> 1) - 1; i >= 0; i -= 1) siftDown(candidates, scores, heap, size, i);
}

/** Takes the best candidate index off a heap of `size` (heapOfCandidates()); the heap then holds size − 1. */
export function popBest(candidates: Int32Array, scores: Float64Array, heap: Int32Array, size: number): number {
  const top = heap[0] as number;
  heap[0] = heap[size - 1] as number;
  siftDown(candidates, scores, heap, size - 1, 0);
  return top;
}

function siftDown(candidates: Int32Array, scores: Float64Array, heap: Int32Array, size: number, start: number): void {
  let i = start;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= size) return;
    const right = left + 1;
    const child = right < size && isWorse(candidates, scores, heap[left] as number, heap[right] as number) ? right : left;
    if (!isWorse(candidates, scores, heap[i] as number, heap[child] as number)) return;
    const swap = heap[i] as number;
    heap[i] = heap[child] as number;
    heap[child] = swap;
    i = child;
  }
}
