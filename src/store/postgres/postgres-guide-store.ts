/**
 * The shared backend: PostgreSQL through a `pg` pool, for several instances on one database.
 * Same contract as the SQLite store (src/store/guide-store.ts); search uses a weighted tsvector,
 * a GIN index and ts_rank_cd (postgres-search.ts).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { PoolClient } from 'pg';
import type { ListPosition, SearchPosition } from '../../guides/cursor.js';
import { snippetSpacing } from '../../guides/snippet.js';
import type { ContentSet, GuideRecord, GuideStatus, ProductInfo, ResourceLink } from '../../guides/guide.js';
import { ImportPlanner, hashJson } from '../import-plan.js';
import { toGuideDetail, toGuideSummary } from '../guide-rows.js';
import type { GuideDetailRow, GuideSummaryRow } from '../guide-rows.js';
import type { ContentStream, GuideIndexEntry, GuideStore, ImportSummary, Page, PreparedGuide } from '../guide-store.js';
import { StoreUnavailableError } from '../guide-store.js';
import { IMPORT_LOCK, LOCK_CLASS, MIGRATION_LOCK, POSTGRES_MIGRATIONS } from './postgres-schema.js';
import { POSTGRES_RANK_WEIGHTS, SEARCH_QUERY_CTE, SNIPPET_SELECT, toSearchParameters } from './postgres-search.js';
import { postgresTarget, unavailableError } from './postgres-unavailable.js';
import type { PostgresTarget } from './postgres-unavailable.js';

export interface PostgresStoreOptions {
  connectionString: string;
  /** Most connections the pool opens; default 10. */
  poolSize?: number;
  /** How long to wait for a connection before reporting the database unavailable; default 5000 ms. */
  connectionTimeoutMs?: number;
  /** Called with errors of idle pooled connections (the pool replaces them); default: ignore. */
  onIdleError?: (error: Error) => void;
}

const SUMMARY_COLUMNS = `g.slug, g.title, g.summary, g.tags, g.language, g.published_at, g.published_ms,
  g.updated_at, g.reading_time_minutes`;

/** published_ms arrives as text (bigint); everything else as GuideSummaryRow says. */
type SummaryRow = GuideSummaryRow & { published_ms: string };
/** A search result row: the snippet is null on the row past the page (it gets none). */
type SearchRow = SummaryRow & { score: number; snippet: string | null; snippet_at_start: boolean | null; snippet_at_end: boolean | null };
type DetailRow = GuideDetailRow & { published_ms: string };

/** A row's ts_headline fragment as a snippet (see snippetSpacing), with `…` where it cuts its source. */
function snippetOf(row: SearchRow): string {
  const text = row.snippet?.trim() ?? '';
  if (text === '') return '';
  return `${row.snippet_at_start === true ? '' : '…'}${snippetSpacing(text)}${row.snippet_at_end === true ? '' : '…'}`;
}

