/**
 * Node 24 aborts the process (`Assertion failed: (env) != nullptr`) when V8 collects a
 * better-sqlite3 Statement or Database outside a JS context. The store keeps them all reachable;
 * this test drops thousands of stores' worth of objects and forces collection pressure. On Node 24
 * (CI runs the whole suite there too) it kills its worker if anything we open can be collected.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { openSqliteDatabase } from '../../../src/store/sqlite/sqlite-database.js';
import { createSqliteGuideStore } from '../../../src/store/sqlite/sqlite-guide-store.js';
import { makeTempDir } from '../../helpers/build-test-app.js';
import { makeContent, makeGuide } from '../../helpers/guide-factory.js';

it('survives garbage collection of stores, statements and pragmas it no longer uses', async () => {
  const dir = makeTempDir('guides-native-');
  try {
    for (let i = 0; i < 30; i += 1) {
      const store = createSqliteGuideStore(path.join(dir, `g${i}.db`));
      await store.importContent(makeContent([makeGuide({ slug: `g${i}` })]));
      for (let j = 0; j < 100; j += 1) await store.ping();
      await store.close();
    }
    const db = openSqliteDatabase(':memory:');
    for (let i = 0; i < 5000; i += 1) db.prepare('SELECT ? AS x').get(i);
    db.close();
    // Allocation pressure, so V8 collects what the stores above left unreachable; surviving it is the test.
    let sink: object | undefined;
    for (let i = 0; i < 2_000_000; i += 1) sink = { i, previous: i % 1000 === 0 ? undefined : sink };
    sink = undefined;
    const last = createSqliteGuideStore(path.join(dir, 'last.db'));
    await expect(last.ping()).resolves.toBeUndefined();
    await last.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
