import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const serverDir = fileURLToPath(new URL('..', import.meta.url));
const repoRoot = join(serverDir, '..', '..');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function cliBuiltAfterSources(): boolean {
  try {
    return statSync(join(serverDir, 'dist', 'cli.js')).mtimeMs >= newestMtime(join(serverDir, 'src'));
  } catch {
    return false;
  }
}

/**
 * Vitest global setup of the server's process tests: they spawn
 * `node dist/cli.js`, so the server and what it depends on must be built.
 * `turbo run test` builds first (apps/server/turbo.json); a direct
 * `vitest run` builds here when dist/cli.js is missing or older than src/.
 */
export default function setup(): void {
  if (cliBuiltAfterSources()) return;
  const build = spawnSync(
    'pnpm',
    ['exec', 'turbo', 'run', 'build', '--filter=@oxicloud/server...', '--output-logs=errors-only'],
    { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' } },
  );
  if (build.status !== 0) {
    throw new Error(`building the server for the process tests failed:\n${build.stdout}\n${build.stderr}`);
  }
}
