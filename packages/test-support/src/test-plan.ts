import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/**
 * The test plan: which test files run in parallel, which run alone, which
 * run again on the second Postgres major, and which make the quick loop.
 * The one place these rules live (vitest.shared.ts applies them; docs/testing.md
 * explains them).
 *
 * Files run in parallel by default: each has a database of its own (copied
 * from the migrated template), its own ports and its own scratch folders, so
 * files share nothing but the Postgres server and the CPU.
 */

/**
 * Files that run one at a time, after every parallel file of their package
 * has finished, with the reason. Repo-relative paths.
 *
 * A file belongs here when what it asserts is a bound on time that a busy
 * CPU would break rather than the code (a lease measured in seconds), not
 * merely because it kills processes or stops a Postgres: those are the
 * file's own processes and its own Postgres, which no other file sees.
 */
export const SERIAL_FILES: Readonly<Record<string, string>> = {
  'apps/server/test/cluster-ticks-process.test.ts':
    'three servers, 1 s slots and a 3 s lease: it asserts that no slot is missed and that a run is never ownerless for a lease, bounds that starved CPUs would break',
  'apps/server/test/fault-multi-node.test.ts':
    'a killed node’s run must be paused within lease + janitor + 2 s (3 s and 1 s leases): a bound on time that starved CPUs would break',
};

/**
 * Files that send SQL to the test Postgres but run in pass 1 only, with the
 * reason. Pass 2 is there for the SQL on OxiCloud's Postgres major; these
 * files assert what a process does (its command line, signals, crashes and
 * resumes, mail, an HTTP document, a packed tarball) and send the statements
 * of the packages under them, whose own files run in pass 2. Repo-relative
 * paths. A server file that asserts SQL of its own (the catalog it reads,
 * the roles it grants, the rows it refuses) stays in pass 2.
 */
const PROCESS_SQL_IS_THE_PACKAGES =
  'the SQL it sends is the packages’ statements, which their own files run in pass 2';
export const FIRST_PASS_ONLY: Readonly<Record<string, string>> = {
  'apps/server/test/cli-help.test.ts': `the command line's parsing, help and exit codes; ${PROCESS_SQL_IS_THE_PACKAGES}`,
  'apps/server/test/cli-jobs.test.ts': `the CLI's output over the admin API; ${PROCESS_SQL_IS_THE_PACKAGES}`,
  'apps/server/test/pnpm-start.test.ts': `signals through the pnpm start wrappers; ${PROCESS_SQL_IS_THE_PACKAGES}`,
  'apps/server/test/serve-process.test.ts': `the server process's configuration, tokens and signals; ${PROCESS_SQL_IS_THE_PACKAGES}`,
  'apps/server/test/graceful-shutdown.test.ts': `a shutdown on SIGTERM; ${PROCESS_SQL_IS_THE_PACKAGES}`,
  'apps/server/test/alerts-reach-someone.test.ts': `mail delivery through SMTP; ${PROCESS_SQL_IS_THE_PACKAGES}`,
  'apps/server/test/openapi-document.test.ts': `the OpenAPI document the server serves; ${PROCESS_SQL_IS_THE_PACKAGES}`,
  'apps/server/test/fault-admin-fuzz.test.ts': `hostile HTTP input to the process; ${PROCESS_SQL_IS_THE_PACKAGES}`,
  'apps/server/test/fault-kill-consistency.test.ts': `kill -9 and resume (a killed client's transaction rolls back the same on both majors); ${PROCESS_SQL_IS_THE_PACKAGES}`,
  'apps/server/test/fault-kill-dedup-gc.test.ts': `kill -9 and resume; ${PROCESS_SQL_IS_THE_PACKAGES}`,
  'apps/server/test/fault-kill-repair.test.ts': `kill -9 and resume; ${PROCESS_SQL_IS_THE_PACKAGES}`,
  'apps/server/test/fault-kill-migration.test.ts': `kill -9 mid-migration; the migrations themselves run in pass 2 (migrations/test); ${PROCESS_SQL_IS_THE_PACKAGES}`,
  'apps/server/test/fault-failpoint-checkpoint.test.ts': `a crash at each failpoint and the resume; ${PROCESS_SQL_IS_THE_PACKAGES}`,
  'apps/server/test/oxicloud-domain-process.test.ts': `the server process on OxiCloud's domain; the checks' SQL is tests/integration's oxicloud-domain-checks, in pass 2`,
  'apps/server/test/cluster-ticks-process.test.ts': `three server processes and their slots; the lease SQL is @oxicloud/cluster's, in pass 2`,
  'apps/server/test/fault-multi-node.test.ts': `killed and stopped nodes; the lease SQL is @oxicloud/cluster's, in pass 2`,
  'apps/server/test/oxicloud-queues.test.ts': `the queue monitor's mail and gauges in a server process; the queue SQL is @oxicloud/storage's oxi-queue-backlog, in pass 2`,
  'tests/tarballs/test/tarballs.test.ts': `the packed packages in a consumer project; ${PROCESS_SQL_IS_THE_PACKAGES}`,
};

