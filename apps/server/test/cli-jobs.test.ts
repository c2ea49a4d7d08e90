import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OXICLOUD_FAULT_EXPECTATIONS } from '@oxicloud/dataset';
import { createTestDatabase, freePort, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliProcess, cleanEnv, runCli, startCli, waitForStatus } from './cli-process.js';

/**
 * `oxijobs jobs …` as an operator runs it: a real `oxijobs serve` process on a
 * fresh test database with a small seeded OxiCloud dataset (faults included),
 * and the CLI as a child process talking HTTP to it.
 */

/** The faults seeded (two resources each): what files_consistency, folders_consistency, blobs_consistency and drives_consistency find. */
const SEEDED_FAULTS = [
  'missing_blob_row',
  'blob_size_mismatch',
  'live_folder_under_trashed_parent',
  'blob_ref_count_drift',
  'drive_used_bytes_drift',
];

/** The findings each check must report, by check, as the seed's "Expected findings" lines give them. */
function expectedCounts(seedStdout: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const [, check, ids] of seedStdout.matchAll(/^ {2}\w+: (\w+) reports \w+ \([^)]*\) on (.+)$/gm)) {
    counts[check!] = (counts[check!] ?? 0) + ids!.split(', ').length;
  }
  return counts;
}
describe('oxijobs jobs (against a running server)', () => {
  let db: TestDatabase;
  let dataDir: string;
  let serverEnv: Record<string, string>;
  let server: CliProcess;
  let base: string;
  let env: Record<string, string>;
  /** Findings per check the seeded faults give. */
  let counts: Record<string, number>;

  const jobs = (args: string[], extra: Record<string, string> = {}) =>
    runCli(['jobs', ...args], { ...env, ...extra });
  const oneLine = (text: string) => text.trimEnd().split('\n');

  beforeAll(async () => {
    db = await createTestDatabase();
    const httpPort = await freePort();
    base = `http://127.0.0.1:${httpPort}`;
    dataDir = join(tmpdir(), `oxijobs-cli-jobs-${process.pid}-${httpPort}`);
    mkdirSync(dataDir, { recursive: true });
    serverEnv = cleanEnv({
      DATABASE_URL: db.url,
      OXICLOUD_DATA_DIR: dataDir,
      OXICLOUD_HTTP_PORT: String(httpPort),
      OXICLOUD_LOG_LEVEL: 'warn',
      // On demand only: a periodic storage_reconcile would fix the seeded drive drift before the checks see it.
      OXICLOUD_STORAGE_USAGE_RECONCILE_INTERVAL_SECONDS: '0',
    });
    // The first boot makes "admin" (no admin yet); the seed's own admins come after.
    server = startCli(['serve'], serverEnv);
    await waitForStatus(`${base}/healthz`, 200, { process: server, timeoutMs: 60_000 });
    // 10 personal and 2 shared drives of 8 files and 50 folders each: some 600 folders for folders_consistency to walk.
    const seed = await runCli(
      [
        'seed',
        '--users',
        '10',
        '--files-per-user',
        '8',
        '--folders-per-drive-min',
        '50',
        '--folders-per-drive-max',
        '50',
        '--faults',
        SEEDED_FAULTS.join(','),
        '--faults-per-kind',
        '2',
      ],
      serverEnv,
    );
    expect(seed.code, seed.stderr).toBe(0);
    counts = expectedCounts(seed.stdout);
    expect(Object.keys(counts).sort()).toEqual([
      'blobs_consistency',
      'drives_consistency',
      'files_consistency',
      'folders_consistency',
    ]);
    const token = await runCli(['token', '--user', 'admin'], serverEnv);
    expect(token.code, token.stderr).toBe(0);
    env = cleanEnv({
      OXICLOUD_ADMIN_URL: base,
      OXICLOUD_ADMIN_TOKEN: token.stdout.trim().split('\n').at(-1)!,
    });
  });

  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await db?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('lists the jobs as an aligned table, and --json is the API document', async () => {
    const table = await jobs(['list']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stderr).toBe('');
    const lines = oneLine(table.stdout);
    expect(lines[0]).toMatch(/^NAME\s+KIND\s+SCHEDULE\s+STATE\s+NEXT RUN\s+LAST RUN\s+LATEST RUN$/);
    // Ticks are slots of the database clock (a daily job at 00:00 UTC): the next one is within a day.
    expect(table.stdout).toMatch(
      /\ntrash_cleanup\s+periodic\s+every 1d\s+idle\s+(in \d+[hms]|just now)\s+never\s+-\n/,
    );
    expect(table.stdout).toMatch(/\nfiles_consistency\s+recoverable\s+on demand\s+idle/);
    const json = await jobs(['list', '--json']);
    expect(json.code).toBe(0);
    const listed = JSON.parse(json.stdout) as Array<{ name: string; kind: string }>;
    const api = await fetch(`${base}/api/admin/jobs`, {
      headers: { authorization: `Bearer ${env['OXICLOUD_ADMIN_TOKEN']}` },
    });
    expect(listed.map((j) => j.name)).toEqual(
      ((await api.json()) as Array<{ name: string }>).map((j) => j.name),
    );
    expect(listed.map((j) => j.name)).toEqual(
      expect.arrayContaining(['trash_cleanup', 'consistency_batch', 'files_consistency']),
    );
    // the table has one row per job
    expect(lines).toHaveLength(listed.length + 1);
  });

  it('triggers a periodic job and prints its outcome (exit 0)', async () => {
    const result = await jobs(['trigger', 'trash_cleanup', '--force']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^trash_cleanup: ok, count \d+ \{.*"folders":\d+/);
    const json = await jobs(['trigger', 'grant_cleanup', '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, outcome: { kind: 'ok' } });
  });

  it('prints API errors as one line with their code (exit 1)', async () => {
    const unknown = await jobs(['trigger', 'nope']);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(oneLine(unknown.stderr)).toEqual([
      expect.stringMatching(/^oxijobs: JOB_NOT_FOUND: no job named .nope./),
    ]);
    const cancel = await jobs(['cancel', 'drives_consistency']);
    expect(cancel.code).toBe(1);
    expect(oneLine(cancel.stderr)).toEqual([expect.stringMatching(/^oxijobs: NO_ACTIVE_RUN: /)]);
    const periodic = await jobs(['cancel', 'trash_cleanup']);
    expect(periodic.code).toBe(1);
    expect(periodic.stderr).toMatch(/^oxijobs: NOT_RECOVERABLE: /);
    const badRun = await jobs(['run', 'files_consistency', 'not-a-uuid']);
    expect(badRun.code).toBe(1);
    expect(badRun.stderr).toMatch(/^oxijobs: INVALID_RUN_ID: /);
    const badToken = await jobs(['list'], { OXICLOUD_ADMIN_TOKEN: 'a.b.c' });
    expect(badToken.code).toBe(1);
    expect(oneLine(badToken.stderr)).toEqual([
      expect.stringMatching(
        /^oxijobs: UNAUTHENTICATED: .*mint a fresh token with `oxijobs token --user admin`$/,
      ),
    ]);
    const params = await jobs(['trigger', 'files_consistency', '--params', '{"batch_size":-1}']);
    expect(params.code).toBe(1);
    expect(params.stderr).toMatch(/^oxijobs: INVALID_PARAMS: .*batch_size/);
  });

  it('refuses bad values and a missing token with one line and exit 2, sending nothing', async () => {
    const cases: Array<[string[], RegExp]> = [
      [
        ['runs', 'files_consistency', '--limit', 'abc'],
        /--limit <n>' argument 'abc' is invalid\. use a whole number from 1 to 500/,
      ],
      [
        ['findings', 'files_consistency', 'x', '--severity', 'Foo'],
        /Allowed choices are DataLoss, Reclaimable, Regenerable, Drift/,
      ],
      [
        ['trigger', 'files_consistency', '--params', 'not json'],
        /--params <json>' argument 'not json' is invalid\. use a JSON object/,
      ],
      [['run', 'files_consistency', 'x', '--interval', '0'], /use a number of seconds from 0\.1 to 3600/],
      [['trigger'], /missing required argument 'name'/],
      [['list', '--url', 'ftp://x'], /--url="ftp:\/\/x" must be an http:\/\/ or https:\/\/ URL/],
    ];
    for (const [args, expected] of cases) {
      const result = await jobs(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(oneLine(result.stderr), args.join(' ')).toEqual([expect.stringMatching(/^oxijobs: /)]);
      expect(result.stderr).toMatch(expected);
    }
    const noToken = await runCli(['jobs', 'list'], cleanEnv({ OXICLOUD_ADMIN_URL: base }));
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toBe(
      'oxijobs: no admin token: pass --token <token> or set OXICLOUD_ADMIN_TOKEN; mint one with `oxijobs token --user admin`\n',
    );
    const withFlag = await runCli(
      ['jobs', 'list', '--token', env['OXICLOUD_ADMIN_TOKEN']!, '--url', base],
      cleanEnv({}),
    );
    expect(withFlag.code).toBe(0);
  });

  it('says the server is not reachable at the URL (exit 1)', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const result = await jobs(['list', '--url', url]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `oxijobs: the server is not reachable at ${url} (connection refused); is \`oxijobs serve\` running? set --url or OXICLOUD_ADMIN_URL\n`,
    );
  });

  it('a periodic job refuses --params and --deep, saying it takes --force only (exit 2, nothing triggered)', async () => {
    const params = await jobs(['trigger', 'trash_cleanup', '--params', '{"batch_size":5}']);
    expect(params.code).toBe(2);
    expect(params.stderr).toContain('trash_cleanup is a periodic job: it takes --force only');
    const deep = await jobs(['trigger', 'dedup_gc', '--deep']);
    expect(deep.code).toBe(2);
    expect(deep.stderr).toContain('dedup_gc is a periodic job: it takes --force only');
    const batch = await jobs(['trigger', 'consistency_batch', '--params', '{}']);
    expect(batch.code).toBe(2);
    expect(batch.stderr).toContain('consistency_batch is a periodic job: it takes --force and --deep only');
    const listed = JSON.parse((await jobs(['list', '--json'])).stdout) as Array<{
      name: string;
      last_outcome: unknown;
    }>;
    // Nothing was triggered: dedup_gc (on demand, triggered nowhere else here) never ran.
    expect(listed.find((j) => j.name === 'dedup_gc')?.last_outcome ?? null).toBeNull();
  });

  it('--deep on a job without a deep mode is refused by the CLI and by the server (4xx, nothing started)', async () => {
    const runsOf = async () =>
      (JSON.parse((await jobs(['runs', 'grants_consistency', '--json'])).stdout) as unknown[]).length;
    const before = await runsOf();
    const deep = await jobs(['trigger', 'grants_consistency', '--deep']);
    expect(deep.code).toBe(2);
    // The jobs named are the ones whose declaration has a deep mode (the listing's supports_deep).
    expect(deep.stderr).toMatch(/grants_consistency has no deep mode; --deep is for jobs with a deep mode: /);
    expect(deep.stderr).toContain('storage_consistency');
    expect(deep.stderr).toContain('consistency_batch');
    expect(deep.stderr).not.toMatch(/--deep is for jobs with a deep mode: [^\n]*grants_consistency/);
    // The server refuses it too, whoever asks.
    const res = await fetch(`${base}/api/admin/jobs/grants_consistency/trigger?deep=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env['OXICLOUD_ADMIN_TOKEN']}` },
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('INVALID_PARAMS');
    expect(body.error.message).toMatch(/^grants_consistency has no deep mode: deep=true is refused; /);
    expect(await runsOf()).toBe(before);
  });

  it('trigger --follow of a recoverable job: progress lines, exit 0 on completion; runs, run and findings show it', async () => {
    const result = await jobs(['trigger', 'files_consistency', '--follow', '--interval', '0.2']);
    expect(result.code, result.stderr).toBe(0);
    const lines = oneLine(result.stdout);
    const runId = /^files_consistency: started run (\S+)$/.exec(lines[0]!)?.[1];
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);
    expect(lines.at(-2)).toMatch(/^files_consistency {2}completed {2}[\d,]+\/[\d,]+ \(100\.0%\)/);
    expect(lines.at(-1)).toMatch(
      new RegExp(
        `^files_consistency: run ${runId} completed in .*: [\\d,]+ processed, count ${counts['files_consistency']}$`,
      ),
    );

    const runs = await jobs(['runs', 'files_consistency', '--limit', '5']);
    expect(runs.code).toBe(0);
    expect(runs.stdout).toMatch(new RegExp(`\\n${runId}\\s+completed\\s+(just now|\\d+s ago)\\s+`));
    const runsJson = JSON.parse((await jobs(['runs', 'files_consistency', '--json'])).stdout) as Array<{
      run_id: string;
    }>;
    expect(runsJson[0]?.run_id).toBe(runId);

    const detail = await jobs(['run', 'files_consistency', runId!]);
    expect(detail.code).toBe(0);
    expect(detail.stdout).toMatch(/^run\s+\S+\njob\s+files_consistency\nstatus\s+completed\n/);

    const findings = await jobs(['findings', 'files_consistency', runId!]);
    expect(findings.code).toBe(0);
    expect(findings.stdout).toMatch(new RegExp(`^run ${runId}: ${counts['files_consistency']} findings\\n`));
    expect(findings.stdout).toMatch(/DataLoss\s+missing_blob\s+2\n/);
    const dataLoss = await jobs([
      'findings',
      'files_consistency',
      runId!,
      '--severity',
      'DataLoss',
      '--json',
    ]);
    const page = JSON.parse(dataLoss.stdout) as { findings: Array<{ severity: string }> };
    expect(page.findings.length).toBeGreaterThan(0);
    expect(page.findings.every((f) => f.severity === 'DataLoss')).toBe(true);

    // The count table follows the filters too.
    const dataLossTable = await jobs(['findings', 'files_consistency', runId!, '--severity', 'DataLoss']);
    expect(dataLossTable.code).toBe(0);
    expect(dataLossTable.stdout).toMatch(/DataLoss\s+missing_blob\s+2\n/);
    expect(dataLossTable.stdout).not.toMatch(/blob_size_mismatch|Drift/);
    const byKind = await jobs(['findings', 'files_consistency', runId!, '--kind', 'blob_size_mismatch']);
    expect(byKind.stdout).not.toMatch(/missing_blob/);
    const unknownKind = await jobs(['findings', 'files_consistency', runId!, '--kind', 'nope']);
    expect(unknownKind.code).toBe(2);
    expect(unknownKind.stdout).toBe('');
    expect(unknownKind.stderr).toMatch(
      /unknown finding kind "nope" for files_consistency; allowed: [^\n]*missing_blob, blob_size_mismatch/,
    );
    const unknownSeverity = await jobs(['findings', 'files_consistency', runId!, '--severity', 'Bad']);
    expect(unknownSeverity.code).toBe(2);
    expect(unknownSeverity.stderr).toMatch(/Allowed choices are DataLoss, Reclaimable, Regenerable, Drift/);

    const again = await jobs(['run', 'files_consistency', runId!, '--follow']);
    expect(again.code).toBe(0);
  });

  it('Ctrl-C stops following (exit 130, the run goes on); a follower exits 3 when another process cancels; resume exits 0', async () => {
    const waitFor = async (proc: CliProcess, pattern: RegExp): Promise<void> => {
      const deadline = Date.now() + 30_000;
      while (!pattern.test(proc.stdout()) && proc.child.exitCode === null && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(proc.stdout()).toMatch(pattern);
    };
    const first = startCli(
      [
        'jobs',
        'trigger',
        'folders_consistency',
        '--params',
        // Some 60 batches of 0.4 s: the run outlives the three CLI processes started while it goes on, also
        // on a loaded machine (at 25 batches a CI run ended before the cancel came).
        '{"batch_size":10,"throttle_ms":400}',
        '--follow',
        '--interval',
        '0.2',
      ],
      env,
    );
    await waitFor(first, /folders_consistency {2}running/);
    const runId = /started run (\S+)/.exec(first.stdout())?.[1];
    first.child.kill('SIGINT');
    expect(await first.exited).toBe(130);
    expect(first.stderr()).toBe(
      `oxijobs: stopped following; the run goes on (\`oxijobs jobs run folders_consistency ${runId} --follow\` follows it again)\n`,
    );

    const follower = startCli(
      ['jobs', 'run', 'folders_consistency', runId!, '--follow', '--interval', '0.2'],
      env,
    );
    await waitFor(follower, /folders_consistency {2}running {2}[1-9]/);
    const cancel = await jobs(['cancel', 'folders_consistency']);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(cancel.stdout).toBe(
      `folders_consistency: cancel requested for run ${runId}; it pauses at its next batch boundary\n`,
    );
    expect(await follower.exited).toBe(3);
    expect(oneLine(follower.stdout()).at(-1)).toMatch(
      /^folders_consistency: run \S+ paused after .*; `oxijobs jobs trigger folders_consistency` resumes it$/,
    );

    const resumed = await jobs([
      'trigger',
      'folders_consistency',
      '--params',
      '{"batch_size":50}',
      '--follow',
      '--interval',
      '0.2',
    ]);
    expect(resumed.code, resumed.stderr).toBe(0);
    // The resume keeps the stored params, and says so: which it uses, which asked for were not applied.
    expect(resumed.stdout).toMatch(
      new RegExp(
        `^folders_consistency: resumed run ${runId}\nfolders_consistency: the resumed run keeps its stored params \\{[^\n]*"batch_size":10[^\n]*\\}; not applied: \\{"batch_size":50\\}`,
      ),
    );
    expect(oneLine(resumed.stdout).at(-1)).toMatch(
      new RegExp(`completed in .*count ${counts['folders_consistency']}$`),
    );
  });

  it('consistency_batch --follow shows each check and exits 0 by the batch outcome', async () => {
    // The checks are the catalog's, as the listing shows it: every job declaring a check, by declared order.
    const listing = JSON.parse((await jobs(['list', '--json'])).stdout) as Array<{
      name: string;
      check: { order: number } | null;
    }>;
    const checks = listing
      .flatMap((j) => (j.check === null ? [] : [{ name: j.name, order: j.check.order }]))
      .sort((a, b) => a.order - b.order || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((c) => c.name);
    // Among them every check a seeded fault makes report.
    const faulted = SEEDED_FAULTS.map(
      (f) => OXICLOUD_FAULT_EXPECTATIONS[f as keyof typeof OXICLOUD_FAULT_EXPECTATIONS].check,
    );
    expect(checks).toEqual(expect.arrayContaining(faulted));
    const result = await jobs(['trigger', 'consistency_batch', '--follow', '--interval', '0.2']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^consistency_batch: accepted; following its checks\n/);
    for (const check of checks) {
      expect(result.stdout).toMatch(new RegExp(`\\n {2}${check}: run \\S+ completed in `));
    }
    // What the seeded faults leave for each check to count, the others find nothing. blobs_consistency's
    // count is more than its seeded ref-count drift here: after the `trash_cleanup --force` above, two
    // blobs a remaining file still names are at ref_count 0 (run alone, the batch gives exactly the seeded 2);
    // and the purge left the manifests of the purged files counting them (OxiCloud's bulk paths never
    // touch a manifest): manifests_consistency counts those.
    const afterPurge = new Set(['blobs_consistency', 'manifests_consistency']);
    const children = checks.map((c) => `${c} ok ${afterPurge.has(c) ? '\\d+' : (counts[c] ?? 0)}`).join(', ');
    expect(oneLine(result.stdout).at(-1)).toMatch(
      new RegExp(`^consistency_batch: ok, count ${checks.length}; ${children}$`),
    );
    const listed = await jobs(['list']);
    expect(listed.stdout).toMatch(
      /consistency_batch\s+periodic\s+on demand\s+idle\s+-\s+ok (just now|\d+s ago)/,
    );
  });
});