const SQL = {
  detail: `SELECT ${SUMMARY_COLUMNS}, g.markdown, g.word_count, g.headings, g.author, g.canonical_url
    FROM guides AS g WHERE g.status = 'published' AND g.slug = $1`,
  firstPage: `SELECT ${SUMMARY_COLUMNS} FROM guides AS g WHERE g.status = 'published'
    ORDER BY g.published_ms DESC, g.slug LIMIT $1`,
  // `published_ms <= $1` is the index condition that starts the scan at the position, so page 1,000
  // costs what page 1 costs; the OR alone would be a filter over every earlier index entry.
  nextPage: `SELECT ${SUMMARY_COLUMNS} FROM guides AS g WHERE g.status = 'published'
    AND g.published_ms <= $1 AND (g.published_ms < $1 OR g.slug > $2)
    ORDER BY g.published_ms DESC, g.slug LIMIT $3`,
  index: `SELECT g.slug, g.title, g.summary FROM guides AS g WHERE g.status = 'published'
    ORDER BY g.published_ms DESC, g.slug`,
  /**
   * $1 phrases, $2 prefix words, $3 limit, $4 has-after, $5 score, $6 published ms, $7 slug.
   * One row more than the limit tells whether another page follows; it gets no snippet.
   * Score: lower is better (the SearchPosition convention). A guide whose title alone matches the
   * whole query comes first (-1), then ts_rank_cd normalized to [0, 1) (flag 32) orders within.
   * Everything is float8, so the number a cursor carries compares equal when it comes back.
   * Snippets are made for the page's rows only, after the LIMIT (see SNIPPET_SELECT).
   */
  search: `WITH ${SEARCH_QUERY_CTE},
    matches AS (
      SELECT g.id, g.published_ms, g.slug,
        -((CASE WHEN g.title_vector @@ s.query THEN 1 ELSE 0 END)::float8
          + ts_rank_cd('${POSTGRES_RANK_WEIGHTS}', g.search_vector, s.query, 32)::float8) AS score
      FROM search AS s JOIN guides AS g ON g.status = 'published' AND g.search_vector @@ s.query
      WHERE s.ok
    ),
    page AS (
      SELECT m.id, m.score, row_number() OVER (ORDER BY m.score, m.published_ms DESC, m.slug) AS n FROM matches AS m
      WHERE NOT $4::boolean OR m.score > $5::float8 OR (m.score = $5::float8
        AND (m.published_ms < $6::bigint OR (m.published_ms = $6::bigint AND m.slug > $7::text)))
      ORDER BY m.score, m.published_ms DESC, m.slug LIMIT $3::integer + 1
    )
    SELECT ${SUMMARY_COLUMNS}, p.score, snip.snippet, snip.snippet_at_start, snip.snippet_at_end
    FROM page AS p JOIN guides AS g ON g.id = p.id CROSS JOIN search AS s
    LEFT JOIN LATERAL (${SNIPPET_SELECT}) AS snip ON p.n <= $3::integer
    ORDER BY p.score, g.published_ms DESC, g.slug`,
  existing: 'SELECT slug, status, content_hash FROM guides ORDER BY id',
  upsert: `INSERT INTO guides (slug, status, title, summary, tags, language, published_at, published_ms, updated_at,
      author, canonical_url, markdown, plain_text, word_count, reading_time_minutes, headings, content_hash)
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::jsonb[], $6::text[], $7::text[], $8::bigint[],
      $9::text[], $10::jsonb[], $11::text[], $12::text[], $13::text[], $14::integer[], $15::integer[], $16::jsonb[], $17::text[])
    ON CONFLICT (slug) DO UPDATE SET status = excluded.status, title = excluded.title, summary = excluded.summary,
      tags = excluded.tags, language = excluded.language, published_at = excluded.published_at,
      published_ms = excluded.published_ms, updated_at = excluded.updated_at, author = excluded.author,
      canonical_url = excluded.canonical_url, markdown = excluded.markdown, plain_text = excluded.plain_text,
      word_count = excluded.word_count, reading_time_minutes = excluded.reading_time_minutes,
      headings = excluded.headings, content_hash = excluded.content_hash`,
  archive: "UPDATE guides SET status = 'archived', content_hash = 'left-the-folder' WHERE slug = ANY($1::text[])",
  meta: 'SELECT value FROM meta WHERE key = $1',
  setMeta: 'INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
  insertMetaIfAbsent: 'INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING',
  bumpVersion: "UPDATE meta SET value = (value::bigint + 1)::text WHERE key = 'content_version' RETURNING value",
} as const;

/** Rows per INSERT … SELECT unnest(…) statement during an import. */
const UPSERT_BATCH = 250;

/** Node socket errors and SQLSTATE classes that mean "the database cannot be reached or refuses us now". */
const UNAVAILABLE_NODE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);
const UNAVAILABLE_SQLSTATE = /^(08|28|53|57P|3D000)/;
const UNAVAILABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|Cannot use a pool after calling end|connection error/i;

