/**
 * Search over the embedded index (sqlite-index-builder.ts): terms → matching documents, BM25
 * relevance with column weights, keyset pages, snippets. See docs/search.md for the design.
 *
 * Every page scores every match exactly, from compact docno-ordered posting lists decoded in a
 * tight loop (a few nanoseconds per posting), so pages are consistent by construction: the order
 * is a pure function of the query and the content version, and a cursor is a position in it.
 */
import type { Database } from 'better-sqlite3';
import type { SearchPosition } from '../../../guides/cursor.js';
import type { SearchQuery } from '../../../guides/search-query.js';
import type { GuideSummaryData } from '../../../guides/guide.js';
import { snippetSpacing } from '../../../guides/snippet.js';
import type { GuideStore, Page, SearchCardItem, SearchCardPage } from '../../guide-store.js';
import { BM25_K1, FREQUENCY_SCALE, SEARCH_FORMAT_VERSION, TEXT_PART_CHARS, VarintReader, VarintWriter } from './sqlite-index-format.js';
import type { SearchCard, SearchStats } from './sqlite-index-format.js';
import { forEachWord, isPlainWord, tokensOfWord, wordTokens } from './sqlite-text.js';
import { RingCache } from './ring-cache.js';

export type SearchPageOptions = Parameters<GuideStore['searchPublishedGuides']>[0];

/** Tokens around the best passage in a snippet (as FTS5's snippet() with 24 tokens). */
const SNIPPET_TOKENS = 24;
/**
 * Posting lists kept in memory as read, by total bytes (the common terms' lists); see ring-cache.ts.
 * This and IMPACT_CACHE_BYTES were 16 MB each: 8 MB each searched as fast (common, prefix and
 * two-term searches in process, 10k and 100k guides, two alternating runs, 2026-11-26; 4 MB made
 * common-term searches at 10k ~60 % slower) and the server's peak RSS is up to 16 MB lower.
 */
const POSTINGS_CACHE_BYTES = 8 * 1024 * 1024;
/**
 * Lists of at least this many documents (common words, and prefixes merged at query time) are also
 * kept decoded, each posting with its BM25 part already computed, within IMPACT_CACHE_BYTES (12
 * bytes a posting). Scoring them is then one subtraction per posting instead of a varint decode
 * and a division, and a prefix's merge is done once per content version instead of per search.
 * Lists of two thirds of the guides or more are kept dense instead (see sourceOf()). A list whose
 * postings would take more than an eighth of the budget is not kept (at 100k guides, the commonest
 * words): cycling megabyte arrays through a full cache would cost more than decoding them.
 */
const IMPACT_MIN_DF = 512;
const IMPACT_CACHE_BYTES = 8 * 1024 * 1024;
/**
 * A search whose terms count this many token ids or fewer finds a body's snippet window by
 * searching the body's bytes for each id (Buffer.indexOf, native) instead of decoding every token
 * id (DocTokens.searchBodyWindow). More ids (short prefixes) are decoded: one pass over the body
 * then costs less than a search per id.
 */
const SNIPPET_SEARCH_MAX_IDS = 8;
const BODY = 3;

/**
 * Reusable typed arrays for per-result work. A new Int32Array of a guide's length per result would
 * be allocated outside the V8 heap each time, and that churn (hundreds of kilobytes a search)
 * makes V8 run a full collection several times a second. Searches are synchronous and handle one
 * result at a time, so one array per purpose is enough; each use overwrites what it reads.
 */
const BODY_SCRATCH = 0;
const TERM_SCRATCH = 1;
const HIT_POSITION_SCRATCH = 2;
const HIT_TERM_SCRATCH = 3;
const scratchArrays: Int32Array<ArrayBuffer>[] = [new Int32Array(4096), new Int32Array(4096), new Int32Array(4096), new Int32Array(4096)];
function scratch(which: number, length: number): Int32Array<ArrayBuffer> {
  let array = scratchArrays[which] as Int32Array<ArrayBuffer>;
  if (array.length < length) {
    array = new Int32Array(Math.max(length, array.length * 2));
    scratchArrays[which] = array;
  }
  return new Int32Array(array.buffer, 0, length);
}

/** The UTF-16 offset of the code point at `codePoints` in `text` (they differ only past astral characters). */
function utf16Offset(text: string, codePoints: number): number {
  if (!/[\uD800-\uDBFF]/.test(text)) return codePoints;
  let offset = 0;
  for (let seen = 0; seen < codePoints && offset < text.length; seen += 1) {
    const code = text.charCodeAt(offset);
    offset += code >= 0xd800 && code <= 0xdbff ? 2 : 1;
  }
  return offset;
}

/**
 * How many varints end in data[from, to): the bytes below 0x80. Four bytes at a time where `data`
 * is aligned: `(w & 0x80808080) >>> 7` holds a 1 in each byte of `w` that continues a varint, and
 * multiplying by 0x01010101 sums those into the top byte. A body is read this way up to each snippet
 * hit, about 2 KB a result. `words`: `data` as 32-bit words (see wordsOf), where it is aligned.
 */
function countVarintEnds(data: Uint8Array, words: Uint32Array | undefined, from: number, to: number): number {
  let count = 0;
  let i = from;
  if (words) {
    for (; i < to && (i & 3) !== 0; i += 1) if ((data[i] as number) < 0x80) count += 1;
    for (; i + 4 <= to; i += 4) count += 4 - (Math.imul(((words[i >>> 2] as number) & 0x80808080) >>> 7, 0x01010101) >>> 24);
  }
  for (; i < to; i += 1) if ((data[i] as number) < 0x80) count += 1;
  return count;
}

/** Text between a snippet's words as the snippet shows it: without `*` (only hits are marked), spaced by snippetSpacing. */
function asGap(text: string): string {
  return snippetSpacing(text.replaceAll('*', ''));
}

/** `data` as 32-bit words, when it starts on a 4-byte boundary (for countVarintEnds). */
function wordsOf(data: Uint8Array): Uint32Array | undefined {
  return data.byteOffset % 4 === 0 ? new Uint32Array(data.buffer, data.byteOffset, data.length >>> 2) : undefined;
}

/** The position in `data` just past the `count` varints that start at `pos` (they are stepped over, not decoded). */
function skipVarints(data: Uint8Array, pos: number, count: number): number {
  let at = pos;
  for (let seen = 0; seen < count; at += 1) if ((data[at] as number) < 0x80) seen += 1;
  return at;
}

