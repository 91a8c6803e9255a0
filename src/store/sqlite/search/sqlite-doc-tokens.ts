/**
 * One search document's token ids as a snippet reads them (search_docs.tokens, laid out as
 * sqlite-index-format.ts says): the body decoded only as far as it is read, and its best window
 * found by decoding (bestBodyWindow) or by searching its bytes (searchBodyWindow).
 */
import type { SearchCard } from './sqlite-index-format.js';
import { VarintReader, skipVarints } from './sqlite-index-format.js';

/** Tokens around the best passage in a snippet (as FTS5's snippet() with 24 tokens). */
export const SNIPPET_TOKENS = 24;

/**
 * Reusable typed arrays for per-result work. A new Int32Array of a guide's length per result would
 * be allocated outside the V8 heap each time, and that churn (hundreds of kilobytes a search)
 * makes V8 run a full collection several times a second. Searches are synchronous and handle one
 * result at a time, so one array per purpose is enough; each use overwrites what it reads.
 */
const BODY_SCRATCH = 0;
export const TERM_SCRATCH = 1;
const HIT_POSITION_SCRATCH = 2;
const HIT_TERM_SCRATCH = 3;
const scratchArrays: Int32Array<ArrayBuffer>[] = [new Int32Array(4096), new Int32Array(4096), new Int32Array(4096), new Int32Array(4096)];
export function scratch(which: number, length: number): Int32Array<ArrayBuffer> {
  let array = scratchArrays[which] as Int32Array<ArrayBuffer>;
  if (array.length < length) {
    array = new Int32Array(Math.max(length, array.length * 2));
    scratchArrays[which] = array;
  }
  return new Int32Array(array.buffer, 0, length);
}

/** A query token id as its varint bytes (how it is stored in a document's token list), and its term's index. */
export interface TermPattern {
  bytes: Buffer;
  term: number;
}

/**
 * How many varints end in data[from, to): the bytes below 0x80. Four bytes at a time where `data`
 * is aligned: `(w & 0x80808080) >>> 7` holds a 1 in each byte of `w` that continues a varint, and
 * multiplying by 0x01010101 sums those into the top byte. A body is read this way up to each snippet
 * hit. `words`: `data` as 32-bit words (see wordsOf), where it is aligned.
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

/** `data` as 32-bit words, when it starts on a 4-byte boundary (for countVarintEnds). */
function wordsOf(data: Uint8Array): Uint32Array | undefined {
  return data.byteOffset % 4 === 0 ? new Uint32Array(data.buffer, data.byteOffset, data.length >>> 2) : undefined;
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
export class DocTokens {
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
  private search:
    | {
        patterns: readonly TermPattern[];
        nextAt: Int32Array;
        words: Uint32Array | undefined;
        counted: number;
        tokens: number;
        hits: number;
        hitAt: Int32Array;
        hitTerm: Int32Array;
      }
    | undefined;
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
      termAt[i] = marks[id] === generation ? (values[id] as number) : -1;
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
