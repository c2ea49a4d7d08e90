import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminClient,
  adminToken,
  type CliProcess,
  type DatabaseCopy,
  type FinishedRun,
  findingSet,
  freePort,
  killHard,
  type RunJson,
  referenceRuns,
  scratchDir,
  seedOxiCloudConsistencyFaults,
  serverEnv,
  sleep,
  startServer,
} from './fault-support.js';

/** Kills of the server process (issue 5: 20 random moments). */
const KILLS = Number(process.env['OXICLOUD_FAULT_KILLS'] ?? 20);

/** The consistency jobs in batch order, each with params that make it span many checkpoints (≈2.5 s). */
const JOBS: Array<{ name: string; params: { batch_size: number; throttle_ms: number } }> = [
  { name: 'drives_consistency', params: { batch_size: 3, throttle_ms: 160 } },
  { name: 'folders_consistency', params: { batch_size: 20, throttle_ms: 120 } },
  { name: 'files_consistency', params: { batch_size: 40, throttle_ms: 100 } },
  { name: 'storage_consistency', params: { batch_size: 15, throttle_ms: 120 } },
];

function stat(stats: Record<string, unknown>, key: string): number {
  return Number(stats[key] ?? 0);
}

/** Big-endian byte order of two hex cursors (`null` = before everything). */
function cursorNotBefore(later: string | null, earlier: string | null): boolean {
  if (earlier === null) return true;
  if (later === null) return false;
  return Buffer.compare(Buffer.from(later, 'hex'), Buffer.from(earlier, 'hex')) >= 0;
}

/**
 * Issue 5 (kill -9) and issue 8 (fault tests): a real `oxijobs serve` process
 * runs the four consistency checks in turn on a generated OxiCloud-shaped dataset with faults,
 * and is killed with SIGKILL at random moments. After each kill it starts
 * again: the boot sweep has paused the interrupted run ('server restart
 * mid-run'), a trigger resumes it from its last checkpoint. The findings at the
 * end equal those of an uninterrupted reference run on a copy of the same
 * database; no finding is recorded twice (`stats.findings` = finding rows),
 * and at most one batch is replayed per kill (`scanned_count` bound, cursors
 * never move back).
 */
