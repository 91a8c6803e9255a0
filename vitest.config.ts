import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Every response a test injects is checked against /openapi.json; the teardown prints the count.
    globalSetup: ['test/helpers/contract-global-setup.ts'],
    setupFiles: ['test/helpers/contract-setup.ts'],
  },
});