function isUnavailable(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_NODE_CODES.has(code) || (code.length === 5 && UNAVAILABLE_SQLSTATE.test(code)))) return true;
  return typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message);
}

function toUnavailable<T>(promise: Promise<T>, target: PostgresTarget): Promise<T> {
  return promise.catch((error: unknown) => {
    if (isUnavailable(error)) throw unavailableError(error, target);
    throw error;
  });
}

/** Whether any string in a decoded JSON value (keys included) holds U+0000. */
function hasNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(hasNul);
  if (typeof value === 'object' && value !== null)
    return Object.entries(value).some(([key, item]) => key.includes('\u0000') || hasNul(item));
  return false;
}

/** PostgreSQL text and jsonb cannot hold U+0000 (SQLSTATE 22021, 22P05): say which guide or file, instead of the server's error. */
function assertNoNul(value: unknown, what: string): void {
  if (hasNul(value)) throw new Error(`${what} contains a NUL character, which PostgreSQL cannot store; remove it from the file`);
}

function upsertParameters(rows: { guide: GuideRecord; contentHash: string }[]): unknown[] {
  const column = <T>(pick: (guide: GuideRecord, hash: string) => T): T[] => rows.map(({ guide, contentHash }) => pick(guide, contentHash));
  return [
    column((g) => g.slug),
    column((g) => g.status),
    column((g) => g.title),
    column((g) => g.summary),
    column((g) => JSON.stringify(g.tags)),
    column((g) => g.language),
    column((g) => g.publishedAt),
    column((g) => (g.publishedAt === null ? null : String(Date.parse(g.publishedAt)))),
    column((g) => g.updatedAt),
    column((g) => (g.author ? JSON.stringify(g.author) : null)),
    column((g) => g.canonicalUrl ?? null),
    column((g) => g.markdown),
    column((g) => g.plainText),
    column((g) => g.wordCount),
    column((g) => g.readingTimeMinutes),
    column((g) => JSON.stringify(g.headings)),
    column((_g, hash) => hash),
  ];
}

/** A content set in memory as a stream: importContent is importStream over it. */
async function* preparedGuides(guides: readonly GuideRecord[]): AsyncGenerator<PreparedGuide> {
  for (const guide of guides) yield { guide, contentHash: hashJson(guide) };
}

/** Rows fetched with LIMIT limit + 1: the extra row only tells that another page follows. */
function splitPage<R>(rows: R[], limit: number): { rows: R[]; last?: R } {
  if (rows.length <= limit) return { rows };
  const pageRows = rows.slice(0, limit);
  return { rows: pageRows, last: pageRows.at(-1) };
}

