/**
 * Guide files read on worker threads (what a large folder gets) give exactly what one thread
 * reading them gives: the same guides, the same problems in the same order, and, imported, the
 * same database to the last byte of its search index. An import read on workers that meets a
 * problem half-way changes nothing.
 */
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { importContentFolder } from '../../src/content/import-content.js';
import { loadContentFolder, openContentFolder } from '../../src/content/load-content.js';
import type { PreparedGuide } from '../../src/store/guide-store.js';
import type { SearchDoc } from '../../src/store/sqlite/search/sqlite-index-format.js';
import { openSqliteDatabase } from '../../src/store/sqlite/sqlite-database.js';
import { createSqliteGuideStore } from '../../src/store/sqlite/sqlite-guide-store.js';
import { makeTempDir } from '../helpers/build-test-app.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const SAMPLE = path.join(ROOT, 'content');
const FIXTURES = path.join(ROOT, 'test', 'fixtures');

const dirs: string[] = [];
function tempDir(): string {
  const dir = makeTempDir('guides-files-');
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Every row of every table an import writes (the cursor key aside, which is random). */
function tables(file: string): Record<string, unknown[]> {
  const db = openSqliteDatabase(file, { readonly: true, fileMustExist: true });
  try {
    return Object.fromEntries(
      ['guides', 'guide_text_parts', 'search_docs', 'search_postings', 'search_meta', 'meta'].map((table) => [
        table,
        db.prepare(`SELECT * FROM ${table} ${table === 'meta' ? "WHERE key <> 'cursor_key'" : ''} ORDER BY 1`).all(),
      ]),
    );
  } finally {
    db.close();
  }
}

describe('guide files read on worker threads', () => {
  it('give the same guides and the same problems, in the same order, as one thread', async () => {
    for (const folder of [SAMPLE, path.join(FIXTURES, 'content-broken'), path.join(FIXTURES, 'content-tiny')]) {
      const onWorkers = await loadContentFolder(folder, { workers: 2 });
      const here = await loadContentFolder(folder, { workers: 0 });
      expect(onWorkers).toEqual(here);
    }
  });

  it('refuse files that are not UTF-8 or too large as one thread does', async () => {
    const dir = tempDir();
    cpSync(path.join(FIXTURES, 'content-tiny'), dir, { recursive: true });
    writeFileSync(path.join(dir, 'guides', 'latin-1.md'), Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0xe9, 0x0a]));
    writeFileSync(path.join(dir, 'guides', 'large.md'), `---\ntitle: Large\n---\n${'x'.repeat(4096)}`);
    const onWorkers = await loadContentFolder(dir, { workers: 2, maxGuideBytes: 2048 });
    expect(onWorkers.problems).toEqual([
      { file: 'guides/large.md', message: 'is larger than 2048 bytes (MAX_GUIDE_BYTES)' },
      { file: 'guides/latin-1.md', message: 'is not valid UTF-8 text: save it as UTF-8' },
    ]);
    expect(await loadContentFolder(dir, { workers: 0, maxGuideBytes: 2048 })).toEqual(onWorkers);
  });

  it("hand each published guide the store's preparation, the same on workers as on one thread", async () => {
    const store = createSqliteGuideStore(path.join(tempDir(), 'g.db'));
    const preparation = store.guidePreparation!;
    await store.close();
    const read = async (workers: number): Promise<PreparedGuide[]> => {
      const prepared: PreparedGuide[] = [];
      for await (const guide of (await openContentFolder(SAMPLE, { workers, preparation })).guides()) prepared.push(guide);
      return prepared;
    };
    // Token ids are each preparer's own: compare the tokens they stand for.
    const tokens = ({ guide, search }: PreparedGuide) => {
      if (search === undefined) return { slug: guide.slug, search };
      const { card, head, publishedMs, terms, vocabulary } = search as SearchDoc;
      return {
        slug: guide.slug,
        card,
        head,
        publishedMs,
        terms: [...terms.terms].map((id) => vocabulary[id]),
        sequence: [...terms.sequence],
      };
    };
    const here = await read(0);
    expect(here.filter((item) => item.search !== undefined).map((item) => item.guide.slug)).toEqual(
      here.filter((item) => item.guide.status === 'published').map((item) => item.guide.slug),
    );
    expect(here.some((item) => item.search !== undefined)).toBe(true);
    expect((await read(2)).map(tokens)).toEqual(here.map(tokens));
  });

  it('import into the same database, search index included, as one thread and as importContent', async () => {
    const dir = tempDir();
    const files = ['workers.db', 'here.db', 'memory.db'].map((name) => path.join(dir, name)) as [string, string, string];
    const summaries = [];
    for (const [file, workers] of [
      [files[0], 2],
      [files[1], 0],
    ] as const) {
      const store = createSqliteGuideStore(file);
      summaries.push((await importContentFolder(store, SAMPLE, { workers })).summary);
      await store.close();
    }
    const store = createSqliteGuideStore(files[2]);
    summaries.push(await store.importContent((await loadContentFolder(SAMPLE)).content!));
    await store.close();

    expect(summaries[0]!.created).toHaveLength(38);
    expect(summaries[1]).toEqual(summaries[0]);
    expect(summaries[2]).toEqual(summaries[0]);
    const expected = tables(files[2]);
    expect((expected.search_docs as unknown[]).length).toBeGreaterThan(20);
    expect(tables(files[0])).toEqual(expected);
    expect(tables(files[1])).toEqual(expected);
  });

  it('change nothing when a problem turns up after guides were written', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'g.db');
    const store = createSqliteGuideStore(file);
    try {
      await importContentFolder(store, path.join(FIXTURES, 'content-tiny'));
      const before = tables(file);
      // The sample guides, then one broken file last: the import has written the others when it meets it.
      const folder = path.join(dir, 'next');
      cpSync(SAMPLE, folder, { recursive: true });
      writeFileSync(path.join(folder, 'guides', 'zz-broken.md'), '---\ntitle: [unclosed\n---\nBroken.\n');
      const result = await importContentFolder(store, folder, { workers: 2 });
      expect(result.summary).toBeUndefined();
      expect(result.problems.map((p) => p.file)).toEqual(['guides/zz-broken.md']);
      expect(tables(file)).toEqual(before);
      // And the store is usable afterwards: the same folder without the broken file imports.
      rmSync(path.join(folder, 'guides', 'zz-broken.md'));
      expect((await importContentFolder(store, folder, { workers: 2 })).summary?.created).toHaveLength(38);
    } finally {
      await store.close();
    }
  });
});