/**
 * The count behind a body's snippet window: hits (token position and query term index, in the
 * hit arrays) enter in body order, and it keeps the first SNIPPET_TOKENS-token window with the
 * most distinct terms. Distinct terms in the window only grow when a hit enters it, so only then
 * (and at the first full window) can it become the best.
 */
class WindowSearch {
  /** The best window so far: its first token, and its distinct terms (-1 before any full window). */
  start = 0;
  distinct = -1;
  private inWindow = 0;
  private oldest = 0;
  private readonly counts: Int32Array;
  private readonly hitAt: Int32Array;
  private readonly hitTerm: Int32Array;
  private readonly width: number;
  private readonly wanted: number;

  constructor(hitAt: Int32Array, hitTerm: Int32Array, width: number, wanted: number) {
    this.hitAt = hitAt;
    this.hitTerm = hitTerm;
    this.width = width;
    this.wanted = wanted;
    this.counts = new Int32Array(wanted);
  }

  /** The first full window (tokens 0 to width − 1) is a candidate whatever it holds. True when it has every term. */
  takeFirst(): boolean {
    this.distinct = this.inWindow;
    return this.inWindow === this.wanted;
  }

  /** Hit number `hit` enters the window. True when the best window has every term (the search can stop). */
  enter(hit: number): boolean {
    const { hitAt, hitTerm, counts } = this;
    const term = hitTerm[hit] as number;
    if ((counts[term] = (counts[term] as number) + 1) === 1) this.inWindow += 1;
    const first = (hitAt[hit] as number) - this.width + 1;
    if (first < 0) return false;
    while ((hitAt[this.oldest] as number) < first) {
      const leaving = hitTerm[this.oldest++] as number;
      if ((counts[leaving] = (counts[leaving] as number) - 1) === 0) this.inWindow -= 1;
    }
    if (this.inWindow <= this.distinct) return false;
    this.start = first;
    this.distinct = this.inWindow;
    return this.inWindow === this.wanted;
  }
}

/** Where a card's slug starts: after `{"slug":"`. */
const SLUG_AT = '{"slug":"'.length;

/** One document's token ids: the body decoded only as far as it is read, the short columns only when asked for. */
class DocTokens {
  readonly bodyLength: number;
  /** The guide's search card as stored (searchCardJson): its list item's JSON, left open before `url`. */
  readonly card: string;
  /** The first TEXT_PART_CHARS code points of the body text (most snippets need nothing else). */
  readonly head: string;
  private readonly data: Buffer;
  private pos = 0;
  private readonly bodyIds: Int32Array;
  private decoded = 0;
  /** After searchBodyWindow: the hits found so far (positions and terms in the hit scratch arrays), and where the search goes on. */
  private search: { patterns: readonly TermPattern[]; nextAt: Int32Array; words: Uint32Array | undefined; counted: number; tokens: number; hits: number; hitAt: Int32Array; hitTerm: Int32Array } | undefined;
  /** Where each short column's ids start in `data`, and how many it has: decoded only when asked for. */
  private readonly columnStarts: number[];
  private readonly columnLengths: number[];
  /** Where the checkpoints (pairs of token index and code-point offset) start in `data`, and how many pairs there are. */
  private readonly checkpointsAt: number;
  private readonly checkpointCount: number;

  constructor(data: Buffer, card: string, head: string) {
    this.data = data;
    this.head = head;
    this.card = card;
    this.columnLengths = [this.next(), this.next(), this.next()];
    this.bodyLength = this.next();
    this.checkpointCount = this.next();
    this.checkpointsAt = this.pos;
    // The checkpoints are read only by checkpointBefore(), the short columns only when the body has
    // no hit: both skipped here, not decoded (one search decodes ~20 documents, once each).
    this.pos = skipVarints(data, this.pos, this.checkpointCount * 2);
    this.columnStarts = [];
    for (const length of this.columnLengths) {
      this.columnStarts.push(this.pos);
      this.pos = skipVarints(data, this.pos, length);
    }
    this.bodyIds = scratch(BODY_SCRATCH, this.bodyLength);
  }

  /** The card's fields (parsed: only for a snippet from a short column, or a page not rendered where it is made). */
  fields(): SearchCard {
    return JSON.parse(`${this.card}}`) as SearchCard;
  }

  /** The guide's slug, read off its card: slugs (SLUG_PATTERN) need no escaping in JSON. */
  get slug(): string {
    return this.card.slice(SLUG_AT, this.card.indexOf('"', SLUG_AT));
  }

  /** The last checkpoint at or before body token `index`: its token index and the code-point offset of that token's word in the body text (0, 0 before the first). */
  checkpointBefore(index: number): { tokenIndex: number; codePoint: number } {
    const reader = new VarintReader(this.data);
    reader.pos = this.checkpointsAt;
    let tokenIndex = 0;
    let codePoint = 0;
    for (let i = 0; i < this.checkpointCount; i += 1) {
      const at = reader.next();
      const offset = reader.next();
      if (at > index) break;
      tokenIndex = at;
      codePoint = offset;
    }
    return { tokenIndex, codePoint };
  }

  /** Column `index`'s token ids (0 title, 1 summary, 2 tags). */
  column(index: number): Int32Array {
    const length = this.columnLengths[index] as number;
    const ids = new Int32Array(length);
    const reader = new VarintReader(this.data);
    reader.pos = this.columnStarts[index] as number;
    for (let i = 0; i < length; i += 1) ids[i] = reader.next();
    return ids;
  }

  bodyAt(index: number): number {
    while (this.decoded <= index) this.bodyIds[this.decoded++] = this.next();
    return this.bodyIds[index] as number;
  }

  /**
   * The body's best snippet window: what bestWindow() gives for the body's tokens classified by
   * query term, found in one pass that decodes each token id once and does window work only at
   * hits. `marks[id] === generation` says token `id` belongs to the search whose term indexes
   * `values` holds. Distinct terms in the window only grow when a hit enters it, so only then (and
   * at the first full window) can it become the best; the scan stops at a window with all `wanted`.
   * It is the first reader of the body (present() calls it before classifyBody()).
   */
  bestBodyWindow(marks: Int32Array, values: Int16Array, generation: number, wanted: number): { start: number; distinct: number } {
    const { data, bodyIds, bodyLength: length } = this;
    const width = Math.min(SNIPPET_TOKENS, length);
    const hitAt = scratch(HIT_POSITION_SCRATCH, length);
    const hitTerm = scratch(HIT_TERM_SCRATCH, length);
    const window = new WindowSearch(hitAt, hitTerm, width, wanted);
    let hits = 0;
    let pos = this.pos;
    let last = 0;
    for (; last < length; last += 1) {
      let byte = data[pos++] as number;
      let id = byte & 0x7f;
      if (byte >= 0x80) {
        byte = data[pos++] as number;
        id |= (byte & 0x7f) << 7;
        for (let scale = 16384; byte >= 0x80; scale *= 128) {
          byte = data[pos++] as number;
          id += (byte & 0x7f) * scale;
        }
      }
      bodyIds[last] = id;
      if (marks[id] !== generation) {
        if (last === width - 1 && window.distinct < 0 && window.takeFirst()) break;
        continue;
      }
      hitAt[hits] = last;
      hitTerm[hits] = values[id] as number;
      if (window.enter(hits++)) break;
    }
    this.pos = pos;
    // Ids decoded so far, including the one the scan stopped at.
    this.decoded = Math.min(length, last + 1);
    return { start: window.start, distinct: window.distinct };
  }

