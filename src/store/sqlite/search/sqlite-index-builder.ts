/**
 * Builds the embedded search index at import, inside the import's transaction (see docs/search.md).
 *
 * - Documents are numbered ("docno") in list order (publishedAt desc, slug asc), so the search
 *   tie-break (publishedAt desc, slug) is simply "lower docno first".
 * - Every token has a posting list: docno-ordered (delta, frequency) varint pairs, where the
 *   frequency is BM25F's: each column's count normalized by that column's length against its
 *   average, weighted (title 10, summary 4, tags 3, body 1), summed, in FREQUENCY_SCALE units.
 * - Prefixes that expand to many tokens, or to many postings, get a merged posting list of their
 *   own, so a one-letter prefix costs one list instead of thousands.
 * - A list of many guides (a common token or prefix) also gets a block table, so a search can skip
 *   the guides that cannot reach its page (sqlite-block-table.ts).
 * - Each document keeps its token ids per column (for phrases and snippets) and the code point
 *   offset of a body word about every 32 tokens (so a snippet reads a few words of text, not all).
 * - Vocabulary, document table and statistics are small blobs in search_meta that a reader loads
 *   once per content version.
 */
import type { Database, Statement } from 'better-sqlite3';
import { SearchAnalyzer } from './sqlite-analyzer.js';
import { blockTableOf, hasBlockTable } from './sqlite-block-table.js';
import {
  BM25_B,
  COLUMNS,
  FREQUENCY_SCALE,
  SEARCH_FORMAT_VERSION,
  SQLITE_COLUMN_WEIGHTS,
  VarintReader,
  VarintWriter,
  headOf,
  int32Buffer,
  searchCardJson,
  writeVarint,
} from './sqlite-index-format.js';
import type { SearchDoc, SearchStats } from './sqlite-index-format.js';
import { PostingLists } from './sqlite-posting-lists.js';
import { buildPrefixLists } from './sqlite-prefix-lists.js';

const BATCH_ROWS = 500;

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

/** Per docno and column: the column's weight / (1 − b + b · its length / the column's average length). */
function columnFactors(columnLengths: readonly number[], docCount: number): Float64Array {
  const totals = new Float64Array(COLUMNS);
  for (let i = 0; i < columnLengths.length; i += 1) totals[i % COLUMNS] = (totals[i % COLUMNS] as number) + (columnLengths[i] as number);
  const factors = new Float64Array(docCount * COLUMNS);
  for (let i = 0; i < factors.length; i += 1) {
    const column = i % COLUMNS;
    const average = (totals[column] as number) / docCount;
    // A column empty in every guide has no occurrences to weigh.
    factors[i] =
      average > 0 ? (SQLITE_COLUMN_WEIGHTS[column] as number) / (1 - BM25_B + (BM25_B * (columnLengths[i] as number)) / average) : 0;
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
    this.insertPostings = db.prepare('INSERT INTO search_postings (id, df, data, blocks) VALUES (?, ?, ?, ?)');
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
    if (this.shortCounts.length < terms.length * 3)
      this.shortCounts = new Int32Array(Math.max(terms.length * 3, this.shortCounts.length * 2));
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
      this.postings.append(
        id,
        docno - (this.lastDocno[id] as number) - 1,
        shortCounts[i * 3] as number,
        shortCounts[i * 3 + 1] as number,
        shortCounts[i * 3 + 2] as number,
        bodyCounts[i] as number,
      );
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
    const write = (id: number, df: number, data: Buffer): void => {
      insertPostings.run(id, df, data, hasBlockTable(df, docCount) ? blockTableOf(data, docCount) : null);
    };
    for (let id = 0; id < terms.length; id += 1) write(id, docFrequency[id] as number, lists[id] as Buffer);
    const prefixes = buildPrefixLists(terms, lists, docFrequency, docCount, (id, df, data) => write(terms.length + id, df, data));

    const docTable = Buffer.alloc(docCount * 16);
    for (let i = 0; i < docCount; i += 1) {
      docTable.writeInt32LE(this.guideIds[i] as number, i * 16);
      docTable.writeInt32LE(
        this.columnLengths.slice(i * COLUMNS, (i + 1) * COLUMNS).reduce((a, b) => a + b),
        i * 16 + 4,
      );
      docTable.writeDoubleLE(this.publishedMs[i] as number, i * 16 + 8);
    }
    const stats: SearchStats = {
      format: SEARCH_FORMAT_VERSION,
      docCount,
      totalTokens: this.totalTokens,
      termCount: terms.length,
      prefixCount: prefixes.length,
    };
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
        card: searchCardJson({
          ...row,
          tags,
          publishedAt: row.published_at,
          updatedAt: row.updated_at,
          readingTimeMinutes: row.reading_time_minutes,
        }),
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
