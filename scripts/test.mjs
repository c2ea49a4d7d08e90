#!/usr/bin/env node
// `pnpm test`: two passes through turbo, then the timing table of each pass
// (per package; scripts/test-timings.mjs) and one closing line with the
// totals of every vitest run.
//
// 1. build, lint and every test file; the database tests on embedded
//    Postgres 18 (OXICLOUD_TEST_POSTGRES=embedded);
// 2. every test file that sends SQL to the test run's Postgres, again, on
//    Testcontainers Postgres 15 (OXICLOUD_TEST_SCOPE=postgres; the rule is in
//    packages/test-support/src/test-plan.ts): a dockerd of this run's own and
//    a local image (scripts/test-container-runtime.sh; root on Debian),
//    started in the background while pass 1 runs and stopped afterwards.
//    Where that cannot be, one line says why and the run has pass 1 only.
//
// Inside a package, test files run in parallel (vitest.shared.ts). Each pass
// builds first, two turbo tasks at a time (OXICLOUD_TEST_CONCURRENCY overrides
// it), then runs the server's suite beside every other package's, one lane each.
//
// `--pass=embedded` or `--pass=containers` runs one of them; other arguments
// go to turbo in pass 1 (and then there is no pass 2: turbo filters add up).
// TEST_DATABASE_URL set: pass 1 runs on it, and there is no pass 2.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  collectFailures,
  collectTimings,
  formatTimings,
  reportPath,
  workspaceDirs,
} from './test-timings.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const runtimeScript = join(root, 'scripts', 'test-container-runtime.sh');
const SERVER = '@oxicloud/server';
const workspaces = workspaceDirs();

// The packages whose vitest config starts the test-support global setup (a Postgres server).
const databasePackages = workspaces
  .filter((dir) => {
    const config = join(dir, 'vitest.config.ts');
    return (
      existsSync(config) &&
      /withDatabase:\s*true|test-support\/global-setup|global-setup\.ts/.test(readFileSync(config, 'utf8'))
    );
  })
  .map((dir) => ({ dir, name: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name }));

const args = process.argv.slice(2);
const only = args.find((a) => a.startsWith('--pass='))?.slice('--pass='.length);
const turboArgs = args.filter((a) => !a.startsWith('--pass='));
if (only !== undefined && only !== 'embedded' && only !== 'containers') {
  console.error(`test: --pass=${only} is not a pass; use --pass=embedded or --pass=containers`);
  process.exit(2);
}
const concurrency = process.env.OXICLOUD_TEST_CONCURRENCY ?? '2';
if (!/^[1-9]\d?$/.test(concurrency)) {
  console.error(
    `test: OXICLOUD_TEST_CONCURRENCY=${concurrency} must be a whole number from 1 to 99 (turbo tasks at once)`,
  );
  process.exit(2);
}

function totals() {
  const t = { passed: 0, failed: 0, skipped: 0, failedFiles: 0 };
  for (const dir of workspaces) {
    const report = reportPath(dir);
    if (!existsSync(report)) continue;
    const r = JSON.parse(readFileSync(report, 'utf8'));
    t.passed += r.numPassedTests ?? 0;
    t.failed += r.numFailedTests ?? 0;
    // A file whose beforeAll threw fails no test of its own: count the file too (vitest's
    // numFailedTestSuites counts describe blocks as well, so the files are counted here).
    t.failedFiles += (r.testResults ?? []).filter((f) => f.status === 'failed').length;
    t.skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  }
  return t;
}
const clearReports = () => {
  for (const dir of workspaces) rmSync(reportPath(dir), { force: true });
};
/** Keeps a pass's reports (the next pass overwrites them) for its timing table and `test-timings.mjs --dir`. */
function saveReports(pass) {
  const saved = join(root, '.test-results', `pass-${pass}`);
  rmSync(saved, { recursive: true, force: true });
  mkdirSync(saved, { recursive: true });
  for (const dir of workspaces) {
    if (existsSync(reportPath(dir))) copyFileSync(reportPath(dir), reportPath(dir, saved));
  }
  return saved;
}
const line = (t) =>
  `${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped${t.failedFiles > 0 ? ` (${t.failedFiles} test files failed)` : ''}`;