  /**
   * The same window as bestBodyWindow(), found without decoding the body: each query token id's
   * varint is searched for in the body's bytes (a match counts where a varint starts: after a byte
   * below 0x80; varints are prefix-free), the hits are taken in body order, and a hit's position is
   * the number of varints before it (bytes below 0x80). A body of ~1,100 tokens in which two terms
   * never meet is counted in one simple pass instead of decoded and looked up token by token.
   * classifyBody() then reads the hits, searching on where the window reaches past them.
   */
  searchBodyWindow(patterns: readonly TermPattern[], wanted: number): { start: number; distinct: number } {
    const length = this.bodyLength;
    const width = Math.min(SNIPPET_TOKENS, length);
    const nextAt = new Int32Array(patterns.length);
    for (let k = 0; k < patterns.length; k += 1) nextAt[k] = this.occurrence((patterns[k] as TermPattern).bytes, this.pos);
    const hitAt = scratch(HIT_POSITION_SCRATCH, length);
    const hitTerm = scratch(HIT_TERM_SCRATCH, length);
    this.search = { patterns, nextAt, words: wordsOf(this.data), counted: this.pos, tokens: 0, hits: 0, hitAt, hitTerm };
    const window = new WindowSearch(hitAt, hitTerm, width, wanted);
    for (let hit = this.nextHit(Number.POSITIVE_INFINITY); hit >= 0; hit = this.nextHit(Number.POSITIVE_INFINITY)) {
      // The first full window ended before this hit.
      if (window.distinct < 0 && (hitAt[hit] as number) > width - 1 && window.takeFirst()) break;
      if (window.enter(hit)) break;
    }
    // No hit after the first full window (or none at all): that window, with what it holds.
    if (window.distinct < 0 && length > 0) window.takeFirst();
    return { start: window.start, distinct: window.distinct };
  }

  /** The offset of the first match of `pattern` at or after `from` where a varint starts, or -1. */
  private occurrence(pattern: Buffer, from: number): number {
    const data = this.data;
    for (let at = data.indexOf(pattern, from); at >= 0; at = data.indexOf(pattern, at + 1)) {
      // The byte before the body is the end of a varint too (of the header or a short column).
      if ((data[at - 1] as number) < 0x80) return at;
    }
    return -1;
  }

  /**
   * The next hit of searchBodyWindow()'s search, recorded in the hit scratch arrays, if its
   * position is below `before`: its index there, else -1 (and the hit stays next).
   */
  private nextHit(before: number): number {
    const search = this.search as NonNullable<DocTokens['search']>;
    const { nextAt, patterns } = search;
    let k = -1;
    let at = 0;
    for (let i = 0; i < nextAt.length; i += 1) {
      const offset = nextAt[i] as number;
      if (offset >= 0 && (k < 0 || offset < at)) {
        k = i;
        at = offset;
      }
    }
    if (k < 0) return -1;
    const tokens = search.tokens + countVarintEnds(this.data, search.words, search.counted, at);
    search.counted = at;
    search.tokens = tokens;
    if (tokens >= before) return -1;
    const pattern = patterns[k] as TermPattern;
    const hit = search.hits++;
    search.hitAt[hit] = tokens;
    search.hitTerm[hit] = pattern.term;
    nextAt[k] = this.occurrence(pattern.bytes, at + pattern.bytes.length);
    return hit;
  }

  /** Sets `termAt[i]` (the query term index of body token i, or -1) for i in [from, to), decoding ids as far as needed. */
  classifyBody(termAt: Int32Array, from: number, to: number, marks: Int32Array, values: Int16Array, generation: number): void {
    const end = Math.min(to, this.bodyLength);
    if (this.search) {
      // From the hits searchBodyWindow() found, and those past them up to the window's end.
      termAt.fill(-1, Math.max(0, from), Math.max(0, end));
      while (this.nextHit(end) >= 0);
      const { hitAt, hitTerm, hits } = this.search;
      for (let hit = 0; hit < hits; hit += 1) {
        const at = hitAt[hit] as number;
        if (at >= from && at < end) termAt[at] = hitTerm[hit] as number;
      }
      return;
    }
    for (let i = Math.max(0, from); i < end; i += 1) {
      const id = this.bodyAt(i);
      termAt[i] = marks[id] === generation ? values[id] as number : -1;
    }
  }

  private next(): number {
    const data = this.data;
    let byte = data[this.pos++] as number;
    let value = byte & 0x7f;
    for (let scale = 128; byte >= 0x80; scale *= 128) {
      byte = data[this.pos++] as number;
      value += (byte & 0x7f) * scale;
    }
    return value;
  }
}

/**
 * The first SNIPPET_TOKENS-token window of `termAt` (query term index per token, or -1) with the
 * most distinct terms; the scan stops at a window that has all `wanted`. (The body's window is
 * found by DocTokens.bestBodyWindow, which gives the same window without classifying every token.)
 */
function bestWindow(termAt: Int32Array, length: number, wanted: number): { start: number; distinct: number } {
  const counts = new Int32Array(wanted);
  const width = Math.min(SNIPPET_TOKENS, length);
  let distinct = 0;
  let bestStart = 0;
  let bestDistinct = -1;
  for (let last = 0; last < length; last += 1) {
    const entering = termAt[last] as number;
    if (entering >= 0 && (counts[entering] = (counts[entering] as number) + 1) === 1) distinct += 1;
    const first = last - width + 1;
    if (first > 0) {
      const leaving = termAt[first - 1] as number;
      if (leaving >= 0 && (counts[leaving] = (counts[leaving] as number) - 1) === 0) distinct -= 1;
    }
    if (first >= 0 && distinct > bestDistinct) {
      bestStart = first;
      bestDistinct = distinct;
      if (distinct === wanted) break;
    }
  }
  return { start: bestStart, distinct: bestDistinct };
}

