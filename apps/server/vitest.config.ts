import { configDefaults, defineConfig, mergeConfig } from 'vitest/config';
import { packageTestConfig } from '../../vitest.shared.ts';

/**
 * Files whose Postgres is not the test run's: they start their own (the
 * embedded default, the outage and crash tests' stoppable server) or use none. The
 * second pass of `pnpm test` (Testcontainers Postgres 15) leaves them out:
 * it would only run them again against the same embedded server.
 */
const OWN_POSTGRES = [
  'test/fault-postgres-outage.test.ts',
  'test/fault-postgres-crash.test.ts',
  'test/embedded-default.test.ts',
  'test/docs-links.test.ts',
];
const containerPass = process.env['OXICLOUD_TEST_POSTGRES'] === 'testcontainers';

// The process tests spawn `node dist/cli.js`: build it first when it is stale (test/build-server.ts).
export default defineConfig(
  mergeConfig(
    packageTestConfig({ withDatabase: true, testTimeout: 120_000 }),
    defineConfig({
      test: {
        globalSetup: ['./test/build-server.ts'],
        ...(containerPass ? { exclude: [...configDefaults.exclude, ...OWN_POSTGRES] } : {}),
      },
    }),
  ),
);
