/** The store contract against SQLite: a fresh database file per test, searching in the calling thread and in worker threads. */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { createSqliteGuideStore } from '../../../src/store/sqlite/sqlite-guide-store.js';
import { makeTempDir } from '../../helpers/build-test-app.js';
import { describeGuideStoreContract } from '../guide-store.contract.js';

for (const searchWorkers of [0, 2]) {
  describeGuideStoreContract(
    'sqlite',
    async () => {
      const dir = makeTempDir('guides-store-');
      const file = path.join(dir, 'guides.db');
      return {
        open: () => Promise.resolve(createSqliteGuideStore(file, { searchWorkers })),
        cleanup: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
    searchWorkers === 0 ? '' : `searches in ${searchWorkers} worker threads`,
  );
}