/**
 * Scoring from decoded impacts, the path of every common word's list: top-level functions with
 * everything in locals, so that V8 compiles each loop on its own (inside evaluate()'s closure they
 * ran at about 10 ns a posting). Scores are kept negated, as in evaluate().
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
function intersectImpacts(candidates: Int32Array, scores: Float64Array, count: number, docs: Int32Array, impacts: Float64Array, df: number): number {
  let kept = 0;
  let c = 0;
  let candidate = count > 0 ? candidates[0] as number : 0;
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

/** Whether guide `doc` with `score` ranks after guide `other` with `otherScore`: a higher (negated) score, or the same score later in list order. */
function ranksAfter(score: number, doc: number, otherScore: number, other: number): boolean {
  return score > otherScore || (score === otherScore && doc > other);
}

/** Whether candidate `a` ranks after candidate `b` (ranksAfter()). */
function isWorse(candidates: Int32Array, scores: Float64Array, a: number, b: number): boolean {
  return ranksAfter(scores[a] as number, candidates[a] as number, scores[b] as number, candidates[b] as number);
}

/**
 * Moves the `count` best of the first `matched` candidates to the front of `candidates` and
 * `scores` (unordered) and returns how many: one pass keeping a bounded heap with the worst of the
 * best on top (keepBest()), so most candidates cost a single comparison. The heap grows at the
 * front, never past the candidate being read, so it can live in the same arrays.
 */
function bestCandidates(candidates: Int32Array, scores: Float64Array, matched: number, count: number): number {
  let size = 0;
  for (let i = 0; i < matched; i += 1) size = keepBest(candidates, scores, size, count, candidates[i] as number, scores[i] as number);
  return size;
}

/**
 * Offers guide `doc` with `score` to a bounded heap of the best `count` so far, held in the first
 * `size` entries of `candidates` and `scores` with the worst (isWorse()) on top; returns the new size.
 */
