import { defineConfig } from 'vitest/config';

/**
 * `pnpm test:quick`: every package's own config as a project, in one vitest
 * process, with OXICLOUD_TEST_SCOPE=quick (scripts/test-quick.mjs sets it):
 * each config then keeps only the files that touch no Postgres and start no
 * process or browser (packages/test-support/src/test-plan.ts), and starts no
 * Postgres.
 */
export default defineConfig({
  test: {
    projects: [
      'packages/*/vitest.config.ts',
      'apps/*/vitest.config.ts',
      'tests/*/vitest.config.ts',
      'migrations/vitest.config.ts',
    ],
    reporters: ['default'],
  },
});
