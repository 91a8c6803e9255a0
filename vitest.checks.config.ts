import { defineConfig } from 'vitest/config';

// Statistical checks that measure time: kept out of `npm test` (machine noise must not fail a
// change) and run on their own by CI (`npm run test:checks`).
export default defineConfig({
  test: {
    include: ['test/checks/**/*.check.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['test/helpers/temp-global-setup.ts'],
  },
});
