/**
 * The embedded search index, built at import inside the import's transaction (see docs/search.md).
 *
 * - Documents are numbered ("docno") in list order (publishedAt desc, slug asc), so the search
 *   tie-break (publishedAt desc, slug) is simply "lower docno first".
 * - Every token has a posting list: docno-ordered (delta, weighted term frequency) varint pairs,
 *   where the weighted frequency counts a title occurrence 10, summary 4, tags 3, body 1.
 * - Prefixes that expand to many tokens, or to many postings, get a merged posting list of their
 *   own, so a one-letter prefix costs one list instead of thousands.
 * - Each document keeps its token ids per column (for phrases and snippets) and the code point
 *   offset of a body word about every 32 tokens (so a snippet reads a few words of text, not all).
 * - Vocabulary, document table and statistics are small blobs in search_meta that a reader loads
 *   once per content version.
 */
import type { Database } from 'better-sqlite3';
import { WordTable, forEachHashedWord, tokensOfWord } from './sqlite-text.js';

/** Column weights in the relevance score: title, summary, tags, body. */
export const SQLITE_COLUMN_WEIGHTS = [10, 4, 3, 1] as const;
/** BM25 parameters (the usual ones, as SQLite FTS5's bm25() uses). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** Bump when the stored layout changes: readers rebuild an index of another format. */
export const SEARCH_FORMAT_VERSION = 4;
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
    let v = value;
    while (v >= 0x80) {
      this.bytes[this.length++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.bytes[this.length++] = v;
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
    let shift = 7;
    do {
      byte = bytes[this.pos++] as number;
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
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

/** The summary fields of a search result, stored with its tokens: slug, title, summary, tags, language, publishedAt, updatedAt, readingTimeMinutes. */
export type SearchCard = [string, string, string, string[], string, string, string, number];

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

/** A published guide as the index reads it. */
export interface IndexedGuide {
  id: number;
  card: SearchCard;
  plainText: string;
  publishedMs: number;
}

/**
 * Rebuilds the whole index from the published guides, read from the guides table, or given in
 * list order (publishedAt desc, slug asc) by an import that has them in memory already. Call
 * inside the transaction that changed the guides, so readers see the old index with the old
 * guides or the new with the new.
 */
export function buildSearchIndex(db: Database, published?: Iterable<IndexedGuide>): SearchStats {
  db.exec('DELETE FROM search_postings; DELETE FROM search_docs; DELETE FROM search_meta;');
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
  function* publishedRows(): Generator<IndexedGuide> {
    let batch = firstBatch.all(BATCH_ROWS);
    while (batch.length > 0) {
      for (const row of batch) {
        const card: SearchCard = [row.slug, row.title, row.summary, JSON.parse(row.tags) as string[], row.language, row.published_at,
          row.updated_at ?? row.published_at, row.reading_time_minutes];
        yield { id: row.id, card, plainText: row.plain_text ?? '', publishedMs: row.published_ms };
      }
      const last = batch.at(-1) as GuideTextRow;
      batch = batch.length < BATCH_ROWS ? [] : nextBatch.all(last.published_ms, last.published_ms, last.slug, BATCH_ROWS);
    }
  }
  const insertDoc = db.prepare('INSERT INTO search_docs (docno, tokens, card, head) VALUES (?, ?, ?, ?)');
  const insertPostings = db.prepare('INSERT INTO search_postings (id, df, data) VALUES (?, ?, ?)');
  const insertMeta = db.prepare('INSERT INTO search_meta (key, value) VALUES (?, ?)');

  const termIds = new Map<string, number>();
  /** Word as written → its term ids: one lookup per word of text instead of normalizing it again. */
  const idsOfWord = new WordTable<number[]>();
  const terms: string[] = [];
  const postings: VarintWriter[] = [];
  let lastDocno: Int32Array = new Int32Array(1024);
  let docFrequency: Int32Array = new Int32Array(1024);
  let weightedFrequency: Int32Array = new Int32Array(1024);
  const guideIds: number[] = [];
  const publishedMs: number[] = [];
  const lengths: number[] = [];
  let totalTokens = 0;

  const columnTokens: number[][] = [[], [], [], []];
  const touched: number[] = [];
  let docno = 0;

  const termId = (token: string): number => {
    let id = termIds.get(token);
    if (id === undefined) {
      id = terms.length;
      termIds.set(token, id);
      terms.push(token);
      postings.push(new VarintWriter(8));
      if (id >= lastDocno.length) {
        const grow = (array: Int32Array, fill: number): Int32Array => {
          const next = new Int32Array(array.length * 2).fill(fill);
          next.set(array);
          return next;
        };
        lastDocno = grow(lastDocno, -1);
        docFrequency = grow(docFrequency, 0);
        weightedFrequency = grow(weightedFrequency, 0);
      }
      lastDocno[id] = -1;
    }
    return id;
  };

  for (const row of published ?? publishedRows()) {
    const texts = [row.card[1], row.card[2], row.card[3].join(' '), row.plainText];
    const body = new VarintWriter(256);
    const checkpoints = new VarintWriter(32);
    let checkpointCount = 0;
    let length = 0;
    for (let column = 0; column < COLUMNS; column += 1) {
      const ids = columnTokens[column] as number[];
      ids.length = 0;
      const weight = SQLITE_COLUMN_WEIGHTS[column] as number;
      let nextCheckpoint = 0;
      const text = texts[column] as string;
      const codePointOf = codePointCounter(text);
      forEachHashedWord(text, (start, end, hash) => {
        let wordIds = idsOfWord.get(text, start, end, hash);
        if (wordIds === undefined) {
          const word = text.slice(start, end);
          wordIds = tokensOfWord(word).map(termId);
          idsOfWord.set(word, hash, wordIds);
        }
        if (wordIds.length === 0) return;
        // A checkpoint is the first token of a word, about every CHECKPOINT_EVERY tokens.
        if (column === COLUMNS - 1 && ids.length >= nextCheckpoint) {
          checkpoints.push(ids.length);
          checkpoints.push(codePointOf(start));
          checkpointCount += 1;
          nextCheckpoint = ids.length + CHECKPOINT_EVERY;
        }
        for (let i = 0; i < wordIds.length; i += 1) {
          const id = wordIds[i] as number;
          ids.push(id);
          if (weightedFrequency[id] === 0) touched.push(id);
          weightedFrequency[id] = (weightedFrequency[id] as number) + weight;
        }
      });
      length += ids.length;
    }
    for (const id of touched) {
      const writer = postings[id] as VarintWriter;
      writer.push(docno - (lastDocno[id] as number) - 1);
      writer.push(weightedFrequency[id] as number);
      lastDocno[id] = docno;
      docFrequency[id] = (docFrequency[id] as number) + 1;
      weightedFrequency[id] = 0;
    }
    touched.length = 0;
    // Layout: 4 column lengths, checkpoint count, checkpoints, then the ids column by column, body
    // last, so a reader can stop decoding as soon as it has seen enough of the body.
    const header = new VarintWriter(16);
    for (const ids of columnTokens) header.push(ids.length);
    header.push(checkpointCount);
    for (const ids of columnTokens) for (const id of ids) body.push(id);
    const tokens = Buffer.concat([header.toBuffer(), checkpoints.toBuffer(), body.toBuffer()]);
    insertDoc.run(docno, tokens, JSON.stringify(row.card), textParts(row.plainText.slice(0, TEXT_PART_CHARS * 2))[0] ?? '');
    guideIds.push(row.id);
    publishedMs.push(row.publishedMs);
    lengths.push(length);
    totalTokens += length;
    docno += 1;
  }

  for (let id = 0; id < terms.length; id += 1) insertPostings.run(id, docFrequency[id], (postings[id] as VarintWriter).toBuffer());
  const prefixes = buildPrefixLists(terms, postings, docFrequency, docno, (id, df, data) => insertPostings.run(terms.length + id, df, data));

  const docTable = Buffer.alloc(docno * 16);
  for (let i = 0; i < docno; i += 1) {
    docTable.writeInt32LE(guideIds[i] as number, i * 16);
    docTable.writeInt32LE(lengths[i] as number, i * 16 + 4);
    docTable.writeDoubleLE(publishedMs[i] as number, i * 16 + 8);
  }
  const stats: SearchStats = { format: SEARCH_FORMAT_VERSION, docCount: docno, totalTokens, termCount: terms.length, prefixCount: prefixes.length };
  insertMeta.run('vocabulary', Buffer.from(terms.join('\n'), 'utf8'));
  insertMeta.run('term_df', int32Buffer(docFrequency.subarray(0, terms.length)));
  insertMeta.run('prefixes', Buffer.from(prefixes.map((p) => p.prefix).join('\n'), 'utf8'));
  insertMeta.run('prefix_df', int32Buffer(Int32Array.from(prefixes, (p) => p.df)));
  insertMeta.run('documents', docTable);
  insertMeta.run('stats', Buffer.from(JSON.stringify(stats), 'utf8'));
  return stats;
}

/**
 * Finds the prefixes that deserve a merged list and writes them (ids after the tokens' ids).
 * A prefix qualifies when it expands to more than PREFIX_MAX_EXPANSIONS tokens or more than
 * PREFIX_MAX_POSTINGS postings: below both, merging at query time is cheaper than storing.
 */
function buildPrefixLists(
  terms: readonly string[], postings: readonly VarintWriter[], docFrequency: Int32Array, docCount: number,
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
  const sums = new Int32Array(docCount);
  const touched = new Int32Array(docCount);
  const written: { prefix: string; df: number }[] = [];
  for (const { prefix, from, to } of qualifying) {
    let count = 0;
    for (let i = from; i < to; i += 1) {
      const writer = postings[order[i] as number] as VarintWriter;
      const reader = new VarintReader(writer.bytes.subarray(0, writer.length));
      let doc = -1;
      while (!reader.done) {
        doc += reader.next() + 1;
        const f = reader.next();
        if (sums[doc] === 0) touched[count++] = doc;
        sums[doc] = (sums[doc] as number) + f;
      }
    }
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
    write(written.length, count, out.toBuffer());
    written.push({ prefix, df: count });
  }
  return written;
}
