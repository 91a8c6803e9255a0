/**
 * Judged queries on both backends: realistic queries an operator or an agent would type, each
 * with the guide that should come first, over the sample guides and the few of relevance-corpus.ts.
 * The contract promises relevance, so a ranking change that pushes a best guide out of its top
 * (3 unless the judgement says `top`) fails here, and so does a mean nDCG@10 below 0.9.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContentSet } from '../../src/guides/guide.js';
import { createPostgresGuideStore } from '../../src/store/postgres/postgres-guide-store.js';
import { buildTestApp } from '../helpers/build-test-app.js';
import type { TestApp } from '../helpers/build-test-app.js';
import { createTestDatabase, requirePostgres } from '../helpers/postgres-database.js';
import type { TestDatabase } from '../helpers/postgres-database.js';
import { relevanceContent } from './relevance-corpus.js';

interface Judgement {
  query: string;
  best: string;
  top?: number;
}

const FIXTURES = path.resolve(import.meta.dirname, '..', 'fixtures');
const judged = readdirSync(FIXTURES)
  .filter((file) => /^judged-queries-.*\.json$/.test(file))
  .flatMap((file) => JSON.parse(readFileSync(path.join(FIXTURES, file), 'utf8')) as Judgement[]);

const hasPostgres = await requirePostgres('the judged queries on PostgreSQL');

/** One relevant guide per query: its gain is 1/log2(rank + 1) in the first 10, the ideal 1. */
function ndcgAt10(slugs: readonly string[], best: string): number {
  const rank = slugs.slice(0, 10).indexOf(best);
  return rank < 0 ? 0 : 1 / Math.log2(rank + 2);
}

const backends: { name: string; run: boolean; open(content: ContentSet): Promise<{ app: TestApp; database?: TestDatabase }> }[] = [
  { name: 'SQLite', run: true, open: async (content) => ({ app: await buildTestApp({ content }) }) },
  {
    name: 'PostgreSQL',
    run: hasPostgres,
    async open(content) {
      const database = await createTestDatabase();
      return {
        app: await buildTestApp({ content, store: createPostgresGuideStore({ connectionString: database.url, poolSize: 4 }) }),
        database,
      };
    },
  },
];

describe.each(backends.filter((backend) => backend.run))('search relevance on $name', (backend) => {
  let t: TestApp;
  let database: TestDatabase | undefined;
  const firstTen = new Map<string, string[]>();
  beforeAll(async () => {
    const opened = await backend.open(await relevanceContent());
    t = opened.app;
    database = opened.database;
    for (const { query } of judged) {
      const res = await t.app.inject({ url: `/api/v1/guides?q=${encodeURIComponent(query)}&limit=10` });
      expect(res.statusCode, query).toBe(200);
      firstTen.set(
        query,
        res.json<{ items: { slug: string }[] }>().items.map((i) => i.slug),
      );
    }
  });
  afterAll(async () => {
    await t?.close();
    await database?.drop();
  });

  it.each(judged)('ranks $best in its top for $query', ({ query, best, top = 3 }) => {
    expect(firstTen.get(query)?.slice(0, top)).toContain(best);
  });

  it('keeps the mean nDCG@10 at 0.9 or more', () => {
    const mean = judged.reduce((sum, { query, best }) => sum + ndcgAt10(firstTen.get(query) ?? [], best), 0) / judged.length;
    expect(mean).toBeGreaterThanOrEqual(0.9);
  });
});