const children = new Set();
/**
 * The turbo tasks that failed (`<package>#<task>`), from turbo's own lines:
 * `… WARNING  command finished with error` under `--continue`, `ERROR  run
 * failed` otherwise. A failed lint or build leaves no test report, so the
 * closing "what failed" list names it from here.
 */
const failedTasks = new Set();
const FAILED_TASK = /^(\S+#[\w:-]+):\s+(?:WARNING\s+command finished with error|ERROR\s+command)/;
function run(command, commandArgs, env) {
  return new Promise((resolve) => {
    const child = spawn(command, commandArgs, { cwd: root, stdio: ['inherit', 'pipe', 'pipe'], env });
    children.add(child);
    for (const [from, to] of [
      [child.stdout, process.stdout],
      [child.stderr, process.stderr],
    ]) {
      let rest = '';
      from.on('data', (chunk) => {
        to.write(chunk);
        const lines = (rest + chunk.toString('utf8')).split('\n');
        rest = lines.pop() ?? '';
        for (const l of lines) {
          const m = FAILED_TASK.exec(l.trim());
          if (m?.[1]) failedTasks.add(m[1]);
        }
      });
    }
    child.on('exit', (code, signal) => {
      children.delete(child);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

/** The failed turbo tasks seen since the last call, as "what failed" lines of pass `pass` (a test task's tests are listed too). */
function takeFailedTasks(pass) {
  const out = [...failedTasks]
    .sort()
    .map((task) => `pass ${pass}: turbo task ${task} failed (its lines above)`);
  failedTasks.clear();
  return out;
}

/**
 * First every `build` the tasks need (two at a time), then the tests in two
 * lanes side by side: the server's suite in one, every other package's lint
 * and tests one after another in the other. The server's files mostly wait
 * on processes and Postgres, and so do the other suites: side by side they
 * keep both cores busy (measured: pass 2 in 355 s instead of 433 s). The
 * lanes run with `--only`, so neither restores or rebuilds a `dist` the
 * other is reading. `othersWidth`: how many packages the other lane runs at
 * once. With turbo arguments of the caller's own, one turbo run as asked.
 */
async function turboInLanes(tasks, filters, env, othersWidth = '1') {
  // `--continue`: a package that fails does not stop the packages after it in its lane (every
  // report is written, and the closing lines name every failure).
  const turbo = (taskList, extra, width = concurrency) =>
    run('pnpm', ['exec', 'turbo', 'run', ...taskList, `--concurrency=${width}`, ...extra], env);
  if (turboArgs.length > 0) return turbo(tasks, turboArgs);
  const built = await turbo(['build'], filters);
  if (built !== 0) return built;
  // Every build is done: the server's test setup need not ask turbo again (build-server.ts).
  env = { ...env, OXICLOUD_TEST_BUILT: '1' };
  // One Postgres for the pass, shared by every package's vitest run (a server start per package was
  // ~5 s embedded and ~30 s in a container, a dozen times a pass).
  const shared = env.TEST_DATABASE_URL ? undefined : await startSharedPostgres(env);
  if (shared?.error) {
    console.log(`\ntest: the pass's shared Postgres did not start: ${shared.error}`);
    return 1;
  }
  if (shared) env = { ...env, [SHARED_POSTGRES_ENV]: shared.line };
  const rest = tasks.filter((t) => t !== 'build');
  const others =
    filters.length > 0 ? filters.filter((f) => f !== `--filter=${SERVER}`) : ['--filter=!' + SERVER];
  const serverToo = filters.length === 0 || filters.includes(`--filter=${SERVER}`);
  try {
    const [serverCode, othersCode] = await Promise.all([
      serverToo ? turbo(rest, ['--only', '--continue', `--filter=${SERVER}`], '1') : Promise.resolve(0),
      others.length > 0 ? turbo(rest, ['--only', '--continue', ...others], othersWidth) : Promise.resolve(0),
    ]);
    return serverCode || othersCode;
  } finally {
    await shared?.stop();
  }
}

/** The variable the packages' global setup reads the shared server from (packages/test-support/src/shared-postgres.ts). */
const SHARED_POSTGRES_ENV = 'OXICLOUD_TEST_POSTGRES_SHARED';

/**
 * Starts packages/test-support's shared-postgres-main.js (built by the pass's build stage) with the pass's
 * environment: `{ line, stop }` once it printed its JSON line, `{ error }` if it exited first.
 */
function startSharedPostgres(env) {
  return new Promise((resolve) => {
    const script = join(root, 'packages', 'test-support', 'dist', 'shared-postgres-main.js');
    const child = spawn(process.execPath, [script], { cwd: root, env, stdio: ['pipe', 'pipe', 'inherit'] });
    children.add(child);
    const exited = new Promise((r) => child.on('exit', r));
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const newline = out.indexOf('\n');
      if (newline === -1) return;
      const line = out.slice(0, newline);
      console.log(`test: ${JSON.parse(line).description}`);
      resolve({
        line,
        stop: async () => {
          child.stdin.end();
          await exited;
          children.delete(child);
        },
      });
    });
    child.on('exit', (code) => {
      children.delete(child);
      resolve({ error: `shared-postgres-main.js exited with ${code} (lines above)` });
    });
  });
}

// System packages: chromium for the browser test, docker.io and debootstrap for pass 2.
const commandMissing = (name) =>
  spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status !== 0;
if (!existsSync('/usr/bin/chromium') || ['dockerd', 'debootstrap'].some(commandMissing)) {
  spawnSync('bash', [join(root, 'scripts', 'setup-system.sh')], { stdio: 'inherit' });
}

const baseEnv = { TURBO_TELEMETRY_DISABLED: '1', ...process.env };
const hasUrl = Boolean(process.env.TEST_DATABASE_URL);
const summary = [];
const tables = [];
const failures = [];
let status = 0;
const all = { passed: 0, failed: 0, skipped: 0, failedFiles: 0 };
const add = (t) => {
  all.passed += t.passed;
  all.failed += t.failed;
  all.failedFiles += t.failedFiles;
  all.skipped += t.skipped;
};
const runStarted = Date.now();

// Pass 2's container runtime starts in the background while pass 1 runs (its
// first start builds an image: minutes spent waiting on the Debian mirror).
const skipContainers =
  only === 'embedded'
    ? 'embedded'
    : hasUrl
      ? 'TEST_DATABASE_URL is set (both passes would use it)'
      : turboArgs.length > 0 && only === undefined
        ? `pnpm test was given turbo arguments (${turboArgs.join(' ')})`
        : undefined;
let runtime;
let runtimeStarted = false;
const stopRuntime = () => {
  if (runtimeStarted) spawnSync('bash', [runtimeScript, 'stop', String(process.pid)], { stdio: 'inherit' });
};
if (skipContainers === undefined) {
  runtimeStarted = true;
  runtime = new Promise((resolve) => {
    const started = spawn('bash', [runtimeScript, 'start', String(process.pid)], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    started.stdout.on('data', (c) => {
      out += c;
    });
    started.stderr.on('data', (c) => {
      err += c;
    });
    started.on('exit', (code) => resolve({ status: code ?? 1, stdout: out, stderr: err }));
  });
}
let typecheckChild;
const onSignal = (signal) => {
  for (const child of children) child.kill(signal);
  typecheckChild?.kill(signal);
  stopRuntime();
  process.exit(1);
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

if (only !== 'containers') {
  clearReports();
  const env = hasUrl ? baseEnv : { ...baseEnv, OXICLOUD_TEST_POSTGRES: 'embedded' };
  const what = hasUrl ? 'TEST_DATABASE_URL' : 'embedded Postgres 18';
  console.log(`\ntest: pass 1 — build, lint and every test file; database tests on ${what}\n`);
  const started = Date.now();
  // One type check of every workspace at once (tsconfig.all.json: each shared file once; the
  // packages' lint tasks are biome and publint), beside the first turbo stage.
  const typecheck = new Promise((resolve) => {
    const tsc = spawn('pnpm', ['--silent', 'run', 'typecheck:all'], { cwd: root, stdio: 'inherit', env });
    typecheckChild = tsc;
    tsc.on('exit', (c) => resolve(c ?? 1));
  });
  const code = await turboInLanes(['build', 'lint', 'test'], [], env);
  const typed = await typecheck;
  if (typed !== 0) {
    console.log('\ntest: the type check of every workspace (pnpm typecheck:all) failed (lines above)');
  }
  if (code !== 0 || typed !== 0) status = code || typed;
  const t = totals();
  add(t);
  const seconds = Math.round((Date.now() - started) / 1000);
  summary.push(`pass 1 (${what}): ${line(t)} in ${seconds} s`);
  const saved = saveReports(1);
  tables.push({ title: `pass 1 (${what}), ${seconds} s`, packages: collectTimings(saved) });
  failures.push(...collectFailures(saved).map((f) => `pass 1: ${f}`));
  failures.push(...takeFailedTasks(1));
  if (typed !== 0) failures.push('pass 1: the type check of every workspace (pnpm typecheck:all)');
}

if (only !== 'embedded') {
  if (skipContainers !== undefined) {
    summary.push(`pass 2 (Testcontainers Postgres 15) skipped: ${skipContainers}`);
  } else {
    if (only !== 'containers') console.log('\ntest: waiting for the container runtime of pass 2\n');
    const start = await runtime;
    process.stderr.write(start.stderr);
    if (start.status === 3) {
      summary.push(
        'pass 2 (Testcontainers Postgres 15) skipped: no container runtime of its own here (line above)',
      );
    } else if (start.status !== 0) {
      summary.push(
        'pass 2 (Testcontainers Postgres 15) failed: its container runtime did not start (lines above)',
      );
      status = status || 1;
    } else {
      // Only this run's children see the runtime: other test runs on this machine keep the embedded path.
      const runtimeEnv = Object.fromEntries(
        start.stdout
          .split('\n')
          .filter((l) => l.includes('='))
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
      try {
        clearReports();
        const names = databasePackages.map((p) => p.name);
        console.log(
          `\ntest: pass 2 — the test files that use the test Postgres, on Testcontainers Postgres 15 (${names.join(', ')})\n`,
        );
        const started = Date.now();
        const env = {
          ...baseEnv,
          ...runtimeEnv,
          OXICLOUD_TEST_POSTGRES: 'testcontainers',
          OXICLOUD_TEST_SCOPE: 'postgres',
          TESTCONTAINERS_RYUK_DISABLED: 'true',
          // Type tests touch no database: pass 1 has them (an env var keeps the builds' cache).
          OXICLOUD_TEST_TYPECHECK: '0',
        };
        // The server's lane is short here (its process files run in pass 1 only: FIRST_PASS_ONLY in
        // test-plan.ts), so the other lane runs two packages at once.
        const code = await turboInLanes(
          ['build', 'test'],
          names.map((n) => `--filter=${n}`),
          env,
          '2',
        );
        if (code !== 0) status = status || code;
        const t = totals();
        add(t);
        const seconds = Math.round((Date.now() - started) / 1000);
        summary.push(`pass 2 (Testcontainers Postgres 15): ${line(t)} in ${seconds} s`);
        const saved = saveReports(2);
        tables.push({
          title: `pass 2 (Testcontainers Postgres 15), ${seconds} s`,
          packages: collectTimings(saved),
        });
        failures.push(...collectFailures(saved).map((f) => `pass 2: ${f}`));
        failures.push(...takeFailedTasks(2));
      } finally {
        stopRuntime();
      }
    }
  }
}
process.off('SIGINT', onSignal);
process.off('SIGTERM', onSignal);

// Where the time went (node scripts/test-timings.mjs --dir .test-results/pass-1 --files 20 for the files).
for (const { title, packages } of tables) {
  console.log(`\ntest timings — ${title}\n${formatTimings(packages)}`);
}
if (failures.length > 0) {
  console.log(`\nwhat failed (${failures.length}; the reports are in .test-results/pass-*):`);
  for (const failure of failures.slice(0, 30)) console.log(`  ${failure}`);
  if (failures.length > 30) console.log(`  … and ${failures.length - 30} more`);
}
console.log(`\n${summary.join('\n')}`);
console.log(`${line(all)} in ${Math.round((Date.now() - runStarted) / 1000)} s`);
// A failed test fails the run even if a runner's exit code said otherwise.
process.exit(status !== 0 ? status : all.failed + all.failedFiles > 0 ? 1 : 0);
