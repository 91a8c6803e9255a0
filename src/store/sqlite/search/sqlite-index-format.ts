/**
 * The stored layout of the embedded search index, shared by the builder and the reader.
 *
 * - Documents are numbered ("docno") in list order (publishedAt desc, slug asc), so the search
 *   tie-break (publishedAt desc, slug) is simply "lower docno first".
 * - A posting list is docno-ordered (delta, frequency) varint pairs; the frequency is BM25F's, in
 *   FREQUENCY_SCALE units (sqlite-index-builder.ts). A long list also has a block table
 *   (sqlite-block-table.ts).
 * - A document's token list (search_docs.tokens): the 4 column lengths, the checkpoint count, the
 *   checkpoints (pairs of body token index and code-point offset), then each column's ids, body last.
 */
import type { GuideRecord, GuideSummaryData } from '../../../guides/guide.js';

/** Column weights in the relevance score: title, summary, tags, body. */
export const SQLITE_COLUMN_WEIGHTS = [10, 4, 3, 1] as const;
/** BM25 parameters (the usual ones, as SQLite FTS5's bm25() uses); b applies to each column's own length. */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
/** Stored frequencies are BM25F's pseudo-frequency times this, rounded (at least 1). */
export const FREQUENCY_SCALE = 16;

/** Bump when the stored layout changes: readers rebuild an index of another format. */
export const SEARCH_FORMAT_VERSION = 7;
/** Every how many body tokens a character offset is kept for snippets. */
export const CHECKPOINT_EVERY = 32;
/**
 * A prefix gets its own merged list when it expands to more tokens than PREFIX_MAX_EXPANSIONS, or
 * to more postings than one in PREFIX_MAX_POSTINGS_SHARE guides: a common word's prefix, whose
 * merge would cost a search more than reading one long list (by blocks) does.
 */
export const PREFIX_MAX_EXPANSIONS = 48;
export const PREFIX_MAX_POSTINGS_SHARE = 2;
/** Columns of a search document: title, summary, tags, body. */
export const COLUMNS = 4;

/** Growable byte buffer of unsigned LEB128 varints. */
export class VarintWriter {
  bytes: Uint8Array;
  length = 0;

  constructor(capacity = 16) {
    this.bytes = new Uint8Array(capacity);
  }

  push(value: number): void {
    if (this.length + 5 > this.bytes.length) {
      const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + 5));
      grown.set(this.bytes.subarray(0, this.length));
      this.bytes = grown;
    }
    this.length = writeVarint(this.bytes, this.length, value);
  }

  /** A copy trimmed to the written bytes, as a Buffer for SQLite. */
  toBuffer(): Buffer {
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.length);
  }
}

/** Sequential varint reader; `pos` is public so callers can decode in tight loops. */
export class VarintReader {
  pos = 0;
  readonly bytes: Uint8Array;

  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }

  get done(): boolean {
    return this.pos >= this.bytes.length;
  }

  next(): number {
    const bytes = this.bytes;
    let byte = bytes[this.pos++] as number;
    if (byte < 0x80) return byte;
    let value = byte & 0x7f;
    // A running power of two, not 2 ** shift: with a variable exponent V8 calls pow() each time.
    let scale = 128;
    do {
      byte = bytes[this.pos++] as number;
      value += (byte & 0x7f) * scale;
      scale *= 128;
    } while (byte >= 0x80);
    return value;
  }
}

