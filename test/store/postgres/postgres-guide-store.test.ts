/**
 * The store contract against PostgreSQL (a fresh database per test), and what only PostgreSQL
 * needs: published-only access paths in the query plans, surviving terminated pool connections,
 * and 503-worthy errors when the server cannot be reached.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSearchQuery } from '../../../src/guides/search-query.js';
import { StoreUnavailableError } from '../../../src/store/guide-store.js';
import type { GuideStore, PreparedGuide } from '../../../src/store/guide-store.js';
import { hashJson } from '../../../src/store/import-plan.js';
import { openStore } from '../../../src/store/open-store.js';
import { createPostgresGuideStore } from '../../../src/store/postgres/postgres-guide-store.js';
import { makeContent, makeGuide } from '../../helpers/guide-factory.js';
import { createTestDatabase, requirePostgres } from '../../helpers/postgres-database.js';
import type { TestDatabase } from '../../helpers/postgres-database.js';
import { describeGuideStoreContract } from '../guide-store.contract.js';

const hasPostgres = await requirePostgres('the PostgreSQL store tests');

describe.runIf(hasPostgres)('PostgreSQL store', () => {
  describeGuideStoreContract('postgres', async () => {
    const database = await createTestDatabase();
    return {
      open: () => Promise.resolve(createPostgresGuideStore({ connectionString: database.url, poolSize: 3 })),
      cleanup: () => database.drop(),
    };
  });

  describe('PostgreSQL specifics', () => {
    let database: TestDatabase;
    let store: GuideStore;
    let admin: pg.Client;

    beforeAll(async () => {
      database = await createTestDatabase();
      ({ store } = await openStore({ databaseUrl: database.url, poolSize: 2 }));
      await store.migrate();
      // Enough rows that the planner's choices are the ones a real catalogue gets.
      const guides = Array.from({ length: 2000 }, (_, i) =>
        makeGuide({
          slug: `guide-${i}`,
          status: i % 3 === 0 ? 'retained' : 'published',
          publishedAt: `2026-01-${String((i % 28) + 1).padStart(2, '0')}T09:00:00Z`,
          markdown: `# Guide ${i}\n\nBody text about kitchens and word${i}.\n`,
        }),
      );
      await store.importContent(makeContent(guides));
      admin = new pg.Client({ connectionString: database.url });
      await admin.connect();
      await admin.query('ANALYZE guides');
    });

    afterAll(async () => {
      await admin?.end();
      await store?.close();
      await database?.drop();
    });

    async function plan(sql: string, values: unknown[]): Promise<string> {
      // No sequential scans: the plan then shows which of the indexes the planner prefers.
      await admin.query('SET enable_seqscan = off');
      const { rows } = await admin.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, values);
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    }

    it('is chosen by openStore for postgres:// URLs', async () => {
      // The guides imported through openStore's store are in this PostgreSQL database.
      const { rows } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM guides');
      expect(rows[0]!.n).toBe(2000);
    });

    it('records each migration once, however often migrate runs', async () => {
      await Promise.all([store.migrate(), store.migrate()]);
      const { rows } = await admin.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
      expect(rows.map((row) => row.version)).toEqual([1]);
    });

    it('looks slugs up through the published-only index, so unpublished and unknown slugs cost the same', async () => {
      const text = await plan("SELECT g.slug FROM guides AS g WHERE g.status = 'published' AND g.slug = $1", ['guide-3']);
      expect(text).toContain('guides_published_by_slug');
      expect(text).not.toContain('guides_slug_key');
    });

    it('lists through the published-only date index and searches through the published-only GIN index', async () => {
      expect(
        await plan("SELECT g.slug FROM guides AS g WHERE g.status = 'published' ORDER BY g.published_ms DESC, g.slug LIMIT $1", [10]),
      ).toContain('guides_published_by_date');
      expect(
        await plan(
          "SELECT g.slug FROM guides AS g WHERE g.status = 'published' AND g.search_vector @@ plainto_tsquery('guides_search', $1)",
          ['word42'],
        ),
      ).toContain('guides_published_search');
    });

    it('survives the server terminating its idle pooled connections', async () => {
      await Promise.all([store.ping(), store.ping()]);
      const { rowCount } = await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'restaurant-guides-api'",
      );
      expect(rowCount).toBeGreaterThan(0);
      // Give the pool a moment to see the closed sockets; without its 'error' listener the process would crash here.
      await new Promise((resolve) => setTimeout(resolve, 200));
      let version: number | undefined;
      for (let attempt = 0; attempt < 3 && version === undefined; attempt += 1) {
        version = await store.contentVersion().catch(() => undefined);
      }
      expect(version).toBe(1);
      expect((await store.listPublishedGuides({ limit: 5 })).items).toHaveLength(5);
    });

    it('serves from a read-only connection (as on a read replica) once the primary is migrated', async () => {
      const url = new URL(database.url);
      url.searchParams.set('options', '-c default_transaction_read_only=on');
      const replica = createPostgresGuideStore({ connectionString: url.toString() });
      try {
        await replica.migrate();
        expect((await replica.cursorKey()).equals(await store.cursorKey())).toBe(true);
        expect(await replica.contentVersion()).toBe(1);
        expect((await replica.listPublishedGuides({ limit: 3 })).items).toHaveLength(3);
        expect((await replica.searchPublishedGuides({ query: parseSearchQuery('"word43"'), limit: 3 })).items.map((i) => i.slug)).toEqual([
          'guide-43',
        ]);
        await expect(replica.importContent(makeContent([makeGuide({ slug: 'x' })]))).rejects.toThrow(/read-only/);
      } finally {
        await replica.close();
      }
    });

    it('refuses a guide with a NUL character, naming it, and changes nothing; the text \\u0000 is no NUL', async () => {
      const nul = makeContent([makeGuide({ slug: 'clean' }), makeGuide({ slug: 'nul', markdown: '# Nul\n\nA \u0000 here.\n' })]);
      await expect(store.importContent(nul)).rejects.toThrow(/guide nul contains a NUL character/);
      await expect(
        store.importContent(makeContent([], { resources: [{ rel: 'help', href: 'https://example.com', title: 'x\u0000' }] })),
      ).rejects.toThrow(/resources.yaml contains a NUL character/);
      expect(await store.contentVersion()).toBe(1);
      expect(await store.getPublishedGuide('clean')).toBeUndefined();
      // A guide about escapes may write the six characters \u0000: they are stored as written.
      const scratch = await createTestDatabase();
      const other = createPostgresGuideStore({ connectionString: scratch.url, poolSize: 1 });
      try {
        await other.migrate();
        const escaped = makeGuide({ slug: 'escapes', markdown: '# Escapes\n\nJSON writes it as `\\u0000`.\n' });
        await other.importContent(makeContent([escaped]));
        expect((await other.getPublishedGuide('escapes'))?.markdown).toBe(escaped.markdown);
      } finally {
        await other.close();
        await scratch.drop();
      }
    });

    it('writes a streamed import in batches as the guides arrive, inside the one transaction', async () => {
      const scratch = await createTestDatabase();
      const streaming = createPostgresGuideStore({ connectionString: scratch.url, poolSize: 2 });
      const probe = new pg.Client({ connectionString: scratch.url });
      try {
        await streaming.migrate();
        await probe.connect();
        /**
         * Whether the import has written `slug` yet: an insert of the same slug from another
         * connection then waits for the import's transaction (and gives up after the lock timeout).
         */
        const isWritten = async (slug: string): Promise<boolean> => {
          await probe.query("BEGIN; SET LOCAL lock_timeout = '200ms'");
          try {
            await probe.query(
              `INSERT INTO guides (slug, status, title, summary, tags, language, markdown, plain_text, word_count,
                reading_time_minutes, headings, content_hash) VALUES ($1, 'retained', '', '', '[]', 'en', '', '', 0, 0, '[]', '')
              ON CONFLICT (slug) DO NOTHING`,
              [slug],
            );
            return false;
          } catch (error) {
            if ((error as { code?: string }).code === '55P03') return true;
            throw error;
          } finally {
            await probe.query('ROLLBACK');
          }
        };
        const guides = Array.from({ length: 600 }, (_, i) => makeGuide({ slug: `streamed-${i}` }));
        const seen: Record<string, boolean> = {};
        async function* stream(): AsyncGenerator<PreparedGuide> {
          for (const [i, guide] of guides.entries()) {
            yield { guide, contentHash: hashJson(guide) };
            if (i === 299) {
              seen.first = await isWritten('streamed-0');
              seen.last = await isWritten('streamed-299');
              seen.version = (await streaming.contentVersion()) === 0;
            }
          }
        }
        const summary = await streaming.importStream!({ ...makeContent([]), guides: stream() });
        // 300 guides in, the first full batch was written and the rest of the guides not yet; no reader saw any.
        expect(seen).toEqual({ first: true, last: false, version: true });
        expect(summary).toMatchObject({ contentVersion: 1, unchanged: 0 });
        expect(summary.created).toHaveLength(600);
        expect((await streaming.listPublishedIndex()).length).toBe(600);
        // The import's statistics are fresh, as after a whole import.
        const { rows } = await probe.query<{ reltuples: number }>("SELECT reltuples FROM pg_class WHERE relname = 'guides'");
        expect(rows[0]?.reltuples).toBe(600);
      } finally {
        await probe.end();
        await streaming.close();
        await scratch.drop();
      }
    });

    it('reports an unreachable server as StoreUnavailableError', async () => {
      const nowhere = createPostgresGuideStore({ connectionString: 'postgres://postgres@127.0.0.1:1/none', connectionTimeoutMs: 1000 });
      try {
        await expect(nowhere.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(nowhere.listPublishedGuides({ limit: 1 })).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(nowhere.migrate()).rejects.toBeInstanceOf(StoreUnavailableError);
      } finally {
        await nowhere.close();
      }
      const missing = createPostgresGuideStore({ connectionString: `${database.url}_missing` });
      try {
        await expect(missing.contentVersion()).rejects.toBeInstanceOf(StoreUnavailableError);
      } finally {
        await missing.close();
      }
    });

    it('reports a closed store as StoreUnavailableError', async () => {
      const closing = createPostgresGuideStore({ connectionString: database.url });
      await closing.close();
      await expect(closing.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
    });
  });
});
