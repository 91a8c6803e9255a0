/** The embedded backend: better-sqlite3 in WAL mode, with its own search index (docs/search.md). Calls are synchronous; the interface is async. */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { isUnavailableError, openSqliteDatabase, snapshotReader } from './sqlite-database.js';
import type { ListPosition } from '../../guides/cursor.js';
import type {
  ContentSet,
  GuideDetailData,
  GuideRecord,
  GuideStatus,
  GuideSummaryData,
  ProductInfo,
  ResourceLink,
} from '../../guides/guide.js';
import { ImportPlanner, hashJson } from '../import-plan.js';
import { toGuideDetail, toGuideSummary } from '../guide-rows.js';
import type { ContentStream, GuideIndexEntry, GuideStore, ImportSummary, Page } from '../guide-store.js';
import type { SearchPageRenderer } from '../../representation/rendered-page.js';
import { StoreUnavailableError } from '../guide-store.js';
import { SQLITE_MIGRATIONS } from './sqlite-schema.js';
import { createSqliteSearch, searchPage } from './search/sqlite-search.js';
import type { SqliteSearch } from './search/sqlite-search.js';
import { createSearchPool } from './search/sqlite-search-pool.js';
import type { SearchPriority } from './search/sqlite-search-pool.js';
import { SQLITE_GUIDE_PREPARATION } from './sqlite-guide-preparer.js';
import { SEARCH_FORMAT_VERSION, textParts } from './search/sqlite-index-format.js';
import type { SearchDoc } from './search/sqlite-index-format.js';
import { buildSearchIndex } from './search/sqlite-index-builder.js';
import { guideRow } from './sqlite-import-rows.js';
import { StagedSearchDocs } from './search/sqlite-staged-docs.js';

const SUMMARY_COLUMNS = `g.slug, g.title, g.summary, g.tags, g.language, g.published_at, g.published_ms,
  g.updated_at, g.reading_time_minutes`;

interface SummaryRow {
  slug: string;
  title: string;
  summary: string;
  tags: string;
  language: string;
  published_at: string;
  published_ms: number;
  updated_at: string | null;
  reading_time_minutes: number;
}

interface DetailRow extends SummaryRow {
  markdown: string;
  word_count: number;
  headings: string;
  author: string | null;
  canonical_url: string | null;
}

/** SQLite keeps JSON as text: decode it, then map like every backend. */
function toSummary(row: SummaryRow): GuideSummaryData {
  return toGuideSummary({ ...row, tags: JSON.parse(row.tags) as string[] });
}

function toDetail(row: DetailRow): GuideDetailData {
  return toGuideDetail({
    ...row,
    tags: JSON.parse(row.tags) as string[],
    headings: JSON.parse(row.headings) as GuideDetailData['headings'],
    author: row.author === null ? null : (JSON.parse(row.author) as GuideDetailData['author'] & object),
  });
}

const BUSY_TIMEOUT_MS = 5000;

export interface SqliteStoreOptions {
  /** Refuse to create the file (serving an existing database); default false. */
  fileMustExist?: boolean;
  /** Worker threads that run searches off the event loop (each with its own read-only connection); 0, the default, searches in the calling thread. */
  searchWorkers?: number;
  /** How the search workers share the CPU with the calling thread (default `idle`; see SearchPriority). */
  searchPriority?: SearchPriority;
  /** SQLite's page cache for this connection, in KiB (default better-sqlite3's 16 MB, which suits imports). */
  pageCacheKib?: number;
}

/** The SQLite store, with its search workers' page renderer when it has workers (open-store.ts offers it next to the store). */
export interface SqliteGuideStore extends GuideStore {
  readonly searchPages?: SearchPageRenderer;
}

