import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const serverDir = fileURLToPath(new URL('..', import.meta.url));
const repoRoot = join(serverDir, '..', '..');
const BUILT = Symbol.for('oxicloud.server.test-build');

/**
 * Vitest global setup of the server's process tests: they spawn
 * `node dist/cli.js`, so the server and every package it imports must be
 * built from the current sources. Always asks turbo, which hashes the
 * sources of the server and of each dependency: a build that is current is
 * a cache hit (a second or two), a change anywhere in what the server
 * imports rebuilds what it touches. Under `pnpm test` the pass has just
 * built everything (`OXICLOUD_TEST_BUILT=1`), so this does nothing; a direct
 * `vitest run` gets the same guarantee from turbo. Once per vitest process (the serial files' project loads it too).
 */
export default function setup(): void {
  const scope = globalThis as typeof globalThis & { [BUILT]?: true };
  if (scope[BUILT]) return;
  // `pnpm test` builds every package before any test starts and says so: no
  // turbo run here then, which could restore a `dist` another suite reads.
  if (process.env['OXICLOUD_TEST_BUILT'] === '1') return;
  const build = spawnSync(
    'pnpm',
    ['exec', 'turbo', 'run', 'build', '--filter=@oxicloud/server...', '--output-logs=errors-only'],
    { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' } },
  );
  if (build.status !== 0) {
    throw new Error(`building the server for the process tests failed:\n${build.stdout}\n${build.stderr}`);
  }
  scope[BUILT] = true;
}
