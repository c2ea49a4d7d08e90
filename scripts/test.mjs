#!/usr/bin/env node
// `pnpm test`: build, lint and every test suite through turbo (one task at a
// time: the suites start Postgres servers, browsers and child processes),
// then one closing line with the totals of every vitest run.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const workspaces = ['packages', 'apps', 'tests'].flatMap((dir) =>
  existsSync(join(root, dir)) ? readdirSync(join(root, dir)).map((name) => join(root, dir, name)) : [],
);
workspaces.push(join(root, 'migrations'));
const reports = workspaces.map((dir) => join(dir, '.test-results', 'vitest.json'));
for (const report of reports) rmSync(report, { force: true });

// The browser test needs Debian's chromium: install it (as root, with apt) when it is missing.
if (!existsSync('/usr/bin/chromium')) {
  spawnSync('bash', [join(root, 'scripts', 'setup-system.sh')], { stdio: 'inherit' });
}

const run = spawnSync(
  'pnpm',
  ['exec', 'turbo', 'run', 'build', 'lint', 'test', '--concurrency=1', ...process.argv.slice(2)],
  { cwd: root, stdio: 'inherit', env: { TURBO_TELEMETRY_DISABLED: '1', ...process.env } },
);

let passed = 0;
let failed = 0;
let skipped = 0;
for (const report of reports) {
  if (!existsSync(report)) continue;
  const r = JSON.parse(readFileSync(report, 'utf8'));
  passed += r.numPassedTests ?? 0;
  failed += r.numFailedTests ?? 0;
  skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
}
console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
// A failed test fails the run even if a runner's exit code said otherwise.
process.exit(run.status !== 0 ? (run.status ?? 1) : failed > 0 ? 1 : 0);