/**
 * Whether a test file sends SQL to the test run's Postgres (the server the
 * test-support global setup starts or points at): its own text creates a
 * test database or reads the server's URL, or a helper module it imports
 * (relative imports, followed through) creates a test database. Files that
 * start a Postgres of their own (the outage and crash tests) or use none do
 * not; the second pass of `pnpm test` leaves them out, since it would only
 * run them again against the same server or on no server at all.
 */
export function usesTestPostgres(file: string, root: string): boolean {
  const path = join(root, file);
  if (TEST_POSTGRES.test(readFileSync(path, 'utf8'))) return true;
  return relativeImports(path).some((helper) => helperCreatesDatabase(helper, new Set([path])));
}

const TEST_POSTGRES =
  /\bcreate(Test|OxiCloud)Database\(|\bADMIN_URL_ENV\]|\bTEST_DATABASE_URL\b|\bprepareTemplate\(|\bstartTestPostgres\(/;

function helperCreatesDatabase(path: string, seen: Set<string>): boolean {
  if (seen.has(path)) return false;
  seen.add(path);
  let source: string;
  try {
    source = readFileSync(path, 'utf8');
  } catch {
    return false;
  }
  if (/\bcreateTestDatabase\(/.test(source)) return true;
  return relativeImports(path).some((next) => helperCreatesDatabase(next, seen));
}

/** The `.ts` files a module imports by relative path (`./x.js` is `./x.ts` in the sources). */
function relativeImports(path: string): string[] {
  const source = readFileSync(path, 'utf8');
  const found: string[] = [];
  for (const match of source.matchAll(/\bfrom\s+['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const spec = match[1] as string;
    found.push(join(dirname(path), spec.replace(/\.js$/, '.ts')));
  }
  return found;
}

/**
 * A file of the second pass (`OXICLOUD_TEST_SCOPE=postgres`): it sends SQL to
 * the test run's Postgres ({@link usesTestPostgres}), is not in
 * {@link FIRST_PASS_ONLY} and is not a browser test. What a browser test
 * proves is the page; the server's SQL under it is run by the API tests,
 * which pass 2 has.
 */
export function inSecondPass(file: string, root: string): boolean {
  return (
    !(file in FIRST_PASS_ONLY) &&
    usesTestPostgres(file, root) &&
    !/from 'playwright-core'/.test(readFileSync(join(root, file), 'utf8'))
  );
}

/**
 * Whether a test file starts processes or a browser: `spawn` and the like,
 * the CLI helpers, s3rver, a Postgres of its own, Playwright. (An HTTP
 * listener inside the test's own process is not a process.)
 */
function startsProcesses(source: string): boolean {
  return /\b(spawn|spawnSync|execFile|execFileSync|fork|startCli|runCli|startServer|startS3rver|ownPostgres)\(|playwright|chromium/.test(
    source,
  );
}

/**
 * A file of the quick loop (`pnpm test:quick`): it touches no Postgres at
 * all and starts no process or browser. What is left is logic, tested
 * against ports, in-memory fakes and in-process listeners.
 */
export function isQuickFile(file: string, root: string): boolean {
  const source = readFileSync(join(root, file), 'utf8');
  return (
    !usesTestPostgres(file, root) &&
    !startsProcesses(source) &&
    !/\bdb\.pool\b|new pg\.(Pool|Client)\(/.test(source)
  );
}

/** Every `*.test.ts` under `dir`'s `src/` and `test/` (vitest's include), repo-relative to `root`. */
export function testFilesOf(dir: string, root: string): string[] {
  const found: string[] = [];
  const walk = (folder: string): void => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.name === 'node_modules' || entry.name === 'dist') continue;
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.test.ts')) found.push(relative(root, path));
    }
  };
  walk(join(dir, 'src'));
  walk(join(dir, 'test'));
  return found.sort();
}

/** The files of `files` (repo-relative) that `keep` keeps. */
export function filesWhere(
  files: readonly string[],
  root: string,
  keep: (file: string, root: string) => boolean,
): string[] {
  return files.filter((file) => keep(file, root));
}
