#!/usr/bin/env node
// `pnpm oxijobs <command>` from the repo root: builds the server and what it
// depends on (a turbo cache hit when nothing changed), then runs the CLI.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const build = spawnSync(
  'pnpm',
  ['exec', 'turbo', 'run', 'build', '--filter=@oxicloud/server...', '--output-logs=errors-only'],
  { cwd: root, encoding: 'utf8', env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' } },
);
if (build.status !== 0) {
  process.stderr.write(build.stdout + build.stderr);
  console.error('oxijobs: building the server failed (output above)');
  process.exit(build.status ?? 1);
}
const cli = spawnSync(process.execPath, [`${root}/apps/server/bin/oxijobs.js`, ...process.argv.slice(2)], {
  stdio: 'inherit',
});
process.exit(cli.status ?? 1);
