import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { pageBundleVitePlugin } from './packages/admin-api/build/page-bundle.ts';
import {
  filesWhere,
  inSecondPass,
  isQuickFile,
  SERIAL_FILES,
  testFilesOf,
} from './packages/test-support/src/test-plan.ts';

/**
 * The global setup by path, from source: vitest loads it before the
 * `@oxicloud/source` condition applies, so a package specifier would need
 * test-support's dist (a fresh clone's first test run would fail).
 */
const GLOBAL_SETUP = fileURLToPath(new URL('./packages/test-support/src/global-setup.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('.', import.meta.url));

/**
 * The private test harness, by path: published packages do not list it in
 * their devDependencies (nothing private in a packed package.json, and no
 * cycle through @oxicloud/migrations, which applies their schemas).
 */
const testSupport = (file: string) =>
  fileURLToPath(new URL(`./packages/test-support/src/${file}`, import.meta.url));

/**
 * Which files a run takes (`OXICLOUD_TEST_SCOPE`, set by `pnpm test` and
 * `pnpm test:quick`): `all` (default), `postgres` (the second pass: the files
 * that send SQL to the test run's Postgres) or `quick` (no Postgres, no
 * process, no browser). The rules are in packages/test-support/src/test-plan.ts.
 */
export type TestScope = 'all' | 'postgres' | 'quick';
const SCOPES: readonly TestScope[] = ['all', 'postgres', 'quick'];

export function testScope(): TestScope {
  const value = process.env['OXICLOUD_TEST_SCOPE'] ?? 'all';
  if (!(SCOPES as readonly string[]).includes(value)) {
    throw new Error(`OXICLOUD_TEST_SCOPE=${value} is not a scope; use one of ${SCOPES.join(', ')}`);
  }
  return value as TestScope;
}

/**
 * How many test files of a package run at once. Files that mostly wait
 * (on Postgres, on child processes) can run more workers than there are
 * cores. `OXICLOUD_TEST_WORKERS` overrides every package's number.
 */
function workerCount(wanted: number | undefined): number {
  const env = process.env['OXICLOUD_TEST_WORKERS'];
  if (env !== undefined && env !== '') {
    const n = Number(env);
    if (!Number.isInteger(n) || n < 1 || n > 64) {
      throw new Error(`OXICLOUD_TEST_WORKERS=${env} must be a whole number from 1 to 64`);
    }
    return n;
  }
  return wanted ?? Math.max(2, availableParallelism());
}

/**
 * The vitest config every package shares: sources of sibling packages are
 * resolved through the `@oxicloud/source` export condition (no build needed
 * for in-repo tests), and one Postgres server is started per run by the
 * test-support global setup when `withDatabase` is set.
 *
 * `packageTestConfig(import.meta.url, { withDatabase: true })` in a package's vitest.config.ts.
 *
 * Test files run in parallel (`workers` at once; each has a database of its
 * own); the files of test-plan.ts's SERIAL_FILES run after them, one at a
 * time.
 */
export function packageTestConfig(
  /** The package's vitest.config.ts (`import.meta.url`): its folder holds the test files. */
  configUrl: string,
  options: {
    withDatabase?: boolean;
    testTimeout?: number;
    typecheck?: boolean;
    workers?: number;
    globalSetup?: string[];
  } = {},
) {
  const dir = fileURLToPath(new URL('.', configUrl));
  const scope = testScope();
  const all = testFilesOf(dir, REPO_ROOT);
  const selected =
    scope === 'postgres'
      ? filesWhere(all, REPO_ROOT, inSecondPass)
      : scope === 'quick'
        ? filesWhere(all, REPO_ROOT, isQuickFile)
        : all;
  const local = (files: string[]) => files.map((file) => relative(dir, join(REPO_ROOT, file)));
  const serial = local(selected.filter((file) => file in SERIAL_FILES));
  const parallel = local(selected.filter((file) => !(file in SERIAL_FILES)));
  // Type tests touch no database: the first pass and the quick loop have them, the second pass not.
  const typecheckOn =
    (options.typecheck ?? false) && scope !== 'postgres' && process.env['OXICLOUD_TEST_TYPECHECK'] !== '0';
  // One vitest process runs every package's quick files (vitest.quick.config.ts): one worker count for all.
  const maxWorkers = workerCount(scope === 'quick' ? undefined : options.workers);
  const typecheck = {
    // OXICLOUD_TEST_TYPECHECK=0 turns the type tests off. An env var, not
    // `-- --typecheck.enabled=false`: turbo hashes arguments after `--` into every task, builds included.
    enabled: typecheckOn,
    include: ['src/**/*.test-d.ts', 'test/**/*.test-d.ts'],
  };
  // The quick loop starts no Postgres and builds nothing: its files need neither.
  const setups =
    scope === 'quick'
      ? []
      : [...(options.withDatabase ? [GLOBAL_SETUP] : []), ...(options.globalSetup ?? [])];
  return defineConfig({
    // The admin page's script is imported as its bundled text (`?page-bundle`), as the build does.
    plugins: [pageBundleVitePlugin()],
    resolve: {
      conditions: ['@oxicloud/source'],
      alias: [{ find: /^@oxicloud\/test-support$/, replacement: testSupport('index.ts') }],
    },
    ssr: { resolve: { conditions: ['@oxicloud/source'] } },
    // The global setups (the test Postgres and its template database, the server's build) run in vitest's own
    // environment: from the sources too, so a fresh clone needs no build before `vitest run`, and a migration
    // changed in migrations/ is the one the template gets.
    environments: {
      __vitest__: { resolve: { conditions: ['@oxicloud/source', 'module', 'node', 'import', 'default'] } },
    },
    test: {
      // With serial files, the two projects hold the files (vitest concatenates a project's include to the root's).
      include: serial.length > 0 ? [] : parallel,
      // A scope may leave a package without files (pass 2 of a package whose files touch no Postgres).
      passWithNoTests: scope !== 'all',
      maxWorkers,
      // The JSON report feeds the totals and the timing table that `pnpm test` prints at the end.
      reporters: ['default', 'json'],
      outputFile: { json: './.test-results/vitest.json' },
      server: { deps: { inline: [/@oxicloud\//] } },
      globalSetup: setups,
      testTimeout: options.testTimeout ?? 30_000,
      hookTimeout: 180_000,
      typecheck,
      // Serial files: a second project of one worker, which vitest runs after the parallel files.
      ...(serial.length > 0
        ? {
            projects: [
              { extends: true, test: { name: 'parallel', include: parallel, maxWorkers } },
              {
                extends: true,
                test: { name: 'serial', include: serial, maxWorkers: 1, typecheck: { enabled: false } },
              },
            ],
          }
        : {}),
    },
  });
}
