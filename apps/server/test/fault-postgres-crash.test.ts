import type { OxiCloudFaultName } from '@oxicloud/dataset';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForStatus } from './cli-process.js';
import {
  adminClient,
  adminToken,
  type CliProcess,
  findingSet,
  freePort,
  killHard,
  scratchDir,
  seedOxiCloud,
  serverEnv,
  sleep,
  startServer,
} from './fault-support.js';
import { ownPostgres } from './own-postgres.js';

const FILES = 'files_consistency';
/** Small batches, a little throttle: hundreds of checkpoints, a run of several seconds. */
const PARAMS = { batch_size: 10, throttle_ms: 15 };
const FAULTS: OxiCloudFaultName[] = [
  'live_file_under_trashed_folder',
  'missing_blob_row',
  'blob_size_mismatch',
];

/**
 * Issue 22: checkpoints commit with `synchronous_commit = off` (they do not
 * wait for the disk). Killing the SERVER cannot test that (its commits are in
 * Postgres); crashing POSTGRES can: `pg_ctl stop -m immediate` (SIGQUIT to the
 * postmaster) mid-run drops whatever WAL was not written yet, i.e. the last
 * checkpoints and, in the same transactions, their batches' findings. The
 * test Postgres writes its WAL as late as it may (`wal_writer_delay` 10 s), so
 * each crash loses checkpoints the server saw commit.
 *
 * - A crash, Postgres back at once: the run notices the loss
 *   (`recoverable.checkpoint_lost`), goes on from the stored cursor by itself,
 *   and completes.
 * - A crash, a cancel while Postgres is down: the run lands Paused at the
 *   STORED cursor (not the lost one it had seen), a trigger resumes it.
 *
 * Both end with exactly the findings of an uninterrupted run, none twice, on a
 * generated OxiCloud-shaped dataset.
 */