describe('kill -9 of the server during a consistency batch', () => {
  let db: TestDatabase;
  let reference: DatabaseCopy;
  let dir: ReturnType<typeof scratchDir>;
  let server: CliProcess | undefined;
  let expected = new Map<string, FinishedRun>();
  /** Resources of the seeded faults storage_consistency reports (both directions: objects without rows, rows without bytes). */
  let storageFaults = 0;

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    dir = scratchDir('fault-kill');
    const report = await seedOxiCloudConsistencyFaults(db.pool, dir.path, 2);
    storageFaults = report.faults
      // The batch here is not deep: bytes replaced under a key are a deep run's to find.
      .filter((f) => f.expect.check === 'storage_consistency' && !('deepOnly' in f.expect))
      .reduce((n, f) => n + f.resourceIds.length, 0);
    // The reference: the same database, copied before anything ran, checked without interruption in-process.
    const ref = await referenceRuns(
      db.name,
      dir.path,
      JOBS.map((job) => ({ name: job.name, params: { ...job.params, throttle_ms: 0 } })),
    );
    reference = ref.reference;
    expected = ref.runs;
    for (const [job, run] of expected) expect(run.status, job).toBe('Completed');
  }, 180_000);

  afterAll(async () => {
    if (server) await killHard(server);
    await reference?.drop();
    await db?.drop();
    dir?.remove();
  });

  it(`${KILLS} kills at random moments: same findings as the uninterrupted run, none twice, ≤ one batch replayed per kill`, async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = serverEnv({ databaseUrl: db.url, dataDir: dir.path, httpPort: port });
    server = await startServer(env);
    const api = adminClient(base, await adminToken(db.pool));
    const kills = new Map<string, number>(JOBS.map((j) => [j.name, 0]));
    const attempts = new Map<string, number>();
    const runIds = new Map<string, string>();
    let lastSeen = new Map<string, RunJson>();
    let jobIndex = 0;
    let killed = 0;
    let pausedBySweep = 0;

    while (jobIndex < JOBS.length) {
      const job = JOBS[jobIndex]!;
      const started = await api.trigger(job.name, job.params);
      const known = runIds.get(job.name);
      if (known === undefined) {
        runIds.set(job.name, started.run_id);
        expect(started.resumed).toBe(false);
      } else {
        // Resumed after a kill: the same run, from its checkpoint.
        expect(started).toMatchObject({ run_id: known, resumed: true });
      }
      // The kills are spread over the batch: each job gets its share, then runs to completion.
      const share = Math.ceil(KILLS / JOBS.length);
      if (killed >= KILLS || (attempts.get(job.name) ?? 0) >= share) {
        await api.waitFor(job.name, started.run_id, ['Completed'], 120_000);
        jobIndex++;
        continue;
      }
      await sleep(50 + Math.floor(Math.random() * 450));
      await killHard(server);
      killed++;
      attempts.set(job.name, (attempts.get(job.name) ?? 0) + 1);
      server = await startServer(env);
      const after = await api.run(job.name, started.run_id);
      const before = lastSeen.get(job.name);
      if (before) {
        // Progress never goes back: the checkpoint is the only resume point.
        expect(stat(after.stats, 'scanned_count')).toBeGreaterThanOrEqual(
          stat(before.stats, 'scanned_count'),
        );
        expect(
          cursorNotBefore(after.cursor_hex, before.cursor_hex),
          `${after.cursor_hex} < ${before.cursor_hex}`,
        ).toBe(true);
      }
      lastSeen = new Map(lastSeen).set(job.name, after);
      if (after.status === 'Completed') {
        jobIndex++;
        continue;
      }
      expect(after.status).toBe('Paused');
      expect(after.error_message).toBe('server restart mid-run');
      expect(after.pause_reason).toBe('server restart mid-run');
      kills.set(job.name, (kills.get(job.name) ?? 0) + 1);
      pausedBySweep++;
    }

    expect(killed).toBe(KILLS);
    expect(pausedBySweep, 'kills that landed mid-run').toBeGreaterThanOrEqual(Math.floor(KILLS / 2));
    for (const job of JOBS) {
      const runId = runIds.get(job.name)!;
      const run = await api.run(job.name, runId);
      expect(run.status, job.name).toBe('Completed');
      const ref = expected.get(job.name)!;
      const { total, findings } = await api.findings(job.name, runId);
      const got = findingSet(findings);
      // Same findings as the uninterrupted run (kind, severity, resource).
      expect(got, job.name).toEqual(ref.findings);
      // None recorded twice, and the run's own count agrees with its rows.
      expect(new Set(got).size, job.name).toBe(got.length);
      expect(total, job.name).toBe(got.length);
      expect(stat(run.stats, 'findings'), `${job.name} stats.findings`).toBe(got.length);
      // At most one batch replayed per kill: scanned rows ≤ the reference's + kills × batch_size.
      const scanned = stat(run.stats, 'scanned_count');
      const refScanned = stat(ref.stats, 'scanned_count');
      expect(scanned, `${job.name} scanned_count`).toBeGreaterThanOrEqual(refScanned);
      expect(scanned, `${job.name} scanned_count`).toBeLessThanOrEqual(
        refScanned + (kills.get(job.name) ?? 0) * job.params.batch_size,
      );
    }
    // The dataset's faults were found at all (the comparison is not between two empty sets).
    expect([...expected.values()].reduce((n, r) => n + r.findings.length, 0)).toBeGreaterThanOrEqual(20);
    // Both storage directions: objects without rows and rows whose bytes are gone, each seeded fault's resources.
    expect(storageFaults).toBeGreaterThanOrEqual(4);
    expect(expected.get('storage_consistency')?.findings).toHaveLength(storageFaults);
    console.info(
      'kill -9 test: kills per job',
      Object.fromEntries(kills),
      'findings per job',
      Object.fromEntries([...expected].map(([k, v]) => [k, v.findings.length])),
    );
  }, 300_000);
});
