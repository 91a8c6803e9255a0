/**
 * The embedded search index, built at import inside the import's transaction (see docs/search.md).
 *
 * - Documents are numbered ("docno") in list order (publishedAt desc, slug asc), so the search
 *   tie-break (publishedAt desc, slug) is simply "lower docno first".
 * - Every token has a posting list: docno-ordered (delta, frequency) varint pairs, where the
 *   frequency is BM25F's: each column's count normalized by that column's length against its
 *   average, weighted (title 10, summary 4, tags 3, body 1), summed, in FREQUENCY_SCALE units.
 * - Prefixes that expand to many tokens, or to many postings, get a merged posting list of their
 *   own, so a one-letter prefix costs one list instead of thousands.
 * - Each document keeps its token ids per column (for phrases and snippets) and the code point
 *   offset of a body word about every 32 tokens (so a snippet reads a few words of text, not all).
 * - Vocabulary, document table and statistics are small blobs in search_meta that a reader loads
 *   once per content version.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { GuideRecord, GuideSummaryData } from '../../../guides/guide.js';
import { ABSENT, ASCII_WORD, FNV_OFFSET, FNV_PRIME, WordTable, isWordCode, tokensOfWord } from './sqlite-text.js';

/** Column weights in the relevance score: title, summary, tags, body. */
export const SQLITE_COLUMN_WEIGHTS = [10, 4, 3, 1] as const;
/** BM25 parameters (the usual ones, as SQLite FTS5's bm25() uses); b applies to each column's own length. */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
/** Stored frequencies are BM25F's pseudo-frequency times this, rounded (at least 1). */
export const FREQUENCY_SCALE = 16;

/** Bump when the stored layout changes: readers rebuild an index of another format. */
export const SEARCH_FORMAT_VERSION = 6;
/** Every how many body tokens a character offset is kept for snippets. */
export const CHECKPOINT_EVERY = 32;
/** A prefix gets its own merged list when it expands to more tokens or postings than this. */
export const PREFIX_MAX_EXPANSIONS = 48;
export const PREFIX_MAX_POSTINGS = 150_000;

const COLUMNS = 4;
const BATCH_ROWS = 500;

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

interface GuideTextRow {
  id: number;
  slug: string;
  title: string;
  summary: string;
  tags: string;
  language: string;
  published_at: string;
  updated_at: string | null;
  reading_time_minutes: number;
  plain_text: string | null;
  published_ms: number;
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
  for (let start = 0; start < codePoints.length; start += TEXT_PART_CHARS) parts.push(codePoints.slice(start, start + TEXT_PART_CHARS).join(''));
  return parts;
}

/** The summary fields of a search result, stored with its tokens (as searchCardJson writes them). */
export type SearchCard = Omit<GuideSummaryData, 'snippet'>;

const HIGH_SURROGATE = /[\uD800-\uDBFF]/;

/**
 * Converts increasing UTF-16 offsets of one text into code point offsets (what SQLite's substr()
 * counts), so a snippet can fetch a few hundred characters of text instead of all of it.
 */
function codePointCounter(text: string): (utf16Offset: number) => number {
  if (!HIGH_SURROGATE.test(text)) return (offset) => offset;
  let utf16 = 0;
  let codePoints = 0;
  return (offset) => {
    for (; utf16 < offset; utf16 += 1) {
      const code = text.charCodeAt(utf16);
      if (code < 0xd800 || code > 0xdbff) codePoints += 1;
    }
    return codePoints;
  };
}

function int32Buffer(values: Int32Array): Buffer {
  const buffer = Buffer.alloc(values.length * 4);
  for (let i = 0; i < values.length; i += 1) buffer.writeInt32LE(values[i] as number, i * 4);
  return buffer;
}

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
 * `snippet` (guide-list-body.ts: the same bytes as serializing the page), and a search reads no
 * JSON to make a page. Parsed (`card + '}'`) only for a page that is not rendered where it is made,
 * or a snippet from a short column.
 */
