/**
 * An import stages each published guide's search document in a temporary table and builds the
 * index from there in list order at the end: the index must be exactly the one built from the
 * stored guides, whatever threads read the folder, without guides that are not published, and
 * untouched by an import that changes nothing.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeCorpus } from '../../../../bench/corpus.js';
import { importContentFolder } from '../../../../src/content/import-content.js';
import { parseSearchQuery } from '../../../../src/guides/search-query.js';
import { buildSearchIndex } from '../../../../src/store/sqlite/search/sqlite-index-builder.js';
import { openSqliteDatabase } from '../../../../src/store/sqlite/sqlite-database.js';
import { createSqliteGuideStore } from '../../../../src/store/sqlite/sqlite-guide-store.js';
import type { GuideStore } from '../../../../src/store/guide-store.js';
import { makeTempDir } from '../../../helpers/build-test-app.js';

/** Every row of the index tables, as text to compare. */
function indexDump(file: string): string {
  const db = openSqliteDatabase(file, { readonly: true });
  try {
    const rows = (sql: string) => db.prepare(sql).raw(true).all() as unknown[][];
    const hex = (table: unknown[][]) => table.map((row) => row.map((v) => (Buffer.isBuffer(v) ? v.toString('hex') : String(v))).join('|'));
    return [
      ...hex(rows('SELECT id, df, data FROM search_postings ORDER BY id')),
      ...hex(rows('SELECT docno, tokens, card, head FROM search_docs ORDER BY docno')),
      ...hex(rows('SELECT key, value FROM search_meta ORDER BY key')),
    ].join('\n');
  } finally {
    db.close();
  }
}

/** The index rebuilt from the guides table, in a copy of the database (the original stays as the import left it). */
function rebuiltDump(file: string, dir: string): string {
  const copy = path.join(dir, 'rebuilt.db');
  const source = openSqliteDatabase(file, { readonly: true });
  source.exec(`VACUUM INTO '${copy}'`);
  source.close();
  const db = openSqliteDatabase(copy);
  db.transaction(() => buildSearchIndex(db))();
  db.close();
  return indexDump(copy);
}

describe('the search index an import stages and writes', () => {
  let dir: string;
  let file: string;
  let store: GuideStore;

  beforeEach(() => {
    dir = makeTempDir('guides-staged-');
    file = path.join(dir, 'guides.db');
    store = createSqliteGuideStore(file);
  });
  afterEach(async () => {
    await store.close();
  });

  for (const workers of [0, 2]) {
    it(`equals the index built from the stored guides (${workers === 0 ? 'one thread' : `${workers} reading threads`})`, async () => {
      const content = path.join(dir, 'content');
      writeCorpus(content, { size: 240 });
      const guidesDir = path.join(content, 'guides');
      const published = readdirSync(guidesDir)
        .sort()
        .filter((name) => !/^status: (?!published)/m.test(readFileSync(path.join(guidesDir, name), 'utf8')));
      const [first, second] = published as [string, string];
      const firstText = readFileSync(path.join(guidesDir, first), 'utf8');
      writeFileSync(path.join(guidesDir, first), `${firstText}\nA closing line only this guide has: quokka.\n`);
      // A guide that is not published is never indexed.
      const secondText = readFileSync(path.join(guidesDir, second), 'utf8');
      writeFileSync(path.join(guidesDir, second), secondText.replace(/^status: .*\n/m, '').replace(/^---\n/, '---\nstatus: retained\n'));

      const result = await importContentFolder(store, content, { workers });
      expect(result.problems).toEqual([]);
      const imported = indexDump(file);
      expect(imported.length).toBeGreaterThan(100_000);
      expect(imported).toBe(rebuiltDump(file, dir));

      // The stored text is what is indexed; the retained guide is not.
      const quokka = await store.searchPublishedGuides({ query: parseSearchQuery('quokka'), limit: 5 });
      expect(quokka.items.map((item) => item.slug)).toEqual([first.slice(0, -'.md'.length)]);
      const secondTitle = /^title: "(.*)"$/m.exec(secondText)?.[1] as string;
      const drafts = await store.searchPublishedGuides({ query: parseSearchQuery(`"${secondTitle}"`), limit: 50 });
      expect(drafts.items.map((item) => item.slug)).not.toContain(second.slice(0, -'.md'.length));

      // Nothing changed: the index is left as it was.
      const again = await importContentFolder(store, content, { workers });
      expect(again.summary?.unchanged).toBeGreaterThan(0);
      expect(indexDump(file)).toBe(imported);
    });
  }
});
