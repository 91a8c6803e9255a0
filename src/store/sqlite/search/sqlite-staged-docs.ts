/**
 * The search documents of an import, kept in a temporary table until the import ends. The index
 * numbers documents in list order (publishedAt desc, slug asc), which is known only once every
 * guide has been read; holding the documents in memory until then would hold every token of the
 * folder. Here memory keeps a few fields per guide, and SQLite's temporary file the rest.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { GuideRecord } from '../../../guides/guide.js';
import { SearchAnalyzer } from './sqlite-analyzer.js';
import { docTermsBytes, docTermsFromBytes } from './sqlite-index-format.js';
import type { SearchDoc } from './sqlite-index-format.js';
import { SearchIndexBuilder } from './sqlite-index-builder.js';

interface StagedRow {
  vocabulary: number;
  distinct_terms: number;
  tokens: number;
  terms: Buffer;
  card: string;
  head: string;
  published_ms: number;
}

export class StagedSearchDocs {
  /** Per slug: its staged row and publication time. */
  private readonly latest = new Map<string, { row: number; publishedMs: number }>();
  /** The vocabularies the staged documents' token ids refer to (one per analyzer that read them). */
  private readonly vocabularies: (readonly string[])[] = [];
  private analyzer: SearchAnalyzer | undefined;
  private rows = 0;
  private readonly db: Database;
  private readonly insert: Statement;
  private readonly select: Statement<[number], StagedRow>;

  /** Call inside the import's transaction: a rollback takes the staged documents with it. */
  constructor(db: Database) {
    this.db = db;
    db.exec(`CREATE TEMP TABLE IF NOT EXISTS import_search_docs (
      id INTEGER PRIMARY KEY, vocabulary INTEGER NOT NULL, distinct_terms INTEGER NOT NULL, tokens INTEGER NOT NULL,
      terms BLOB NOT NULL, card TEXT NOT NULL, head TEXT NOT NULL, published_ms REAL NOT NULL);
      DELETE FROM temp.import_search_docs;`);
    this.insert = db.prepare('INSERT INTO temp.import_search_docs VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    this.select = db.prepare('SELECT * FROM temp.import_search_docs WHERE id = ?');
  }

  /** A published guide, with the search document its reader prepared, or analyzed here. */
  add(guide: GuideRecord, prepared?: SearchDoc): void {
    const doc = prepared ?? (this.analyzer ??= new SearchAnalyzer()).searchDoc(guide);
    let vocabulary = this.vocabularies.indexOf(doc.vocabulary);
    if (vocabulary < 0) vocabulary = this.vocabularies.push(doc.vocabulary) - 1;
    const row = this.rows;
    this.rows += 1;
    const { terms, sequence } = doc.terms;
    this.insert.run(row, vocabulary, terms.length, sequence.length, docTermsBytes(doc.terms), doc.card, doc.head, doc.publishedMs);
    this.latest.set(guide.slug, { row, publishedMs: doc.publishedMs });
  }

  /** Replaces the search index with one of the staged documents; `ids` gives each published guide's row id. */
  writeIndex(ids: readonly { id: number; slug: string }[]): void {
    const idOf = new Map(ids.map((row) => [row.slug, row.id]));
    const order = [...this.latest].sort(
      ([slugA, a], [slugB, b]) => b.publishedMs - a.publishedMs || (slugA < slugB ? -1 : slugA > slugB ? 1 : 0),
    );
    const builder = new SearchIndexBuilder(this.db);
    for (const [slug, { row }] of order) {
      const staged = this.select.get(row) as StagedRow;
      builder.add({
        guideId: idOf.get(slug) as number,
        card: staged.card,
        head: staged.head,
        publishedMs: staged.published_ms,
        terms: docTermsFromBytes(staged.terms, staged.distinct_terms, staged.tokens),
        vocabulary: this.vocabularies[staged.vocabulary] as readonly string[],
      });
    }
    builder.finish();
  }

  /** Empties the temporary table (the import committed or rolled back). */
  clear(): void {
    this.db.exec('DELETE FROM temp.import_search_docs');
  }
}
