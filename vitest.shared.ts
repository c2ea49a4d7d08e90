import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { pageBundleVitePlugin } from './packages/admin-api/build/page-bundle.ts';

/**
 * The global setup by path, from source: vitest loads it before the
 * `@oxicloud/source` condition applies, so a package specifier would need
 * test-support's dist (a fresh clone's first test run would fail).
 */
const GLOBAL_SETUP = fileURLToPath(new URL('./packages/test-support/src/global-setup.ts', import.meta.url));

/**
 * The private test harness, by path: published packages do not list it in
 * their devDependencies (nothing private in a packed package.json, and no
 * cycle through @oxicloud/migrations, which applies their schemas).
 */
const testSupport = (file: string) =>
  fileURLToPath(new URL(`./packages/test-support/src/${file}`, import.meta.url));

/**
 * The vitest config every package shares: sources of sibling packages are
 * resolved through the `@oxicloud/source` export condition (no build needed
 * for in-repo tests), and one Postgres server is started per run by the
 * test-support global setup when `withDatabase` is set.
 */
export function packageTestConfig(
  options: { withDatabase?: boolean; testTimeout?: number; typecheck?: boolean } = {},
) {
  return defineConfig({
    // The admin page's script is imported as its bundled text (`?page-bundle`), as the build does.
    plugins: [pageBundleVitePlugin()],
    resolve: {
      conditions: ['@oxicloud/source'],
      alias: [{ find: /^@oxicloud\/test-support$/, replacement: testSupport('index.ts') }],
    },
    ssr: { resolve: { conditions: ['@oxicloud/source'] } },
    test: {
      include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
      // The JSON report feeds the one-line total that `pnpm test` prints at the end.
      reporters: ['default', 'json'],
      outputFile: { json: './.test-results/vitest.json' },
      server: { deps: { inline: [/@oxicloud\//] } },
      globalSetup: options.withDatabase ? [GLOBAL_SETUP] : [],
      testTimeout: options.testTimeout ?? 30_000,
      hookTimeout: 180_000,
      typecheck: {
        // OXICLOUD_TEST_TYPECHECK=0 (pass 2 of `pnpm test`): the type tests touch no database and ran in pass 1.
        // An env var, not `-- --typecheck.enabled=false`: turbo hashes arguments after `--` into every task,
        // builds included, so pass 2 rebuilt every package.
        enabled: (options.typecheck ?? false) && process.env['OXICLOUD_TEST_TYPECHECK'] !== '0',
        include: ['src/**/*.test-d.ts', 'test/**/*.test-d.ts'],
      },
    },
  });
}