describe('Postgres crashes (immediate stop) in the middle of a run', () => {
  let dir: ReturnType<typeof scratchDir>;
  let postgres: Awaited<ReturnType<typeof ownPostgres>>;
  let pool: pg.Pool;
  let server: CliProcess | undefined;
  let base: string;
  let api: ReturnType<typeof adminClient>;
  let token: string;
  /** The findings the seeded faults give files_consistency (`kind severity resource_id`, as {@link findingSet}). */
  let seeded: string[] = [];

  beforeAll(async () => {
    dir = scratchDir('fault-crash');
    postgres = await ownPostgres(dir.path, {
      name: 'crash',
      // fsync off is harmless here (the OS does not crash); the WAL writer waits as long as it may.
      flags: ['-c', 'fsync=off', '-c', 'wal_writer_delay=10000ms'],
    });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = await startServer(
      serverEnv({
        databaseUrl: postgres.url,
        dataDir: dir.path,
        httpPort: port,
        extra: { OXICLOUD_DATABASE_RETRY_SECONDS: '60' },
      }),
    );
    pool = new pg.Pool({ connectionString: postgres.url, max: 2 });
    pool.on('error', () => undefined);
    // The server migrated the fresh database at boot (OxiCloud's domain); the dataset comes after.
    // 25 users and 5 shared drives of 33 files: about the 1000 files the run scans in batches of 10.
    const report = await seedOxiCloud(pool, dir.path, {
      users: 25,
      filesPerDrive: 33,
      foldersPerDrive: { min: 3, max: 6 },
      trashedFolderShare: 0.2,
      seed: 2022,
      faults: FAULTS,
      faultsPerKind: 4,
    });
    seeded = report.faults
      .filter((f) => f.expect.check === FILES)
      .flatMap((f) => f.resourceIds.map((id) => `${f.expect.kind} ${f.expect.severity} ${id}`))
      .sort();
    token = await adminToken(pool);
    api = adminClient(base, token);
  }, 180_000);

  afterAll(async () => {
    if (server) await killHard(server);
    await pool?.end().catch(() => undefined);
    await postgres?.server.stop().catch(() => undefined);
    dir?.remove();
  });

  /** Scanned rows of the run as Postgres has them now (committed; maybe not on disk). */
  async function scanned(runId: string): Promise<number> {
    const { rows } = await pool.query(
      `SELECT (stats->>'scanned_count')::bigint AS n FROM jobs.recoverable_runs WHERE id = $1`,
      [runId],
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** Waits until `batches` more batches are checkpointed. */
  async function progress(runId: string, batches: number): Promise<number> {
    const from = await scanned(runId);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const now = await scanned(runId);
      if (now >= from + batches * PARAMS.batch_size) return now;
      if (Date.now() > deadline) throw new Error(`${FILES} made no progress (${now} rows)`);
      await sleep(10);
    }
  }

  /** Crashes Postgres, runs `whileDown`, starts it again (crash recovery); the server's /healthz is 200 again. */
  async function crash(whileDown: () => Promise<void> = async () => undefined): Promise<void> {
    await pool.end();
    await postgres.crash();
    await whileDown();
    await postgres.server.start();
    pool = new pg.Pool({ connectionString: postgres.url, max: 2 });
    pool.on('error', () => undefined);
    await waitForStatus(`${base}/healthz`, 200, { process: server, timeoutMs: 30_000 });
  }

  function lostCheckpointLines(runId: string): number {
    return (server?.stdout() ?? '')
      .split('\n')
      .filter((l) => l.includes('"event":"recoverable.checkpoint_lost"') && l.includes(runId)).length;
  }

  async function expectCleanFindings(runId: string): Promise<void> {
    const run = await api.run(FILES, runId);
    const { total, findings } = await api.findings(FILES, runId);
    const got = findingSet(findings);
    // None recorded twice, and the run's own count agrees with its rows.
    expect(new Set(got).size).toBe(got.length);
    expect(total).toBe(got.length);
    expect(Number(run.stats['findings'] ?? 0), 'stats.findings').toBe(got.length);

    const clean = await api.trigger(FILES, { ...PARAMS, throttle_ms: 0 });
    expect(clean.resumed).toBe(false);
    await api.waitFor(FILES, clean.run_id, ['Completed'], 60_000);
    const want = findingSet((await api.findings(FILES, clean.run_id)).findings);
    // The seeded faults were found at all (the comparison is not between two empty sets).
    expect(seeded.length).toBeGreaterThanOrEqual(8);
    expect(want).toEqual(expect.arrayContaining(seeded));
    expect(got).toEqual(want);
    // No batch skipped: every row scanned at least once (a pause or a resume past a lost checkpoint would skip
    // the lost batches, and their scanned rows with them), and at most the replays' worth more.
    const refScanned = Number((await api.run(FILES, clean.run_id)).stats['scanned_count']);
    const runScanned = Number(run.stats['scanned_count']);
    expect(runScanned, 'scanned_count').toBeGreaterThanOrEqual(refScanned);
    expect(runScanned, 'scanned_count').toBeLessThan(refScanned + 40 * PARAMS.batch_size);
  }

  it('Postgres back at once: the run replays the lost checkpoints by itself and completes with the clean findings', async () => {
    const started = await api.trigger(FILES, PARAMS);
    let lostRows = 0;
    for (let i = 0; i < 2; i++) {
      const seen = await progress(started.run_id, 4);
      await crash();
      // Checkpoints the server (and this test) saw commit did not survive: what the test is about.
      lostRows += Math.max(0, seen - (await scanned(started.run_id)));
    }
    const done = await api.waitFor(FILES, started.run_id, ['Completed', 'Failed', 'Paused'], 90_000);
    expect(done.status, JSON.stringify(done)).toBe('Completed');
    expect(done.error_message).toBeNull();
    expect(lostRows + lostCheckpointLines(started.run_id), 'checkpoints lost in the crashes').toBeGreaterThan(
      0,
    );
    expect(lostCheckpointLines(started.run_id), 'the run noticed the loss').toBeGreaterThan(0);
    await expectCleanFindings(started.run_id);
  }, 240_000);

  it('a cancel while Postgres is down: Paused at the STORED cursor, resumed by a trigger to the clean findings', async () => {
    const started = await api.trigger(FILES, PARAMS);
    const seen = await progress(started.run_id, 6);
    let cancelStatus: number | undefined;
    await crash(async () => {
      await sleep(1_000);
      const res = await fetch(`${base}/api/admin/jobs/${FILES}/cancel`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      }).catch(() => undefined);
      cancelStatus = res?.status;
    });
    expect(cancelStatus, 'the cancel sent while Postgres was down').toBe(200);
    const landed = await api.waitFor(FILES, started.run_id, ['Paused', 'Completed', 'Failed'], 30_000);
    expect(landed.status, JSON.stringify(landed)).toBe('Paused');
    expect(landed.pause_reason).toBe('cancel requested');
    const lostRows = Math.max(0, seen - (await scanned(started.run_id)));
    console.info(`crash with a cancel: ${lostRows} scanned row(s) of lost checkpoints`);

    const again = await api.trigger(FILES);
    expect(again).toMatchObject({ run_id: started.run_id, resumed: true });
    const done = await api.waitFor(FILES, started.run_id, ['Completed', 'Failed'], 90_000);
    expect(done.status, JSON.stringify(done)).toBe('Completed');
    await expectCleanFindings(started.run_id);
    expect(server?.child.exitCode).toBeNull();
  }, 240_000);
});
