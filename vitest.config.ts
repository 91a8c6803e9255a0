import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

const common = { testTimeout: 30_000, hookTimeout: 60_000, pool: 'forks' as const };

// Files that replace a module with vi.mock need a module registry of their own: a module that an
// earlier file imported in the same process would stay as that file had it.
const ISOLATED = ['test/store/sqlite/search/sqlite-search-pool.test.ts'];

export default defineConfig({
  test: {
    // One test process a CPU (Vitest's own default leaves one CPU out, and so ran the suite one
    // file at a time on a two-CPU machine), and test files share their processes (isolate: false)
    // instead of loading the app's modules afresh, file after file: the suite takes about half as
    // long. Nothing in a test file may outlive it: no environment changes, timers or process
    // listeners left behind (the contract tally is written and reset per file).
    maxWorkers: availableParallelism(),
    projects: [
      {
        test: {
          ...common,
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...ISOLATED],
          isolate: false,
          // Every response a test injects is checked against /openapi.json; the teardown prints the count.
          globalSetup: ['test/helpers/contract-global-setup.ts', 'test/helpers/temp-global-setup.ts'],
          setupFiles: ['test/helpers/contract-setup.ts'],
        },
      },
      {
        test: { ...common, name: 'isolated', include: ISOLATED, isolate: true, globalSetup: ['test/helpers/temp-global-setup.ts'] },
      },
    ],
  },
});