export function createSqliteGuideStore(file: string, options: SqliteStoreOptions = {}): SqliteGuideStore {
  if (file !== ':memory:' && !options.fileMustExist) mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const db = openSqliteDatabase(file, { fileMustExist: options.fileMustExist ?? false });
  db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS};`);
  if (options.pageCacheKib !== undefined) db.exec(`PRAGMA cache_size = -${Math.max(1, Math.floor(options.pageCacheKib))}`);

  function migrateNow(): void {
    db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
    db.transaction(() => {
      const row = db.prepare('SELECT coalesce(max(version), 0) AS v FROM schema_migrations').get() as { v: number };
      for (const migration of SQLITE_MIGRATIONS) {
        if (migration.version <= row.v) continue;
        db.exec(migration.sql);
        db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(migration.version, new Date().toISOString());
      }
      // A database from before the search index (or of an older index format) gets its index now.
      const stats = db.prepare<[], { value: Buffer }>("SELECT value FROM search_meta WHERE key = 'stats'").get();
      if (!stats || (JSON.parse(stats.value.toString('utf8')) as { format?: number }).format !== SEARCH_FORMAT_VERSION) {
        buildSearchIndex(db);
        // Over an index of another format, the content version grows too, as after an import. A
        // process of another release still serving the file keeps its index state until the
        // version moves, and read rows of the new format with it (its searches failed); it now
        // reloads the index, finds a format it does not know and answers empty pages until it is
        // replaced (docs/operations.md#upgrading-to-a-new-search-index-format).
        if (stats) db.prepare("UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'content_version'").run();
      }
    }).immediate();
  }
  migrateNow();

  const statements = {
    meta: db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?'),
    setMeta: db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'),
    insertMetaIfAbsent: db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING'),
    anyGuide: db.prepare('SELECT 1 AS one FROM guides LIMIT 1'),
    ping: db.prepare('SELECT 1'),
    checkpoint: db.prepare('PRAGMA wal_checkpoint(TRUNCATE)'),
    detail: db.prepare<[string], DetailRow>(`SELECT ${SUMMARY_COLUMNS}, g.markdown, g.word_count, g.headings, g.author, g.canonical_url
      FROM guides AS g INDEXED BY guides_published_by_slug WHERE g.slug = ? AND g.status = 'published'`),
    firstPage: db.prepare<[number], SummaryRow>(`SELECT ${SUMMARY_COLUMNS}
      FROM guides AS g INDEXED BY guides_published_by_date WHERE g.status = 'published'
      ORDER BY g.published_ms DESC, g.slug LIMIT ?`),
    nextPage: db.prepare<{ ms: number; slug: string; limit: number }, SummaryRow>(`SELECT ${SUMMARY_COLUMNS}
      FROM guides AS g INDEXED BY guides_published_by_date WHERE g.status = 'published'
        AND (g.published_ms < :ms OR (g.published_ms = :ms AND g.slug > :slug))
      ORDER BY g.published_ms DESC, g.slug LIMIT :limit`),
    index: db.prepare<[], GuideIndexEntry>(`SELECT g.slug, g.title, g.summary FROM guides AS g INDEXED BY guides_published_by_date
      WHERE g.status = 'published' ORDER BY g.published_ms DESC, g.slug`),
    existing: db.prepare<[], { slug: string; status: GuideStatus; content_hash: string }>('SELECT slug, status, content_hash FROM guides'),
    upsert: db.prepare(`INSERT INTO guides (slug, status, title, summary, tags, language, published_at, published_ms, updated_at,
        author, canonical_url, markdown, word_count, reading_time_minutes, headings, content_hash)
      VALUES (@slug, @status, @title, @summary, @tags, @language, @published_at, @published_ms, @updated_at,
        @author, @canonical_url, @markdown, @word_count, @reading_time_minutes, @headings, @content_hash)
      ON CONFLICT (slug) DO UPDATE SET status = excluded.status, title = excluded.title, summary = excluded.summary,
        tags = excluded.tags, language = excluded.language, published_at = excluded.published_at,
        published_ms = excluded.published_ms, updated_at = excluded.updated_at, author = excluded.author,
        canonical_url = excluded.canonical_url, markdown = excluded.markdown, word_count = excluded.word_count,
        reading_time_minutes = excluded.reading_time_minutes, headings = excluded.headings, content_hash = excluded.content_hash
      RETURNING id`),
    deleteText: db.prepare('DELETE FROM guide_text_parts WHERE id >= ? * 65536 AND id < (? + 1) * 65536'),
    insertText: db.prepare('INSERT INTO guide_text_parts (id, text) VALUES (? * 65536 + ?, ?)'),
    archive: db.prepare("UPDATE guides SET status = 'archived', content_hash = 'left-the-folder' WHERE slug = ?"),
    publishedIds: db.prepare<[], { id: number; slug: string }>("SELECT id, slug FROM guides WHERE status = 'published'"),
    begin: db.prepare('BEGIN IMMEDIATE'),
    commit: db.prepare('COMMIT'),
    rollback: db.prepare('ROLLBACK'),
    journalDelete: db.prepare<[], { journal_mode: string }>('PRAGMA journal_mode = DELETE'),
    journalWal: db.prepare<[], { journal_mode: string }>('PRAGMA journal_mode = WAL'),
  };

  const readMeta = (key: string): string | undefined => statements.meta.get(key)?.value;
  const readSnapshot = snapshotReader(db);
  // Searches run in worker threads when asked (serving), so that they never hold up the event loop;
  // else here. Either way the index is loaded only where searches run.
  const searchWorkers = options.searchWorkers ?? 0;
  const pool = searchWorkers > 0 ? createSearchPool(file, searchWorkers, options.searchPriority) : undefined;
  let inProcessSearch: SqliteSearch | undefined;
  let lastVersion: number | undefined;

  function guard<T>(read: () => T): Promise<T> {
    try {
      return Promise.resolve(read());
    } catch (error) {
      if (isUnavailableError(error, db))
        return Promise.reject(new StoreUnavailableError('the SQLite database cannot be read', { cause: error }));
      return Promise.reject(error);
    }
  }

  /**
   * One import, inside a transaction the caller holds: guides are added in folder order (each
   * written as it comes when it is new or changed), then `finish` archives the guides that left
   * the folder, rebuilds the search index and updates the metadata.
   */
  function startImport(): ImportSession {
    const planner = new ImportPlanner(
      statements.existing.all().map((r) => ({ slug: r.slug, status: r.status, contentHash: r.content_hash })),
    );
    let writes = 0;
    const staged = new StagedSearchDocs(db);
    return {
      add(guide, contentHash, search) {
        if (planner.add(guide, contentHash).write) {
          const { id } = statements.upsert.get(guideRow(guide, contentHash)) as { id: number };
          statements.deleteText.run(id, id);
          textParts(guide.plainText).forEach((text, part) => statements.insertText.run(id, part, text));
          writes += 1;
        }
        // The planner refuses a slug given twice, so each published guide is staged once.
        if (guide.status === 'published') staged.add(guide, search);
      },
      finish(product, resources) {
        const archive = planner.finish();
        for (const slug of archive) statements.archive.run(slug);
        // Relevance statistics are global, so any change to the guides rebuilds the whole index. The
        // folder holds every guide (those not in it were just archived), so its published guides are
        // exactly the published guides now.
        if (writes > 0 || archive.length > 0) staged.writeIndex(statements.publishedIds.all());
        staged.clear();
        const productJson = JSON.stringify(product);
        const resourcesJson = JSON.stringify(resources);
        const productChanged = readMeta('product') !== productJson;
        const resourcesChanged = readMeta('resources') !== resourcesJson;
        if (productChanged) statements.setMeta.run('product', productJson);
        if (resourcesChanged) statements.setMeta.run('resources', resourcesJson);
        let version = Number(readMeta('content_version') ?? '0');
        if (writes > 0 || archive.length > 0 || productChanged || resourcesChanged) {
          version += 1;
          statements.setMeta.run('content_version', String(version));
        }
        return { ...planner.summary, productChanged, resourcesChanged, contentVersion: version };
      },
    };
  }

  const applyImport = db.transaction((content: ContentSet): ImportSummary => {
    const session = startImport();
    for (const guide of content.guides) session.add(guide, hashJson(guide));
    return session.finish(content.product, content.resources);
  });

  /**
   * The first import into a database without guides (the largest kind: a whole folder at once)
   * writes through a rollback journal instead of the write-ahead log. In WAL mode every page is
   * written twice, to the log and then, at the checkpoint that follows the commit, to the database
   * (for a large folder the checkpoint alone is a long pause); with a rollback journal, pages
   * added to the file are written once and nothing is journaled for them, since undoing them is
   * cutting the file back. The transaction is as atomic (a killed import leaves a journal that the
   * next connection rolls back, to the empty database) and, with synchronous = FULL, as durable.
   * Leaving WAL mode needs the only connection to the file: with any other (a server), this
   * answers false at once and the import goes through the log as usual. Readers that open the file
   * meanwhile wait for the commit, as they would for a checkpoint.
   */
  function leaveLogForFirstImport(): boolean {
    if (statements.anyGuide.get() !== undefined) return false;
    db.exec('PRAGMA busy_timeout = 0');
    try {
      if (statements.journalDelete.get()?.journal_mode !== 'delete') return false;
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_BUSY') return false;
      throw error;
    } finally {
      db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
    db.exec('PRAGMA synchronous = FULL');
    return true;
  }

  /** Back to WAL after an import through a rollback journal (if another connection came meanwhile, the next store to open the file does it). */
  function returnToLog(): void {
    db.exec('PRAGMA synchronous = NORMAL');
    try {
      statements.journalWal.get();
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
    }
  }

  /**
   * The transaction spans awaits (guides arrive as they are read), so BEGIN and COMMIT are by hand.
   * A stream that throws (a problem found in the folder), or any failure, rolls everything back.
   */
  async function applyImportStream(content: ContentStream): Promise<ImportSummary> {
    const withoutLog = leaveLogForFirstImport();
    try {
      statements.begin.run();
      const session = startImport();
      // What SQLITE_GUIDE_PREPARATION made while the folder was read: a published guide's search document.
      for await (const item of content.guides) session.add(item.guide, item.contentHash, item.search as SearchDoc | undefined);
      const summary = session.finish(content.product, content.resources);
      statements.commit.run();
      return summary;
    } catch (error) {
      if (db.inTransaction) statements.rollback.run();
      if (isUnavailableError(error, db)) throw new StoreUnavailableError('the SQLite database cannot be written', { cause: error });
      throw error;
    } finally {
      if (withoutLog) returnToLog();
    }
  }

  /** Rows fetched with LIMIT limit + 1: the extra row only tells that another page follows. */
  function splitPage<R extends SummaryRow>(rows: R[], limit: number): { rows: R[]; last?: R } {
    if (rows.length <= limit) return { rows };
    const pageRows = rows.slice(0, limit);
    return { rows: pageRows, last: pageRows.at(-1) };
  }

  return {
    migrate: () => guard(migrateNow),
    isEmpty: () => guard(() => statements.anyGuide.get() === undefined && readMeta('product') === undefined),
    contentVersion: () =>
      guard(() => {
        const version = Number(readMeta('content_version') ?? '0');
        // Servers poll this: when an import has changed the content, the search workers load the new
        // index now rather than at the next search.
        if (version !== lastVersion) pool?.warm();
        lastVersion = version;
        return version;
      }),
    getProduct: () =>
      guard(() => {
        const value = readMeta('product');
        return value === undefined ? undefined : (JSON.parse(value) as ProductInfo);
      }),
    getResources: () => guard(() => JSON.parse(readMeta('resources') ?? '[]') as ResourceLink[]),
    getPublishedGuide: (slug) =>
      guard(() => {
        const row = statements.detail.get(slug);
        return row ? toDetail(row) : undefined;
      }),
    listPublishedGuides: ({ limit, after }) =>
      guard((): Page<ListPosition> => {
        const rows = after
          ? statements.nextPage.all({ ms: after.publishedMs, slug: after.slug, limit: limit + 1 })
          : statements.firstPage.all(limit + 1);
        const { rows: pageRows, last } = splitPage(rows, limit);
        return { items: pageRows.map(toSummary), ...(last ? { next: { publishedMs: last.published_ms, slug: last.slug } } : {}) };
      }),
    searchPublishedGuides: (options) => {
      if (pool) return pool.search(options);
      return guard(() => readSnapshot(() => searchPage((inProcessSearch ??= createSqliteSearch(db)), options)));
    },
    ...(pool
      ? { searchPages: { renderSearchPage: (options, rendering) => pool.render(options, rendering) } satisfies SearchPageRenderer }
      : {}),
    listPublishedIndex: () => guard(() => statements.index.all()),
    importContent: (content) => guard(() => applyImport.immediate(content)),
    importStream: applyImportStream,
    guidePreparation: SQLITE_GUIDE_PREPARATION,
    existingGuides: () =>
      guard(() => statements.existing.all().map((r) => ({ slug: r.slug, status: r.status, contentHash: r.content_hash }))),
    cursorKey: () =>
      guard(() => {
        statements.insertMetaIfAbsent.run('cursor_key', randomBytes(32).toString('base64url'));
        return Buffer.from(readMeta('cursor_key')!, 'base64url');
      }),
    ping: () => {
      // Ready means searches are answered too: not before the search workers are up.
      if (pool && !pool.isReady()) return Promise.reject(new StoreUnavailableError('the search workers are starting'));
      return guard(() => {
        statements.ping.get();
      });
    },
    close: async () => {
      await pool?.close();
      if (!db.open) return;
      // Write the log back and empty it while this connection can: a file replaced under a running
      // server (a restored backup) is closed after the rename, when SQLite no longer removes the
      // write-ahead log it leaves at the path, and the new file must not be read through it.
      try {
        statements.checkpoint.run();
      } catch {
        // Unreadable or busy: closing checkpoints what it can.
      }
      db.close();
    },
  };
}

interface ImportSession {
  /** `search`: the guide's search document when the reader prepared it (published guides), else it is made at finish. */
  add(guide: GuideRecord, contentHash: string, search?: SearchDoc): void;
  finish(product: ProductInfo, resources: ResourceLink[]): ImportSummary;
}