/** Writes `value` as a varint at `at`; returns the position after it. */
export function writeVarint(bytes: Uint8Array, at: number, value: number): number {
  let pos = at;
  let v = value;
  while (v >= 0x80) {
    bytes[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  bytes[pos++] = v;
  return pos;
}

/** The position in `data` just past the `count` varints that start at `pos` (they are stepped over, not decoded). */
export function skipVarints(data: Uint8Array, pos: number, count: number): number {
  let at = pos;
  for (let seen = 0; seen < count; at += 1) if ((data[at] as number) < 0x80) seen += 1;
  return at;
}

export function int32Buffer(values: Int32Array): Buffer {
  const buffer = Buffer.alloc(values.length * 4);
  for (let i = 0; i < values.length; i += 1) buffer.writeInt32LE(values[i] as number, i * 4);
  return buffer;
}

export function readInt32Array(buffer: Buffer): Int32Array {
  const array = new Int32Array(buffer.length / 4);
  for (let i = 0; i < array.length; i += 1) array[i] = buffer.readInt32LE(i * 4);
  return array;
}

const K1_PLUS_1 = BM25_K1 + 1;
const SATURATION = BM25_K1 * FREQUENCY_SCALE;

/**
 * A posting's share of a score: BM25F saturates a frequency once, idf·f·(k1+1) / (f + k1), f in
 * FREQUENCY_SCALE units (so k1 is scaled too). One expression for scores and block bounds alike:
 * pruning is exact only while both are computed the same way.
 */
export function impactOf(idf: number, freq: number): number {
  return (idf * (freq * K1_PLUS_1)) / (freq + SATURATION);
}

/** A term's inverse document frequency as Lucene's BM25 has it: FTS5's gave a word in half the guides none. */
export function idfOf(docCount: number, df: number): number {
  return Math.log(1 + (docCount - df + 0.5) / (df + 0.5));
}

/** Characters (code points) per stored part of a guide's plain text (table guide_text_parts, id = guide id × 65,536 + part). */
export const TEXT_PART_CHARS = 1024;

/** A guide's plain text cut into parts of TEXT_PART_CHARS code points, as SQLite's substr() counts. */
export function textParts(text: string): string[] {
  const parts: string[] = [];
  if (!HIGH_SURROGATE.test(text)) {
    for (let start = 0; start < text.length; start += TEXT_PART_CHARS) parts.push(text.slice(start, start + TEXT_PART_CHARS));
    return parts;
  }
  const codePoints = Array.from(text);
  for (let start = 0; start < codePoints.length; start += TEXT_PART_CHARS)
    parts.push(codePoints.slice(start, start + TEXT_PART_CHARS).join(''));
  return parts;
}

/** The summary fields of a search result, stored with its tokens (as searchCardJson writes them). */
export type SearchCard = Omit<GuideSummaryData, 'snippet'>;

export const HIGH_SURROGATE = /[\uD800-\uDBFF]/;

/** Statistics kept in search_meta under 'stats'. */
export interface SearchStats {
  format: number;
  docCount: number;
  totalTokens: number;
  termCount: number;
  prefixCount: number;
}

/** The first part of a guide's plain text, kept with its search document (most snippets need nothing else). */
export function headOf(plainText: string): string {
  return textParts(plainText.slice(0, TEXT_PART_CHARS * 2))[0] ?? '';
}

/**
 * A published guide's search card, as the index stores it: the JSON of its item in a list page up
 * to `url`, the object left open (`{"slug":…,"readingTimeMinutes":7`). Its fields are in the list
 * schema's order, so a search page's body is its cards joined with each result's `url` and
 * `snippet` (representation/search-cards-body.ts: the same bytes as serializing the page), and a search reads no
 * JSON to make a page. Parsed (`card + '}'`) only for a page that is not rendered where it is made,
 * or a snippet from a short column.
 */
export function searchCardJson(
  guide: Pick<GuideRecord, 'slug' | 'title' | 'summary' | 'tags' | 'language' | 'publishedAt' | 'updatedAt' | 'readingTimeMinutes'>,
): string {
  const publishedAt = guide.publishedAt as string;
  const card: SearchCard = {
    slug: guide.slug,
    title: guide.title,
    summary: guide.summary,
    tags: guide.tags,
    language: guide.language,
    publishedAt,
    updatedAt: guide.updatedAt ?? publishedAt,
    readingTimeMinutes: guide.readingTimeMinutes,
  };
  return JSON.stringify(card).slice(0, -1);
}

/**
 * One published guide's tokens as a SearchAnalyzer read them, for SearchIndexBuilder. The four
 * arrays are views of one ArrayBuffer, so a worker thread can hand them over without a copy.
 */
export interface DocTerms {
  /** The start of the stored token list: the 4 column lengths, the checkpoint count, the checkpoints (varints). */
  header: Uint8Array;
  /** The guide's distinct tokens (ids in the analyzer's vocabulary), in order of first appearance. */
  terms: Uint32Array;
  /** Each distinct token's occurrences in the body (the short columns' are counted from `sequence`). */
  bodyCounts: Uint32Array;
  /** Every token of title, summary, tags and body in order, as an index into `terms`. */
  sequence: Uint16Array | Uint32Array;
}

/** Local ids fit in 16 bits up to this many distinct tokens in a guide. */
const NARROW_DISTINCT = 0x10000;

/** One guide's DocTerms in one new buffer: terms and body counts (4 bytes each), the sequence (2 or 4 bytes a token), the header. */
export function packDocTerms(header: Uint8Array, terms: Uint32Array, bodyCounts: Uint32Array, sequence: Uint32Array): DocTerms {
  const distinct = terms.length;
  const count = sequence.length;
  const termBytes = distinct * 4;
  const sequenceBytes = count * (distinct > NARROW_DISTINCT ? 4 : 2);
  const buffer = new ArrayBuffer(termBytes * 2 + sequenceBytes + header.length);
  const packed = docTermsFromBuffer(buffer, distinct, count);
  packed.terms.set(terms);
  packed.bodyCounts.set(bodyCounts);
  packed.sequence.set(sequence);
  packed.header.set(header);
  return packed;
}

/** The DocTerms packDocTerms laid out in `buffer`. */
function docTermsFromBuffer(buffer: ArrayBuffer, distinct: number, count: number): DocTerms {
  const termBytes = distinct * 4;
  const wide = distinct > NARROW_DISTINCT;
  const sequenceEnd = termBytes * 2 + count * (wide ? 4 : 2);
  return {
    terms: new Uint32Array(buffer, 0, distinct),
    bodyCounts: new Uint32Array(buffer, termBytes, distinct),
    sequence: wide ? new Uint32Array(buffer, termBytes * 2, count) : new Uint16Array(buffer, termBytes * 2, count),
    header: new Uint8Array(buffer, sequenceEnd),
  };
}

/** A packed DocTerms as bytes to store (the buffer packDocTerms made, or a copy of the part the views cover). */
export function docTermsBytes(terms: DocTerms): Uint8Array {
  const buffer = terms.terms.buffer;
  const end = terms.header.byteOffset + terms.header.byteLength;
  return new Uint8Array(buffer, 0, end);
}

/** The DocTerms of bytes docTermsBytes gave, for a guide of `distinct` distinct tokens and `count` tokens in all. */
export function docTermsFromBytes(bytes: Uint8Array, distinct: number, count: number): DocTerms {
  // A copy: the 4-byte views need an aligned buffer of their own.
  return docTermsFromBuffer(new Uint8Array(bytes).buffer, distinct, count);
}

/** What the index keeps of a published guide: its card, the head of its text, and its tokens. */
export interface SearchDocData {
  /** The SearchCard as searchCardJson writes it. */
  card: string;
  /** headOf(plainText). */
  head: string;
  publishedMs: number;
  terms: DocTerms;
}

/** A guide's search document with the vocabulary its tokens refer to: that of the analyzer that read it. */
export interface SearchDoc extends SearchDocData {
  vocabulary: readonly string[];
}