export function createPostgresGuideStore(options: PostgresStoreOptions): GuideStore {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 5000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    application_name: 'restaurant-guides-api',
  });
  // Without a listener, an idle pooled connection that the server terminates (restart, failover,
  // pg_terminate_backend) emits an unhandled 'error' and crashes the process. The pool drops that
  // client by itself; the next query gets a fresh connection.
  pool.on('error', (error) => options.onIdleError?.(error));
  let isClosed = false;
  const target = postgresTarget(options.connectionString);

  function query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    if (isClosed) return Promise.reject(new StoreUnavailableError('the PostgreSQL store is closed'));
    return toUnavailable(
      pool.query<R>(text, values).then((result) => result.rows),
      target,
    );
  }

  /** Runs `work` in one transaction on one pooled connection; rolls back on any failure. */
  async function transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    if (isClosed) throw new StoreUnavailableError('the PostgreSQL store is closed');
    const client = await toUnavailable(pool.connect(), target);
    let isBroken = false;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {
        isBroken = true;
      });
      if (isUnavailable(error)) throw unavailableError(error, target);
      throw error;
    } finally {
      client.release(isBroken);
    }
  }

  async function readMeta(key: string, client?: PoolClient): Promise<string | undefined> {
    const rows = client ? (await client.query<{ value: string }>(SQL.meta, [key])).rows : await query<{ value: string }>(SQL.meta, [key]);
    return rows[0]?.value;
  }

  const LATEST_VERSION = Math.max(...POSTGRES_MIGRATIONS.map((migration) => migration.version));

  /** True when the schema is current and the cursor key exists: then migrate() writes nothing. */
  async function isUpToDate(): Promise<boolean> {
    const [row] = await query<{ version: number | null; has_key: boolean | null }>(`SELECT
      (SELECT max(version) FROM schema_migrations) AS version,
      (SELECT EXISTS (SELECT 1 FROM meta WHERE key = 'cursor_key')) AS has_key`).catch((error: unknown) => {
      // 42P01: a table is missing, so this database was never migrated.
      if ((error as { code?: string }).code === '42P01') return [];
      throw error;
    });
    // A newer schema (a rolling deploy migrated ahead of this process) is left alone too.
    return row?.version != null && row.version >= LATEST_VERSION && row.has_key === true;
  }

  async function migrate(): Promise<void> {
    // Read-only when nothing is to do, so serving instances may point at a read replica.
    if (await isUpToDate()) return;
    await transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_CLASS, MIGRATION_LOCK]);
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
      const { rows } = await client.query<{ v: number }>('SELECT coalesce(max(version), 0) AS v FROM schema_migrations');
      const current = rows[0]?.v ?? 0;
      for (const migration of POSTGRES_MIGRATIONS) {
        if (migration.version <= current) continue;
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, description) VALUES ($1, $2)', [
          migration.version,
          migration.description,
        ]);
      }
      // The cursor key is made here, on the primary, so that instances reading from a replica find it.
      await client.query(SQL.insertMetaIfAbsent, ['cursor_key', randomBytes(32).toString('base64url')]);
    });
  }

  /**
   * One transaction on one connection, open while the folder is read: guides are upserted in
   * batches as they arrive, then the guides that left the folder are archived and the metadata
   * written. A stream that throws, or any failure, rolls everything back.
   */
  async function importStream(content: ContentStream): Promise<ImportSummary> {
    assertNoNul([content.product, content.resources], 'product.yaml or resources.yaml');
    const summary = await transaction(async (client) => {
      // One import at a time: each plans against the state the previous one left.
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_CLASS, IMPORT_LOCK]);
      const existing = (await client.query<{ slug: string; status: GuideStatus; content_hash: string }>(SQL.existing)).rows.map((row) => ({
        slug: row.slug,
        status: row.status,
        contentHash: row.content_hash,
      }));
      const planner = new ImportPlanner(existing);
      let batch: { guide: GuideRecord; contentHash: string }[] = [];
      let writes = 0;
      for await (const { guide, contentHash } of content.guides) {
        assertNoNul(guide, `guide ${guide.slug}`);
        if (!planner.add(guide, contentHash).write) continue;
        batch.push({ guide, contentHash });
        if (batch.length === UPSERT_BATCH) {
          await client.query(SQL.upsert, upsertParameters(batch));
          writes += batch.length;
          batch = [];
        }
      }
      if (batch.length > 0) await client.query(SQL.upsert, upsertParameters(batch));
      writes += batch.length;
      const archive = planner.finish();
      if (archive.length > 0) await client.query(SQL.archive, [archive]);
      const product = JSON.stringify(content.product);
      const resources = JSON.stringify(content.resources);
      const productChanged = (await readMeta('product', client)) !== product;
      const resourcesChanged = (await readMeta('resources', client)) !== resources;
      if (productChanged) await client.query(SQL.setMeta, ['product', product]);
      if (resourcesChanged) await client.query(SQL.setMeta, ['resources', resources]);
      let version = Number((await readMeta('content_version', client)) ?? '0');
      if (writes > 0 || archive.length > 0 || productChanged || resourcesChanged) {
        const { rows } = await client.query<{ value: string }>(SQL.bumpVersion);
        version = Number(rows[0]?.value ?? version + 1);
      }
      return { ...planner.summary, productChanged, resourcesChanged, contentVersion: version };
    });
    if (summary.created.length + summary.updated.length + summary.moved.length > 0) {
      // Fresh statistics right away (autovacuum may take minutes): without them the planner
      // misjudges how many guides a keyset page or a search skips after a large first import.
      await query('ANALYZE guides').catch(() => undefined);
    }
    return summary;
  }

  return {
    migrate,
    isEmpty: async () => {
      const rows = await query<{ is_empty: boolean }>(
        "SELECT NOT EXISTS (SELECT 1 FROM guides) AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'product') AS is_empty",
      );
      return rows[0]?.is_empty ?? true;
    },
    contentVersion: async () => Number((await readMeta('content_version')) ?? '0'),
    getProduct: async () => {
      const value = await readMeta('product');
      return value === undefined ? undefined : (JSON.parse(value) as ProductInfo);
    },
    getResources: async () => JSON.parse((await readMeta('resources')) ?? '[]') as ResourceLink[],
    getPublishedGuide: async (slug) => {
      // No stored slug contains U+0000, and PostgreSQL would reject the parameter (SQLSTATE 22021).
      if (slug.includes('\u0000')) return undefined;
      const [row] = await query<DetailRow>(SQL.detail, [slug]);
      return row ? toGuideDetail(row) : undefined;
    },
    listPublishedGuides: async ({ limit, after }): Promise<Page<ListPosition>> => {
      const rows = after
        ? await query<SummaryRow>(SQL.nextPage, [after.publishedMs, after.slug.replaceAll('\u0000', ''), limit + 1])
        : await query<SummaryRow>(SQL.firstPage, [limit + 1]);
      const { rows: pageRows, last } = splitPage(rows, limit);
      return {
        items: pageRows.map(toGuideSummary),
        ...(last ? { next: { publishedMs: Number(last.published_ms), slug: last.slug } } : {}),
      };
    },
    searchPublishedGuides: async ({ query: searchQuery, limit, after }): Promise<Page<SearchPosition>> => {
      const { phrases, prefixes } = toSearchParameters(searchQuery);
      const rows = await query<SearchRow>(SQL.search, [
        phrases,
        prefixes,
        limit,
        after !== undefined,
        after?.score ?? 0,
        after?.publishedMs ?? 0,
        after?.slug.replaceAll('\u0000', '') ?? '',
      ]);
      const { rows: pageRows, last } = splitPage(rows, limit);
      return {
        items: pageRows.map((row) => ({ ...toGuideSummary(row), snippet: snippetOf(row) })),
        ...(last ? { next: { score: last.score, publishedMs: Number(last.published_ms), slug: last.slug } } : {}),
      };
    },
    listPublishedIndex: () => query<GuideIndexEntry>(SQL.index),
    importContent: (content: ContentSet) =>
      importStream({ product: content.product, resources: content.resources, guides: preparedGuides(content.guides) }),
    importStream,
    existingGuides: async () =>
      (await query<{ slug: string; status: GuideStatus; content_hash: string }>(SQL.existing)).map((row) => ({
        slug: row.slug,
        status: row.status,
        contentHash: row.content_hash,
      })),
    cursorKey: async () => {
      // migrate() normally made it. Otherwise two instances may race here: ON CONFLICT DO NOTHING
      // keeps the first key, and both read that one back.
      let key = await readMeta('cursor_key');
      if (key === undefined) {
        await query(SQL.insertMetaIfAbsent, ['cursor_key', randomBytes(32).toString('base64url')]);
        key = await readMeta('cursor_key');
      }
      return Buffer.from(key!, 'base64url');
    },
    ping: async () => {
      await query('SELECT 1');
    },
    close: async () => {
      if (isClosed) return;
      isClosed = true;
      await pool.end();
    },
  };
}