function keepBest(candidates: Int32Array, scores: Float64Array, size: number, count: number, doc: number, score: number): number {
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
 * The best `count` guides that every one of the dense `lists` holds (in evaluate()'s order, summed
 * as evaluate() sums them: the same doubles), among those after the cursor (`afterScore` and
 * `boundary`, as search() filters): one pass in docno order, each list read in order, keeping the
 * best in a bounded heap as it goes; what evaluate() and bestCandidates() give, without writing
 * every match down first and reading it all back. They go to `candidates` and `scores` (unordered:
 * hitsInOrder() orders them); returns how many.
 *
 * The loop for two to four lists names each list: 0.8× the time of the general loop for those
 * (measured 2026-11-29, docs/search-measurements.md). Guides come in docno order, so one with the
 * same score as the worst kept ranks below it.
 */
function scanDense(lists: readonly Float64Array[], docCount: number, count: number, candidates: Int32Array, scores: Float64Array,
  afterScore: number, boundary: number): number {
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
      if (!(score > afterScore || (score === afterScore && doc >= boundary))) continue;
      if (size === count && !(score < (scores[0] as number))) continue;
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
    if (held < k || !(score > afterScore || (score === afterScore && doc >= boundary))) continue;
    if (size === count && !(score < (scores[0] as number))) continue;
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

interface IndexState {
  contentVersion: string;
  docCount: number;
  terms: string[];
  /** Term ids sorted by term text, for prefix ranges. */
  sortedTermIds: Int32Array;
  termDf: Int32Array;
  prefixes: Map<string, { id: number; df: number }>;
  guideIds: Int32Array;
  publishedMs: Float64Array;
  // Scratch arrays sized to the document count, reused by every search (searches are synchronous).
  candidates: Int32Array;
  scores: Float64Array;
  heap: Int32Array;
  unionSums: Int32Array;
  unionDocs: Int32Array;
  unionOutDocs: Int32Array;
  unionOutFreqs: Int32Array;
  /** Snippets' memo of token id → query term index, valid where the generation is the search's. */
  termCacheGeneration: Int32Array;
  termCacheValue: Int16Array;
  generation: number;
}

/** A query term resolved against the vocabulary, with the documents it matches. */
type Source =
  | { kind: 'list'; df: number; data: Uint8Array }
  | { kind: 'arrays'; df: number; docs: Int32Array; freqs: Int32Array; length: number }
  | { kind: 'impacts'; df: number; docs: Int32Array; impacts: Float64Array }
  // One impact per guide, by docno, 0 where the list lacks the guide (see sourceOf()).
  | { kind: 'dense'; df: number; impacts: Float64Array };

type DenseSource = Source & { kind: 'dense' };

const K1_PLUS_1 = BM25_K1 + 1;
/** BM25F saturates a frequency once, f·(k1+1) / (f + k1): f is stored in FREQUENCY_SCALE units, so k1 is scaled too. */
const SATURATION = BM25_K1 * FREQUENCY_SCALE;

/** A term's inverse document frequency as Lucene's BM25 has it: FTS5's gave a word in half the guides none. */
function idfOf(docCount: number, df: number): number {
  return Math.log(1 + (docCount - df + 0.5) / (df + 0.5));
}

interface ResolvedTerm {
  /** Tokens whose ids count as hits of this term in snippets. */
  tokenIds: Set<number>;
  prefix?: string;
  /** For phrases: the token ids that must follow each other in one column. */
  phrase?: number[];
  sources: Source[];
}

export interface SearchHit {
  docno: number;
  guideId: number;
  publishedMs: number;
  /** Lower is better (a negated BM25 sum), as the store contract orders searches. */
  score: number;
}

/** A query token id as its varint bytes (how it is stored in a document's token list), and its term's index. */
interface TermPattern {
  bytes: Buffer;
  term: number;
}

export interface SearchResult {
  hits: SearchHit[];
  terms: ResolvedTerm[];
  /** Which search the snippet memo belongs to (see IndexState.generation). */
  generation: number;
  /** The query's token ids to search bodies for (see SNIPPET_SEARCH_MAX_IDS), made with the memo; undefined: too many, decode. */
  patterns?: TermPattern[] | undefined;
  state?: IndexState;
}



export interface SqliteSearch {
  /** Loads the index of the current content version now, if not loaded yet (else the next search does). */
  warm(): void;
  /** Up to `count` hits strictly after `after`, best first. */
  search(query: SearchQuery, count: number, after: SearchPosition | undefined): SearchResult;
  /** A hit's summary fields, and a snippet: its best passage with the matched words wrapped in `**`. */
  present(result: SearchResult, hit: SearchHit): GuideSummaryData;
  /** The same as its search card (searchCardJson) and snippet, for a page rendered from cards (guide-list-body.ts). */
  presentCard(result: SearchResult, hit: SearchHit): SearchCardItem;
}

function readInt32Array(buffer: Buffer): Int32Array {
  const array = new Int32Array(buffer.length / 4);
  for (let i = 0; i < array.length; i += 1) array[i] = buffer.readInt32LE(i * 4);
  return array;
}

export interface SqliteSearchOptions {
  /** Lists at least this long are kept as decoded impacts (default IMPACT_MIN_DF). */
  impactMinDf?: number;
  /** Bytes of decoded impacts kept (default IMPACT_CACHE_BYTES). */
  impactCacheBytes?: number;
  /** Bytes of posting lists kept as read (default POSTINGS_CACHE_BYTES). */
  postingsCacheBytes?: number;
  /** Searches with at most this many query token ids find snippet windows by byte search (default SNIPPET_SEARCH_MAX_IDS; 0: always decode). */
  snippetSearchMaxIds?: number;
}

export function createSqliteSearch(db: Database, options: SqliteSearchOptions = {}): SqliteSearch {
  const impactMinDf = options.impactMinDf ?? IMPACT_MIN_DF;
  const impactCacheBytes = options.impactCacheBytes ?? IMPACT_CACHE_BYTES;
  const snippetSearchMaxIds = options.snippetSearchMaxIds ?? SNIPPET_SEARCH_MAX_IDS;
  const statements = {
    version: db.prepare<[], string>("SELECT value FROM meta WHERE key = 'content_version'").pluck(),
    meta: db.prepare<[string], Buffer>('SELECT value FROM search_meta WHERE key = ?').pluck(),
    postings: db.prepare<[number], Buffer>('SELECT data FROM search_postings WHERE id = ?').pluck(),
    // As an array, not an object with named properties: about 0.5 µs less a row, 21 rows a page.
    docTokens: db.prepare<[number], [Buffer, string, string]>('SELECT tokens, card, head FROM search_docs WHERE docno = ?').raw(true),
    // Phrase checks need the token ids only: no card to parse, no text to decode.
    tokensOnly: db.prepare<[number], Buffer>('SELECT tokens FROM search_docs WHERE docno = ?').pluck(),
    // Ids are guide id × 65,536 + part (see migration 4): a guide's parts from a given one are a rowid range.
    textParts: db.prepare<[number, number, number], string>('SELECT text FROM guide_text_parts WHERE id >= ? AND id < ? ORDER BY id LIMIT ?').pluck(),
    // One part by id: measured about 1 µs, against about 7 µs for the range query above with LIMIT 1.
    textPart: db.prepare<[number], string>('SELECT text FROM guide_text_parts WHERE id = ?').pluck(),
    slugOf: db.prepare<[number], string>('SELECT slug FROM guides WHERE id = ?').pluck(),
  };

  let state: IndexState | undefined;
  // Both caches hold views into one buffer each, overwritten oldest first (see ring-cache.ts).
  const postingsCache = new RingCache<number, Uint8Array>(options.postingsCacheBytes ?? POSTINGS_CACHE_BYTES, 8);
  const impactCache = new RingCache<number | string, Source & { kind: 'impacts' | 'dense' }>(impactCacheBytes, 8);

  function load(contentVersion: string): IndexState {
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
      if (prefixBlob !== '') prefixBlob.split('\n').forEach((prefix, i) => prefixes.set(prefix, { id: terms.length + i, df: prefixDf[i] as number }));
    }
    const documents = docCount > 0 ? statements.meta.get('documents')! : Buffer.alloc(0);
    const guideIds = new Int32Array(docCount);
    const publishedMs = new Float64Array(docCount);
    for (let docno = 0; docno < docCount; docno += 1) {
      guideIds[docno] = documents.readInt32LE(docno * 16);
      publishedMs[docno] = documents.readDoubleLE(docno * 16 + 8);
    }
    postingsCache.clear();
    impactCache.clear();
    return {
      contentVersion, docCount, terms, sortedTermIds, termDf, prefixes, guideIds, publishedMs,
      candidates: new Int32Array(docCount),
      scores: new Float64Array(docCount),
      heap: new Int32Array(docCount),
      unionSums: new Int32Array(docCount),
      unionDocs: new Int32Array(docCount),
      unionOutDocs: new Int32Array(docCount),
      unionOutFreqs: new Int32Array(docCount),
      termCacheGeneration: new Int32Array(terms.length),
      termCacheValue: new Int16Array(terms.length),
      generation: 0,
    };
  }

  function current(): IndexState {
    const version = statements.version.get() ?? '0';
    if (!state || state.contentVersion !== version) state = load(version);
    return state;
  }

  function postingsOf(id: number): Uint8Array {
    const cached = postingsCache.get(id);
    if (cached) return cached;
    // Read into a new buffer that dies young; the cache keeps a copy in its own.
    const data = statements.postings.get(id) ?? Buffer.alloc(0);
    return postingsCache.put(id, data.length, (buffer, offset) => {
      const kept = new Uint8Array(buffer, offset, data.length);
      kept.set(data);
      return kept;
    }) ?? data;
  }

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
    // The same expression as in evaluate(), so a score is the same double either way. Never 0: a
    // posting's frequency is at least 1 and the IDF above 0, so 0 can mark "absent" in a dense list.
    const impactOf = (freq: number): number => idf * (freq * K1_PLUS_1) / (freq + SATURATION);
    const forEachPosting = (visit: (i: number, doc: number, freq: number) => void): void => {
      if (made.kind === 'list') {
        const reader = new VarintReader(made.data);
        for (let i = 0, doc = -1; !reader.done; i += 1) {
          doc += reader.next() + 1;
          visit(i, doc, reader.next());
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
        kind: 'dense' as const, df, impacts: new Float64Array(buffer, offset, docCount).fill(0),
      })) ?? { kind: 'dense' as const, df, impacts: new Float64Array(docCount) };
      const { impacts } = source;
      forEachPosting((_, doc, freq) => {
        impacts[doc] = impactOf(freq);
      });
      return source;
    }
    // In the cache's buffer (impacts first: 8-byte aligned), or, when it has no room this search, apart.
    const source = impactCache.put(key, df * 12, (buffer, offset) => ({
      kind: 'impacts' as const, df, impacts: new Float64Array(buffer, offset, df), docs: new Int32Array(buffer, offset + df * 8, df),
    })) ?? { kind: 'impacts' as const, df, docs: new Int32Array(df), impacts: new Float64Array(df) };
    const { docs, impacts } = source;
    forEachPosting((i, doc, freq) => {
      docs[i] = doc;
      impacts[i] = impactOf(freq);
    });
    return source;
  }

  /**
   * Term ids whose text starts with `prefix`: a view of the sorted vocabulary, found by two binary
   * searches (the terms that start with a prefix are contiguous in sorted order). A one-letter
   * prefix expands to thousands of terms; walking them with startsWith() on every search cost more
   * than scoring.
   */
  function expansionsOf(s: IndexState, prefix: string): Int32Array {
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

  function termIdOf(s: IndexState, token: string): number | undefined {
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

  /** Merges several posting lists into one (a prefix without a stored list), summing frequencies. */
  function union(s: IndexState, ids: Int32Array): Source {
    const { unionSums: sums, unionDocs: docs } = s;
    let count = 0;
    for (const id of ids) {
      const data = postingsOf(id);
      let pos = 0;
      let doc = -1;
      while (pos < data.length) {
        let byte = data[pos++] as number;
        let delta = byte & 0x7f;
        for (let scale = 128; byte >= 0x80; scale *= 128) {
          byte = data[pos++] as number;
          delta += (byte & 0x7f) * scale;
        }
        byte = data[pos++] as number;
        let freq = byte & 0x7f;
        for (let scale = 128; byte >= 0x80; scale *= 128) {
          byte = data[pos++] as number;
          freq += (byte & 0x7f) * scale;
        }
        doc += delta + 1;
        if (sums[doc] === 0) docs[count++] = doc;
        sums[doc] = (sums[doc] as number) + freq;
      }
    }
    // Scratch, not new arrays: only the last term of a query is a prefix, so one union is alive at a time.
    const { unionOutDocs: outDocs, unionOutFreqs: outFreqs } = s;
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

  /** Resolves query terms; undefined when some term matches nothing (so the AND matches nothing). */
  function resolve(s: IndexState, query: SearchQuery): ResolvedTerm[] | undefined {
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
          resolved.push({ tokenIds: new Set(), prefix, sources: [sourceOf(s, stored.id, stored.df, () => ({ kind: 'list', df: stored.df, data: postingsOf(stored.id) }))] });
          continue;
        }
        const ids = expansionsOf(s, prefix);
        if (ids.length === 0) return undefined;
        const first = ids[0] as number;
        const source = ids.length === 1
          ? sourceOf(s, first, s.termDf[first] as number, () => ({ kind: 'list', df: s.termDf[first] as number, data: postingsOf(first) }))
          : sourceOf(s, `union:${prefix}`, Math.max(...Array.from(ids, (id) => s.termDf[id] as number)), () => union(s, ids));
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
        sources: ids.map((id) => sourceOf(s, id, s.termDf[id] as number, () => ({ kind: 'list', df: s.termDf[id] as number, data: postingsOf(id) }))),
      });
    }
    return resolved;
  }

  /**
   * AND of every source, adding each source's BM25 contribution. Sources run rarest first; the
   * candidate arrays shrink in place. Returns the candidate count; scores hold the negated sums.
   */
  function evaluate(s: IndexState, sources: readonly Source[]): number {
    const { candidates, scores, docCount } = s;
    const ordered = [...sources].sort((a, b) => a.df - b.df);
    const k1plus1 = K1_PLUS_1;
    const saturation = SATURATION;
    let count = 0;
    ordered.forEach((source, index) => {
      const df = source.df;
      const idf = idfOf(docCount, df);
      // Scores are kept negated (lower is better, as the store contract orders searches):
      // -(a + b) and (-a) - b are the same double, so no pass is needed to flip them afterwards.
      let kept = 0;
      let c = 0;
      const isFirst = index === 0;
      if (source.kind === 'list') {
        const data = source.data;
        let pos = 0;
        let doc = -1;
        while (pos < data.length) {
          let byte = data[pos++] as number;
          let delta = byte & 0x7f;
          for (let scale = 128; byte >= 0x80; scale *= 128) {
            byte = data[pos++] as number;
            delta += (byte & 0x7f) * scale;
          }
          byte = data[pos++] as number;
          let freq = byte & 0x7f;
          for (let scale = 128; byte >= 0x80; scale *= 128) {
            byte = data[pos++] as number;
            freq += (byte & 0x7f) * scale;
          }
          doc += delta + 1;
          if (isFirst) {
            candidates[kept] = doc;
            scores[kept++] = -(idf * (freq * k1plus1) / (freq + saturation));
            continue;
          }
          // Later lists: only postings of surviving candidates are scored.
          while (c < count && (candidates[c] as number) < doc) c += 1;
          if (c >= count) break;
          if (candidates[c] === doc) {
            candidates[kept] = doc;
            scores[kept++] = (scores[c] as number) - idf * (freq * k1plus1) / (freq + saturation);
            c += 1;
          }
        }
      } else if (source.kind === 'dense') {
        kept = isFirst ? takeDense(candidates, scores, source.impacts, docCount) : intersectDense(candidates, scores, count, source.impacts);
      } else if (source.kind === 'impacts') {
        kept = isFirst ? takeImpacts(candidates, scores, source.docs, source.impacts, df) : intersectImpacts(candidates, scores, count, source.docs, source.impacts, df);
      } else {
        const { docs, freqs, length } = source;
        for (let i = 0; i < length; i += 1) {
          const doc = docs[i] as number;
          const freq = freqs[i] as number;
          if (isFirst) {
            candidates[kept] = doc;
            scores[kept++] = -(idf * (freq * k1plus1) / (freq + saturation));
            continue;
          }
          while (c < count && (candidates[c] as number) < doc) c += 1;
          if (c >= count) break;
          if (candidates[c] === doc) {
            candidates[kept] = doc;
            scores[kept++] = (scores[c] as number) - idf * (freq * k1plus1) / (freq + saturation);
            c += 1;
          }
        }
      }
      count = kept;
    });
    return count;
  }

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

  function docTokens(docno: number): DocTokens {
    const row = statements.docTokens.get(docno);
    return row ? new DocTokens(row[0], row[1], row[2]) : new DocTokens(Buffer.alloc(0), '{"slug":""', '');
  }

  /** Whether guide `docno` holds every phrase: its words in a row, in one column. */
  function hasPhrases(docno: number, patterns: readonly Buffer[]): boolean {
    const data = statements.tokensOnly.get(docno);
    return data !== undefined && patterns.every((pattern) => phraseIn(data, pattern));
  }

  function selectBest(s: IndexState, matched: number, count: number): SearchHit[] {
    return hitsInOrder(s, bestCandidates(s.candidates, s.scores, matched, count));
  }

  /** The first `size` candidates (a page, unordered) as hits, best first. */
  function hitsInOrder(s: IndexState, size: number): SearchHit[] {
    const { candidates, scores } = s;
    const chosen = Array.from({ length: size }, (_, i) => i).sort((a, b) => (isWorse(candidates, scores, a, b) ? 1 : isWorse(candidates, scores, b, a) ? -1 : 0));
    return chosen.map((i) => {
      const docno = candidates[i] as number;
      return { docno, guideId: s.guideIds[docno] as number, publishedMs: s.publishedMs[docno] as number, score: scores[i] as number };
    });
  }

  return {
    warm() {
      current();
    },
    search(query, count, after) {
      const s = current();
      // Lists resolved from here on stay in their caches until this search has scored them.
      postingsCache.turn();
      impactCache.turn();
      const empty: SearchResult = { hits: [], terms: [], generation: -1 };
      if (s.docCount === 0) return empty;
      const terms = resolve(s, query);
      if (!terms || terms.length === 0) return empty;
      const sources = terms.flatMap((term) => term.sources);
      if (count > 0 && terms.every((term) => term.phrase === undefined) && sources.every((source): source is DenseSource => source.kind === 'dense')) {
        // Common words only (the costliest searches: most guides match, none narrows the others
        // down): one pass over every guide, keeping the page as it goes (scanDense()).
        const lists = [...sources].sort((a, b) => a.df - b.df).map((source) => source.impacts);
        const found = scanDense(lists, s.docCount, count, s.candidates, s.scores, after ? after.score : Number.NEGATIVE_INFINITY,
          after ? boundaryAfter(s, after.publishedMs, after.slug) : 0);
        return { hits: hitsInOrder(s, found), terms, generation: -1, state: s };
      }
      let matched = evaluate(s, sources);
      const { candidates, scores, heap } = s;

      // Keep only candidates strictly after the cursor: a worse score, or the same score later in list order.
      if (after) {
        const boundary = boundaryAfter(s, after.publishedMs, after.slug);
        let kept = 0;
        for (let i = 0; i < matched; i += 1) {
          const score = scores[i] as number;
          if (score > after.score || (score === after.score && (candidates[i] as number) >= boundary)) {
            candidates[kept] = candidates[i] as number;
            scores[kept++] = score;
          }
        }
        matched = kept;
      }

      const phrases = terms.filter((term) => term.phrase !== undefined).map((term) => {
        const pattern = new VarintWriter();
        for (const id of term.phrase as number[]) pattern.push(id);
        return pattern.toBuffer();
      });
      if (phrases.length === 0) return { hits: selectBest(s, matched, count), terms, generation: -1, state: s };

      // With a phrase, candidates are checked in rank order until the page is full: a binary heap of
      // candidate indexes, best (lowest score, then lowest docno) on top.
      const better = (a: number, b: number): boolean => {
        const x = scores[a] as number;
        const y = scores[b] as number;
        return x < y || (x === y && (candidates[a] as number) < (candidates[b] as number));
      };
      let size = matched;
      for (let i = 0; i < size; i += 1) heap[i] = i;
      const siftDown = (start: number): void => {
        let i = start;
        for (;;) {
          const left = 2 * i + 1;
          if (left >= size) return;
          const right = left + 1;
          const child = right < size && better(heap[right] as number, heap[left] as number) ? right : left;
          if (!better(heap[child] as number, heap[i] as number)) return;
          const swap = heap[i] as number;
          heap[i] = heap[child] as number;
          heap[child] = swap;
          i = child;
        }
      };
      for (let i = (size >>> 1) - 1; i >= 0; i -= 1) siftDown(i);
      const hits: SearchHit[] = [];
      while (hits.length < count && size > 0) {
        const top = heap[0] as number;
        size -= 1;
        heap[0] = heap[size] as number;
        siftDown(0);
        const docno = candidates[top] as number;
        if (!hasPhrases(docno, phrases)) continue;
        hits.push({ docno, guideId: s.guideIds[docno] as number, publishedMs: s.publishedMs[docno] as number, score: scores[top] as number });
      }
      return { hits, terms, generation: -1, state: s };
    },

    present(result, hit) {
      const doc = docTokens(hit.docno);
      return { ...doc.fields(), snippet: snippetOf(result, hit, doc) };
    },

    presentCard(result, hit) {
      const doc = docTokens(hit.docno);
      return { card: doc.card, slug: doc.slug, snippet: snippetOf(result, hit, doc) };
    },
  };

  /** The hit's best passage, its matched words wrapped in `**`. */
  function snippetOf(result: SearchResult, hit: SearchHit, doc: DocTokens): string {
    // The index state the search ran on (not re-read: a snippet belongs to its search).
    const s = result.state ?? current();
    // Token id → query term index, marked once per search in typed arrays (ids not marked: no term).
    const { termCacheGeneration, termCacheValue } = s;
    if (result.generation !== s.generation || result.generation < 0) {
      s.generation += 1;
      result.generation = s.generation;
      // Later terms first, so an id two terms share keeps the first one's index.
      const termOfId = new Map<number, number>();
      for (let index = result.terms.length - 1; index >= 0; index -= 1) {
        const term = result.terms[index] as ResolvedTerm;
        const ids = term.prefix !== undefined ? expansionsOf(s, term.prefix) : term.tokenIds;
        for (const id of ids) {
          termCacheGeneration[id] = s.generation;
          termCacheValue[id] = index;
          if (termOfId.size <= snippetSearchMaxIds) termOfId.set(id, index);
        }
      }
      result.patterns = termOfId.size <= snippetSearchMaxIds ? [...termOfId].map(([id, term]) => {
        const bytes = new VarintWriter(5);
        bytes.push(id);
        return { bytes: bytes.toBuffer(), term };
      }) : undefined;
    }
    const generation = result.generation;
    const termOf = (id: number): number => (termCacheGeneration[id] === generation ? termCacheValue[id] as number : -1);

    // The body's best window, else (no hit in the body) the first column that has one: summary,
    // title, tags. The body is decoded and classified only as far as the scan gets.
    const wanted = result.terms.length;
    let column = BODY;
    let length = doc.bodyLength;
    let termAt = scratch(TERM_SCRATCH, length);
    const classifyBody = (from: number, to: number): void => doc.classifyBody(termAt, from, to, termCacheGeneration, termCacheValue, generation);
    let best = result.patterns ? doc.searchBodyWindow(result.patterns, wanted) : doc.bestBodyWindow(termCacheGeneration, termCacheValue, generation, wanted);
    if (best.distinct <= 0) {
      for (const other of [1, 0, 2]) {
        const ids = doc.column(other);
        const candidate = Int32Array.from(ids, termOf);
        if (!candidate.some((index) => index >= 0)) continue;
        column = other;
        termAt = candidate;
        length = ids.length;
        best = bestWindow(termAt, length, wanted);
        break;
      }
    }
    let bestStart = best.start;
    const width = Math.min(SNIPPET_TOKENS, length);
    if (column === BODY) classifyBody(bestStart, bestStart + width);
    const termAtIndex = (i: number): number => termAt[i] as number;
    // Start a little before the window's first hit rather than on unrelated words.
    let firstHit = bestStart;
    while (firstHit < bestStart + width - 1 && termAtIndex(firstHit) < 0) firstHit += 1;
    bestStart = Math.max(0, Math.min(firstHit - 2, length - width));
    const end = Math.min(length, bestStart + SNIPPET_TOKENS);
    if (column === BODY) classifyBody(bestStart, end);

    // The window's words: from the column text (short columns) or from a slice of the body read
    // from the nearest checkpoint before the window.
    let text: string;
    let tokenIndex = 0;
    let isTruncated = false;
    let fromCodePoint = 0;
    let firstPart = 0;
    if (column === BODY) {
      ({ tokenIndex, codePoint: fromCodePoint } = doc.checkpointBefore(bestStart));
      // The part holding the checkpoint, and the next one when the checkpoint is late in it: the
      // window rarely needs more. The first part comes with the document (its head), so it is
      // never read again: a checkpoint late in it reads only the second part.
      firstPart = Math.floor(fromCodePoint / TEXT_PART_CHARS);
      const isLate = fromCodePoint - firstPart * TEXT_PART_CHARS > TEXT_PART_CHARS - 400;
      if (firstPart === 0 && !isLate) {
        text = doc.head;
        isTruncated = text.length >= TEXT_PART_CHARS;
      } else {
        const id = hit.guideId * 65536 + firstPart;
        text = (firstPart === 0 ? doc.head : statements.textPart.get(id) ?? '') + (isLate ? statements.textPart.get(id + 1) ?? '' : '');
        isTruncated = true;
      }
    } else {
      const card = doc.fields();
      text = [card.title, card.summary, card.tags.join(' ')][column] as string;
    }
    const startOffset = (): number => utf16Offset(text, fromCodePoint - firstPart * TEXT_PART_CHARS);
    const render = (): string | undefined => {
      // The window's words and the text between them, hits wrapped in `**`. Text between words
      // may hold a `*` (titles, summaries): dropped, so `**` only ever marks a hit. Runs of white
      // space become one space. Words joined by one space are copied as one slice of the text
      // (from `run`), so a snippet is a few slices, not two or three new strings a word.
      let out = '';
      let run = -1;
      let cursor = -1;
      let lastWordStart = -1;
      let index = tokenIndex;
      let complete = false;
      const flush = (to: number): void => {
        if (run >= 0) out += text.slice(run, to);
        run = -1;
      };
      forEachWord(text, (start, wordEnd) => {
        const at = index;
        // Plain ASCII words are one token each; others may be none or several (see tokensOfWord).
        index += isPlainWord(text, start, wordEnd) ? 1 : tokensOfWord(text.slice(start, wordEnd)).length;
        if (index === at) return true;
        if (at >= end) {
          complete = true;
          return false;
        }
        // A word cut by the end of a truncated slice is not rendered: read the rest and try again
        // (not counted, so the render is incomplete even when it was the window's last word).
        if (isTruncated && wordEnd >= text.length) {
          index = at;
          return false;
        }
        if (index <= bestStart || start === lastWordStart) return true;
        lastWordStart = start;
        if (cursor >= 0) {
          if (start === cursor + 1 && text.charCodeAt(cursor) === 32) {
            if (run < 0) run = cursor;
          } else {
            flush(cursor);
            out += asGap(text.slice(cursor, start));
          }
        }
        let isHit = false;
        for (let t = Math.max(at, bestStart); t < index && t < end; t += 1) isHit ||= termAtIndex(t) >= 0;
        if (isHit) {
          flush(start);
          out += `**${text.slice(start, wordEnd)}**`;
        } else if (run < 0) {
          run = start;
        }
        cursor = wordEnd;
        return true;
      }, startOffset());
      flush(cursor);
      // A window that reaches the end of the column keeps its closing punctuation.
      if (!complete && end >= length && cursor >= 0) out += asGap(text.slice(cursor));
      return complete || index >= end || !isTruncated ? out : undefined;
    };
    let out = render();
    if (out === undefined) {
      text = statements.textParts.all(hit.guideId * 65536 + firstPart, (hit.guideId + 1) * 65536, -1).join('');
      isTruncated = false;
      out = render() ?? '';
    }
    return `${bestStart > 0 ? '…' : ''}${out.trim()}${end < length ? '…' : ''}`;
  }
}

/** A page of a search: `limit` summaries with snippets, and the position to continue from when more follow. */
export function searchPage(search: SqliteSearch, options: SearchPageOptions): Page<SearchPosition> {
  // Summaries come from the index (which holds published guides only), not from the guides rows.
  return pageOf(search, options, (result, hit) => search.present(result, hit));
}

/** The same page as cards (see SearchCardItem), for rendering where the search ran. */
export function searchCardPage(search: SqliteSearch, options: SearchPageOptions): SearchCardPage {
  return pageOf(search, options, (result, hit) => search.presentCard(result, hit));
}

function pageOf<T extends { slug: string }>(search: SqliteSearch, { query, limit, after }: SearchPageOptions,
  present: (result: SearchResult, hit: SearchHit) => T): { items: T[]; next?: SearchPosition } {
  const result = search.search(query, limit + 1, after);
  const items: T[] = [];
  let next: SearchPosition | undefined;
  for (const hit of result.hits.slice(0, limit)) {
    const item = present(result, hit);
    items.push(item);
    next = { score: hit.score, publishedMs: hit.publishedMs, slug: item.slug };
  }
  return { items, ...(result.hits.length > limit && next ? { next } : {}) };
}