export function searchCardJson(guide: Pick<GuideRecord, 'slug' | 'title' | 'summary' | 'tags' | 'language' | 'publishedAt' | 'updatedAt' | 'readingTimeMinutes'>): string {
  const publishedAt = guide.publishedAt as string;
  const card: SearchCard = {
    slug: guide.slug, title: guide.title, summary: guide.summary, tags: guide.tags, language: guide.language, publishedAt,
    updatedAt: guide.updatedAt ?? publishedAt, readingTimeMinutes: guide.readingTimeMinutes,
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

/**
 * Reads guides into tokens (the expensive half of building the index: every word of every guide),
 * independently of the other guides, so that it can run on several threads at once. Token ids are
 * this analyzer's own (its vocabulary grows as it meets new tokens); SearchIndexBuilder maps them
 * to the index's.
 */
export class SearchAnalyzer {
  /** Token texts by id, in order of first appearance; only ever appended to. */
  readonly vocabulary: string[] = [];
  private readonly termIds = new Map<string, number>();
  /**
   * Word as written → its token ids, so that each word of text costs one lookup instead of being
   * normalized again: a token id, -1 for no token, or -2 - i for several (severalIds[i]).
   */
  private readonly words = new WordTable();
  private readonly severalIds: number[][] = [];
  /** Per vocabulary id: its index in the current guide's distinct terms, or -1. */
  private localIndex = new Int32Array(1024).fill(-1);
  private terms = new Uint32Array(256);
  private bodyCounts = new Uint32Array(256);
  private sequence = new Uint32Array(4096);
  private readonly checkpoints = new VarintWriter(64);

  private termId(token: string): number {
    let id = this.termIds.get(token);
    if (id === undefined) {
      id = this.vocabulary.length;
      this.termIds.set(token, id);
      this.vocabulary.push(token);
      if (id >= this.localIndex.length) {
        const grown = new Int32Array(this.localIndex.length * 2).fill(-1);
        grown.set(this.localIndex);
        this.localIndex = grown;
      }
    }
    return id;
  }

  private addWord(word: string, hash: number): number {
    const ids = tokensOfWord(word).map((token) => this.termId(token));
    const value = ids.length === 1 ? (ids[0] as number) : ids.length === 0 ? -1 : -2 - (this.severalIds.push(ids) - 1);
    this.words.set(word, hash, value);
    return value;
  }

  analyze(title: string, summary: string, tags: readonly string[], plainText: string): DocTerms {
    const texts = [title, summary, tags.join(' '), plainText];
    const columnLengths = [0, 0, 0, 0];
    const { checkpoints, words } = this;
    checkpoints.length = 0;
    let checkpointCount = 0;
    let distinct = 0;
    let count = 0;
    let { terms, bodyCounts, sequence } = this;
    for (let column = 0; column < COLUMNS; column += 1) {
      const text = texts[column] as string;
      const isBody = column === COLUMNS - 1;
      const codePointOf = codePointCounter(text);
      const columnStart = count;
      let nextCheckpoint = 0;
      const length = text.length;
      let index = 0;
      // The words of the text, as forEachWord finds them, hashed as WordTable wants (inline: the
      // loop runs for every word of every guide).
      while (index < length) {
        let code = text.charCodeAt(index);
        if (code < 128 ? ASCII_WORD[code] === 0 : !isWordCode(text, index, code)) {
          index += code >= 0xd800 && code <= 0xdbff ? 2 : 1;
          continue;
        }
        const start = index;
        let hash = FNV_OFFSET;
        while (index < length) {
          code = text.charCodeAt(index);
          if (code < 128) {
            if (ASCII_WORD[code] === 0) break;
            hash = Math.imul(hash ^ code, FNV_PRIME);
            index += 1;
          } else {
            if (!isWordCode(text, index, code)) break;
            const step = code >= 0xd800 && code <= 0xdbff ? 2 : 1;
            for (let i = 0; i < step; i += 1) hash = Math.imul(hash ^ text.charCodeAt(index + i), FNV_PRIME);
            index += step;
          }
        }
        let value = words.get(text, start, index, hash);
        if (value === ABSENT) value = this.addWord(text.slice(start, index), hash);
        if (value === -1) continue;
        // A checkpoint is the first token of a word, about every CHECKPOINT_EVERY tokens.
        if (isBody && count - columnStart >= nextCheckpoint) {
          checkpoints.push(count - columnStart);
          checkpoints.push(codePointOf(start));
          checkpointCount += 1;
          nextCheckpoint = count - columnStart + CHECKPOINT_EVERY;
        }
        const several = value >= 0 ? undefined : (this.severalIds[-value - 2] as number[]);
        const tokenCount = several ? several.length : 1;
        if (count + tokenCount > sequence.length) sequence = grownUint32(sequence, count + tokenCount);
        const localIndex = this.localIndex;
        for (let i = 0; i < tokenCount; i += 1) {
          const id = several ? (several[i] as number) : value;
          let local = localIndex[id] as number;
          if (local < 0) {
            local = distinct;
            distinct += 1;
            localIndex[id] = local;
            if (local >= terms.length) {
              terms = grownUint32(terms, local + 1);
              bodyCounts = grownUint32(bodyCounts, local + 1);
            }
            terms[local] = id;
            bodyCounts[local] = 0;
          }
          if (isBody) bodyCounts[local] = (bodyCounts[local] as number) + 1;
          sequence[count] = local;
          count += 1;
        }
      }
      columnLengths[column] = count - columnStart;
    }
    this.terms = terms;
    this.bodyCounts = bodyCounts;
    this.sequence = sequence;
    for (let i = 0; i < distinct; i += 1) this.localIndex[terms[i] as number] = -1;

    const header = new VarintWriter(16 + checkpoints.length);
    for (const length of columnLengths) header.push(length);
    header.push(checkpointCount);
    header.bytes.set(checkpoints.bytes.subarray(0, checkpoints.length), header.length);
    header.length += checkpoints.length;
    // One buffer: the 4-byte arrays first (aligned), then the sequence, then the header bytes.
    const wide = distinct > 0xffff + 1;
    const termBytes = distinct * 4;
    const sequenceBytes = count * (wide ? 4 : 2);
    const buffer = new ArrayBuffer(termBytes * 2 + sequenceBytes + header.length);
    const termsView = new Uint32Array(buffer, 0, distinct);
    termsView.set(terms.subarray(0, distinct));
    const bodyCountsView = new Uint32Array(buffer, termBytes, distinct);
    bodyCountsView.set(bodyCounts.subarray(0, distinct));
    const sequenceView = wide ? new Uint32Array(buffer, termBytes * 2, count) : new Uint16Array(buffer, termBytes * 2, count);
    sequenceView.set(sequence.subarray(0, count));
    const headerView = new Uint8Array(buffer, termBytes * 2 + sequenceBytes, header.length);
    headerView.set(header.bytes.subarray(0, header.length));
    return { header: headerView, terms: termsView, bodyCounts: bodyCountsView, sequence: sequenceView };
  }

  /** A published guide's search document, without the vocabulary (to send to another thread). */
  searchDocData(guide: GuideRecord): SearchDocData {
    return {
      card: searchCardJson(guide),
      head: headOf(guide.plainText),
      publishedMs: Date.parse(guide.publishedAt as string),
      terms: this.analyze(guide.title, guide.summary, guide.tags, guide.plainText),
    };
  }

  /** A published guide's search document. */
  searchDoc(guide: GuideRecord): SearchDoc {
    return { ...this.searchDocData(guide), vocabulary: this.vocabulary };
  }
}

function grownUint32(array: Uint32Array, atLeast: number): Uint32Array<ArrayBuffer> {
  const grown = new Uint32Array(Math.max(array.length * 2, atLeast));
  grown.set(array);
  return grown;
}

/** Bytes per chunk of PostingLists: one cache line. */
const CHUNK = 64;
/** The most bytes one append writes: five varints of up to 5 bytes. */
const MAX_APPEND = 25;

/**
 * Every token's posting list while the index is built, appended to in docno order. Lists live in
 * chunks of CHUNK bytes of one growing arena, linked per list, so an append touches the chunk
 * its list ends in and a few small arrays (a growable buffer per list costs several cache misses
 * per append, and an import appends tens of millions of times). `bytesOf` joins a list's chunks.
 * Frequencies are kept per column here; SearchIndexBuilder.finish makes them BM25F's, once every
 * column's average length is known.
 */
class PostingLists {
  private arena = new Uint8Array(CHUNK * 16_384);
  private chunkCount = 0;
  /** Per chunk: the next chunk of its list, and the bytes used (for chunks before a list's last). */
  private chunkNext = new Int32Array(16_384);
  private chunkUsed = new Int32Array(16_384);
  /** Per list: its first and last chunks, the bytes used in the last, its length in bytes. */
  private first = new Int32Array(1024);
  private last = new Int32Array(1024);
  private fill = new Int32Array(1024);
  private size = new Int32Array(1024);
  count = 0;

  /** A new empty list; its id is the number of lists before it. */
  addList(): void {
    const id = this.count;
    this.count += 1;
    if (id >= this.first.length) {
      this.first = grownInt32(this.first);
      this.last = grownInt32(this.last);
      this.fill = grownInt32(this.fill);
      this.size = grownInt32(this.size);
    }
    const chunk = this.newChunk();
    this.first[id] = chunk;
    this.last[id] = chunk;
    this.fill[id] = 0;
    this.size[id] = 0;
  }

  private newChunk(): number {
    const chunk = this.chunkCount;
    this.chunkCount += 1;
    if (chunk >= this.chunkNext.length) {
      this.chunkNext = grownInt32(this.chunkNext);
      this.chunkUsed = grownInt32(this.chunkUsed);
      const arena = new Uint8Array(this.chunkNext.length * CHUNK);
      arena.set(this.arena);
      this.arena = arena;
    }
    return chunk;
  }

  /**
   * Appends a posting to list `id`: its docno delta, its body count × 8 plus a bit for each short
   * column it occurs in (title 1, summary 2, tags 4), then those columns' counts.
   */
  append(id: number, delta: number, title: number, summary: number, tags: number, body: number): void {
    let chunk = this.last[id] as number;
    let fill = this.fill[id] as number;
    if (fill + MAX_APPEND > CHUNK) {
      const next = this.newChunk();
      this.chunkUsed[chunk] = fill;
      this.chunkNext[chunk] = next;
      this.last[id] = next;
      chunk = next;
      fill = 0;
    }
    const arena = this.arena;
    const start = chunk * CHUNK + fill;
    let pos = writeVarint(arena, start, delta);
    pos = writeVarint(arena, pos, body * 8 + (title > 0 ? 1 : 0) + (summary > 0 ? 2 : 0) + (tags > 0 ? 4 : 0));
    if (title > 0) pos = writeVarint(arena, pos, title);
    if (summary > 0) pos = writeVarint(arena, pos, summary);
    if (tags > 0) pos = writeVarint(arena, pos, tags);
    this.fill[id] = fill + pos - start;
    this.size[id] = (this.size[id] as number) + pos - start;
  }

  /** List `id` as one buffer. */
  bytesOf(id: number): Buffer {
    const out = Buffer.allocUnsafe(this.size[id] as number);
    let written = 0;
    const last = this.last[id] as number;
    for (let chunk = this.first[id] as number; ; chunk = this.chunkNext[chunk] as number) {
      const used = chunk === last ? (this.fill[id] as number) : (this.chunkUsed[chunk] as number);
      out.set(this.arena.subarray(chunk * CHUNK, chunk * CHUNK + used), written);
      written += used;
      if (chunk === last) return out;
    }
  }
}

/** Writes `value` as a varint at `at`; returns the position after it. */
function writeVarint(bytes: Uint8Array, at: number, value: number): number {
  let pos = at;
  let v = value;
  while (v >= 0x80) {
    bytes[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  bytes[pos++] = v;
  return pos;
}

/** Per docno and column: the column's weight / (1 − b + b · its length / the column's average length). */
function columnFactors(columnLengths: readonly number[], docCount: number): Float64Array {
  const totals = new Float64Array(COLUMNS);
  for (let i = 0; i < columnLengths.length; i += 1) totals[i % COLUMNS] = (totals[i % COLUMNS] as number) + (columnLengths[i] as number);
  const factors = new Float64Array(docCount * COLUMNS);
  for (let i = 0; i < factors.length; i += 1) {
    const column = i % COLUMNS;
    const average = (totals[column] as number) / docCount;
    // A column empty in every guide has no occurrences to weigh.
    factors[i] = average > 0 ? (SQLITE_COLUMN_WEIGHTS[column] as number) / (1 - BM25_B + BM25_B * (columnLengths[i] as number) / average) : 0;
  }
  return factors;
}

/**
 * A list as PostingLists wrote it (counts per column) with BM25F frequencies instead: the sum of
 * each column's count times its factor, in FREQUENCY_SCALE units, so a reader saturates it once.
 */
function bm25fList(raw: Uint8Array, factors: Float64Array): Buffer {
  const reader = new VarintReader(raw);
  const out = new VarintWriter(raw.length + 8);
  let doc = -1;
  while (!reader.done) {
    const delta = reader.next();
    doc += delta + 1;
    const packed = reader.next();
    const columns = packed % 8;
    const at = doc * COLUMNS;
    let frequency = ((packed - columns) / 8) * (factors[at + 3] as number);
    if ((columns & 1) !== 0) frequency += reader.next() * (factors[at] as number);
    if ((columns & 2) !== 0) frequency += reader.next() * (factors[at + 1] as number);
    if ((columns & 4) !== 0) frequency += reader.next() * (factors[at + 2] as number);
    out.push(delta);
    out.push(Math.max(1, Math.round(frequency * FREQUENCY_SCALE)));
  }
  return out.toBuffer();
}

function grownInt32(array: Int32Array): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(array.length * 2);
  grown.set(array);
  return grown;
}

/** A published guide to index, with its row id. */
export interface IndexedDoc extends SearchDoc {
  guideId: number;
}

/**
 * Writes the index from guides given in list order (publishedAt desc, slug asc): deletes the old
 * index at once, writes each guide's document as it is added, and the posting lists, prefixes and
 * statistics at `finish`. Use inside the transaction that changed the guides, so readers see the
 * old index with the old guides or the new with the new.
 *
 * Token ids are numbered in order of first appearance in list order, whichever analyzers read
 * the guides, so the index is the same however the guides were read.
 */
export class SearchIndexBuilder {
  private readonly insertDoc: Statement;
  private readonly insertPostings: Statement;
  private readonly insertMeta: Statement;
  private readonly termIds = new Map<string, number>();
  private readonly terms: string[] = [];
  private readonly postings = new PostingLists();
  private lastDocno = new Int32Array(1024).fill(-1);
  private docFrequency = new Int32Array(1024);
  /** Per analyzer vocabulary: its ids → the index's ids (-1 until met). */
  private readonly translations = new Map<readonly string[], Int32Array>();
  private ids = new Int32Array(1024);
  /** The current guide's title, summary and tags counts, 3 per distinct token. */
  private shortCounts = new Int32Array(3072);
  private bytes = new Uint8Array(16_384);
  private readonly guideIds: number[] = [];
  private readonly publishedMs: number[] = [];
  /** Per docno: its 4 column lengths in tokens. */
  private readonly columnLengths: number[] = [];
  private totalTokens = 0;
  private docno = 0;

  constructor(db: Database) {
    db.exec('DELETE FROM search_postings; DELETE FROM search_docs; DELETE FROM search_meta;');
    this.insertDoc = db.prepare('INSERT INTO search_docs (docno, tokens, card, head) VALUES (?, ?, ?, ?)');
    this.insertPostings = db.prepare('INSERT INTO search_postings (id, df, data) VALUES (?, ?, ?)');
    this.insertMeta = db.prepare('INSERT INTO search_meta (key, value) VALUES (?, ?)');
  }

  private termId(token: string): number {
    let id = this.termIds.get(token);
    if (id === undefined) {
      id = this.terms.length;
      this.termIds.set(token, id);
      this.terms.push(token);
      this.postings.addList();
      if (id >= this.lastDocno.length) {
        const grow = (array: Int32Array, fill: number): Int32Array<ArrayBuffer> => {
          const next = new Int32Array(array.length * 2).fill(fill);
          next.set(array);
          return next;
        };
        this.lastDocno = grow(this.lastDocno, -1);
        this.docFrequency = grow(this.docFrequency, 0);
      }
    }
    return id;
  }

  private translation(vocabulary: readonly string[]): Int32Array {
    let translation = this.translations.get(vocabulary);
    if (!translation || translation.length < vocabulary.length) {
      const grown = new Int32Array(Math.max(vocabulary.length, (translation?.length ?? 512) * 2)).fill(-1);
      if (translation) grown.set(translation);
      translation = grown;
      this.translations.set(vocabulary, translation);
    }
    return translation;
  }

  /** Adds the next guide in list order. */
  add(doc: IndexedDoc): void {
    const { header, terms, bodyCounts, sequence } = doc.terms;
    const translation = this.translation(doc.vocabulary);
    if (this.ids.length < terms.length) this.ids = new Int32Array(Math.max(terms.length, this.ids.length * 2));
    const ids = this.ids;
    const docno = this.docno;
    // The short columns come first in the sequence: count their tokens per distinct term.
    if (this.shortCounts.length < terms.length * 3) this.shortCounts = new Int32Array(Math.max(terms.length * 3, this.shortCounts.length * 2));
    const shortCounts = this.shortCounts.fill(0, 0, terms.length * 3);
    const headerReader = new VarintReader(header);
    let token = 0;
    for (let column = 0; column < COLUMNS; column += 1) {
      const length = headerReader.next();
      this.columnLengths.push(length);
      if (column === COLUMNS - 1) break;
      for (const end = token + length; token < end; token += 1) {
        const at = (sequence[token] as number) * 3 + column;
        shortCounts[at] = (shortCounts[at] as number) + 1;
      }
    }
    for (let i = 0; i < terms.length; i += 1) {
      const term = terms[i] as number;
      let id = translation[term] as number;
      if (id < 0) {
        id = this.termId(doc.vocabulary[term] as string);
        translation[term] = id;
      }
      ids[i] = id;
      this.postings.append(id, docno - (this.lastDocno[id] as number) - 1,
        shortCounts[i * 3] as number, shortCounts[i * 3 + 1] as number, shortCounts[i * 3 + 2] as number, bodyCounts[i] as number);
      this.lastDocno[id] = docno;
      this.docFrequency[id] = (this.docFrequency[id] as number) + 1;
    }
    // Layout: 4 column lengths, checkpoint count, checkpoints, then the ids column by column, body
    // last, so a reader can stop decoding as soon as it has seen enough of the body.
    const capacity = header.length + sequence.length * 5;
    if (this.bytes.length < capacity) this.bytes = new Uint8Array(Math.max(capacity, this.bytes.length * 2));
    const bytes = this.bytes;
    bytes.set(header);
    let pos = header.length;
    for (let i = 0; i < sequence.length; i += 1) pos = writeVarint(bytes, pos, ids[sequence[i] as number] as number);
    // SQLite copies bound blobs, so a view of the scratch buffer will do.
    this.insertDoc.run(docno, Buffer.from(bytes.buffer, bytes.byteOffset, pos), doc.card, doc.head);
    this.guideIds.push(doc.guideId);
    this.publishedMs.push(doc.publishedMs);
    this.totalTokens += sequence.length;
    this.docno += 1;
  }

  /** Writes the posting lists, prefix lists and statistics. */
  finish(): SearchStats {
    const { terms, postings, docFrequency, insertPostings, insertMeta } = this;
    const docCount = this.docno;
    const factors = columnFactors(this.columnLengths, docCount);
    const lists = terms.map((_, id) => bm25fList(postings.bytesOf(id), factors));
    for (let id = 0; id < terms.length; id += 1) insertPostings.run(id, docFrequency[id], lists[id]);
    const prefixes = buildPrefixLists(terms, lists, docFrequency, docCount, (id, df, data) => insertPostings.run(terms.length + id, df, data));

    const docTable = Buffer.alloc(docCount * 16);
    for (let i = 0; i < docCount; i += 1) {
      docTable.writeInt32LE(this.guideIds[i] as number, i * 16);
      docTable.writeInt32LE(this.columnLengths.slice(i * COLUMNS, (i + 1) * COLUMNS).reduce((a, b) => a + b), i * 16 + 4);
      docTable.writeDoubleLE(this.publishedMs[i] as number, i * 16 + 8);
    }
    const stats: SearchStats = { format: SEARCH_FORMAT_VERSION, docCount, totalTokens: this.totalTokens, termCount: terms.length, prefixCount: prefixes.length };
    insertMeta.run('vocabulary', Buffer.from(terms.join('\n'), 'utf8'));
    insertMeta.run('term_df', int32Buffer(docFrequency.subarray(0, terms.length)));
    insertMeta.run('prefixes', Buffer.from(prefixes.map((p) => p.prefix).join('\n'), 'utf8'));
    insertMeta.run('prefix_df', int32Buffer(Int32Array.from(prefixes, (p) => p.df)));
    insertMeta.run('documents', docTable);
    insertMeta.run('stats', Buffer.from(JSON.stringify(stats), 'utf8'));
    return stats;
  }
}

/**
 * Rebuilds the whole index from the published guides in the guides table (a database whose index
 * is missing or of another format). Imports, which have the guides in memory, use
 * SearchIndexBuilder directly. Call inside a transaction.
 */
export function buildSearchIndex(db: Database): SearchStats {
  const builder = new SearchIndexBuilder(db);
  // Read in keyset batches: better-sqlite3 cannot write while a read statement is still iterating,
  // and reading every text at once would hold the whole corpus in memory.
  const columns = `g.id, g.slug, g.title, g.summary, g.tags, g.language, g.published_at, g.updated_at, g.reading_time_minutes, g.published_ms,
    (SELECT group_concat(t.text, '' ORDER BY t.id) FROM guide_text_parts AS t WHERE t.id >= g.id * 65536 AND t.id < (g.id + 1) * 65536) AS plain_text`;
  const firstBatch = db.prepare<[number], GuideTextRow>(`SELECT ${columns}
    FROM guides AS g INDEXED BY guides_published_by_date WHERE g.status = 'published' ORDER BY g.published_ms DESC, g.slug LIMIT ?`);
  const nextBatch = db.prepare<[number, number, string, number], GuideTextRow>(`SELECT ${columns}
    FROM guides AS g INDEXED BY guides_published_by_date WHERE g.status = 'published'
      AND (g.published_ms < ? OR (g.published_ms = ? AND g.slug > ?))
    ORDER BY g.published_ms DESC, g.slug LIMIT ?`);
  const analyzer = new SearchAnalyzer();
  let batch = firstBatch.all(BATCH_ROWS);
  while (batch.length > 0) {
    for (const row of batch) {
      const tags = JSON.parse(row.tags) as string[];
      const plainText = row.plain_text ?? '';
      builder.add({
        guideId: row.id,
        card: searchCardJson({ ...row, tags, publishedAt: row.published_at, updatedAt: row.updated_at, readingTimeMinutes: row.reading_time_minutes }),
        head: headOf(plainText),
        publishedMs: row.published_ms,
        terms: analyzer.analyze(row.title, row.summary, tags, plainText),
        vocabulary: analyzer.vocabulary,
      });
    }
    const last = batch.at(-1) as GuideTextRow;
    batch = batch.length < BATCH_ROWS ? [] : nextBatch.all(last.published_ms, last.published_ms, last.slug, BATCH_ROWS);
  }
  return builder.finish();
}

/**
 * Finds the prefixes that deserve a merged list and writes them (ids after the tokens' ids).
 * A prefix qualifies when it expands to more than PREFIX_MAX_EXPANSIONS tokens or more than
 * PREFIX_MAX_POSTINGS postings: below both, merging at query time is cheaper than storing.
 */
function buildPrefixLists(
  terms: readonly string[], postings: readonly Uint8Array[], docFrequency: Int32Array, docCount: number,
  write: (prefixId: number, df: number, data: Buffer) => void,
): { prefix: string; df: number }[] {
  const order = terms.map((_, id) => id).sort((a, b) => {
    const x = terms[a] as string;
    const y = terms[b] as string;
    return x < y ? -1 : x > y ? 1 : 0;
  });
  const qualifying: { prefix: string; from: number; to: number }[] = [];
  const maxLength = terms.reduce((max, term) => Math.max(max, term.length), 0);
  for (let length = 1; length <= maxLength; length += 1) {
    let from = 0;
    while (from < order.length) {
      const first = terms[order[from] as number] as string;
      if (first.length < length) {
        from += 1;
        continue;
      }
      const prefix = first.slice(0, length);
      let to = from + 1;
      let mass = docFrequency[order[from] as number] as number;
      while (to < order.length && (terms[order[to] as number] as string).startsWith(prefix)) {
        mass += docFrequency[order[to] as number] as number;
        to += 1;
      }
      if (to - from > PREFIX_MAX_EXPANSIONS || (to - from > 1 && mass > PREFIX_MAX_POSTINGS)) qualifying.push({ prefix, from, to });
      from = to;
    }
  }
  // Longest prefixes first: a prefix then merges the lists of the longer qualifying prefixes in its
  // range, already merged (at most one posting per guide), instead of all their tokens' lists.
  // Ranges of prefixes are nested or disjoint; coverEnd[i] is the end of the widest range built so
  // far that starts at position i of `order` (0: none), coverOf[i] its index in `qualifying`.
  const merged: Buffer[] = new Array<Buffer>(qualifying.length);
  const mergedDf = new Int32Array(qualifying.length);
  const coverEnd = new Int32Array(order.length);
  const coverOf = new Int32Array(order.length);
  const byLength = qualifying.map((_, index) => index).sort((a, b) =>
    (qualifying[b] as { prefix: string }).prefix.length - (qualifying[a] as { prefix: string }).prefix.length || a - b);
  const sums = new Int32Array(docCount);
  const touched = new Int32Array(docCount);
  for (const index of byLength) {
    const { from, to } = qualifying[index] as { from: number; to: number };
    let count = 0;
    const add = (list: Uint8Array): void => {
      const reader = new VarintReader(list);
      let doc = -1;
      while (!reader.done) {
        doc += reader.next() + 1;
        const f = reader.next();
        if (sums[doc] === 0) touched[count++] = doc;
        sums[doc] = (sums[doc] as number) + f;
      }
    };
    for (let i = from; i < to;) {
      const end = coverEnd[i] as number;
      if (end > 0) {
        add(merged[coverOf[i] as number] as Buffer);
        i = end;
      } else {
        add(postings[order[i] as number] as Uint8Array);
        i += 1;
      }
    }
    coverEnd[from] = to;
    coverOf[from] = index;
    const out = new VarintWriter(count * 2 + 8);
    let last = -1;
    const emit = (doc: number): void => {
      out.push(doc - last - 1);
      out.push(sums[doc] as number);
      sums[doc] = 0;
      last = doc;
    };
    // Many documents: scanning them all in order beats sorting the ones touched.
    if (count > docCount / 8) {
      for (let doc = 0; doc < docCount; doc += 1) if (sums[doc] !== 0) emit(doc);
    } else {
      for (const doc of touched.subarray(0, count).sort()) emit(doc);
    }
    merged[index] = out.toBuffer();
    mergedDf[index] = count;
  }
  const written: { prefix: string; df: number }[] = [];
  qualifying.forEach(({ prefix }, index) => {
    write(index, mergedDf[index] as number, merged[index] as Buffer);
    written.push({ prefix, df: mergedDf[index] as number });
  });
  return written;
}
