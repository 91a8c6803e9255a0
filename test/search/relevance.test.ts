/**
 * Judged queries over the sample guides: realistic queries an operator or an agent would type,
 * each with the guide that should come first. The contract promises relevance, so a ranking
 * change that pushes a best guide out of the top 3 fails here.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../helpers/build-test-app.js';
import type { TestApp } from '../helpers/build-test-app.js';

const FIXTURES = path.resolve(import.meta.dirname, '..', 'fixtures');
const judged = readdirSync(FIXTURES)
  .filter((file) => /^judged-queries-.*\.json$/.test(file))
  .flatMap((file) => JSON.parse(readFileSync(path.join(FIXTURES, file), 'utf8')) as { query: string; best: string }[]);

describe('search relevance on the sample guides', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('has a judged set worth the name', () => {
    expect(judged.length).toBeGreaterThanOrEqual(60);
  });

  it.each(judged)('ranks $best in the top 3 for "$query"', async ({ query, best }) => {
    const res = await t.app.inject({ url: `/api/v1/guides?q=${encodeURIComponent(query)}&limit=3` });
    expect(res.statusCode).toBe(200);
    expect(res.json<{ items: { slug: string }[] }>().items.map((i) => i.slug)).toContain(best);
  });
});
