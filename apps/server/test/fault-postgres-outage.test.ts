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
const FOLDERS = 'folders_consistency';
const PARAMS = { batch_size: 20, throttle_ms: 60 };
/** Folders are few (about a hundred): small, slow batches keep the run going through the outage. */
const FOLDER_PARAMS = { batch_size: 2, throttle_ms: 300 };
/**
 * The server's windows, small so the test is quick, in the order of the
 * defaults (10 s outage < 30 s lease < 60 s retry window < 130 s outage):
 * a 3 s outage < an 8 s lease < a 12 s retry window < a 24 s outage.
 */
const RETRY_MS = 12_000;
const WINDOWS = {
  OXICLOUD_DATABASE_RETRY_SECONDS: String(RETRY_MS / 1000),
  OXICLOUD_RUN_LEASE_SECONDS: '8',
  OXICLOUD_RUN_HEARTBEAT_SECONDS: '2',
  OXICLOUD_RUN_JANITOR_SECONDS: '1',
};
/** Shorter than the retry window (and the lease): the run rides it out. */
const SHORT_OUTAGE_MS = 3_000;
/** Longer than the retry window: the run gives up and lands Paused once Postgres is back. */
const LONG_OUTAGE_MS = Number(process.env['OXICLOUD_FAULT_LONG_OUTAGE_MS'] ?? 24_000);
const FAULTS: OxiCloudFaultName[] = [
  'live_file_under_trashed_folder',
  'missing_blob_row',
  'blob_size_mismatch',
];

/**
 * Issue 12: Postgres itself stops in the middle of runs (a real server
 * process, a real Postgres process). A lost connection is not a failure:
 *
 * - shorter than OXICLOUD_DATABASE_RETRY_SECONDS (60 s by default, 12 s
 *   here): the run retries its batch and goes on by itself to Completed; a
 *   cancel sent during the outage lands (Paused, "cancel requested") once
 *   Postgres is back.
 * - longer than it (and than the run's lease): the run lands Paused at its
 *   last checkpoint with "database unreachable" as soon as Postgres is back,
 *   never stuck Running.
 *
 * Every run, resumed by a trigger where it paused, finds exactly what an
 * uninterrupted run finds, on a generated OxiCloud-shaped dataset.
 */
describe('Postgres stopped in the middle of runs', () => {
  let dir: ReturnType<typeof scratchDir>;
  let postgres: Awaited<ReturnType<typeof ownPostgres>>;
  let pool: pg.Pool;
  let server: CliProcess | undefined;
  let base: string;
  let api: ReturnType<typeof adminClient>;
  /** Minted before any outage (minting reads auth.users). */
  let token: string;
  /** The findings the seeded faults give files_consistency (`kind severity resource_id`, as {@link findingSet}). */
  let seeded: string[] = [];

  async function outage(ms: number, during: () => Promise<void> = async () => undefined): Promise<void> {
    const downAt = Date.now();
    await postgres.server.stop();
    const degraded = (await waitForStatus(`${base}/healthz`, 503, { process: server, timeoutMs: 8_000 })) as {
      status: string;
    };
    expect(degraded.status).toBe('degraded');
    await during();
    await sleep(Math.max(0, ms - (Date.now() - downAt)));
    expect(server?.child.exitCode).toBeNull();
    await postgres.server.start();
    await waitForStatus(`${base}/healthz`, 200, { process: server, timeoutMs: 30_000 });
  }

  /** Waits until three batches are checkpointed. */
  async function midRun(job: string, runId: string, batchSize = PARAMS.batch_size): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (Number((await api.run(job, runId)).stats['scanned_count'] ?? 0) < 3 * batchSize) {
      if (Date.now() > deadline) throw new Error(`${job} made no progress`);
      await sleep(20);
    }
  }

  /** The findings of a clean, uninterrupted run on the same data. */
  async function cleanFindings(job: string): Promise<string[]> {
    const clean = await api.trigger(job, { batch_size: 1000 });
    expect(clean.resumed).toBe(false);
    await api.waitFor(job, clean.run_id, ['Completed'], 60_000);
    return findingSet((await api.findings(job, clean.run_id)).findings);
  }

  beforeAll(async () => {
    dir = scratchDir('fault-outage');
    postgres = await ownPostgres(dir.path, { name: 'outage' });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // The server migrates the fresh database at boot; the dataset comes after.
    server = await startServer(
      serverEnv({
        databaseUrl: postgres.url,
        dataDir: dir.path,
        httpPort: port,
        extra: WINDOWS,
      }),
    );
    pool = new pg.Pool({ connectionString: postgres.url, max: 4 });
    pool.on('error', () => undefined);
    // 20 users and 4 shared drives of 33 files: about the 800 files the runs scan; 2 to 5 folders below each of
    // the 24 roots: about the hundred folders FOLDER_PARAMS is paced for.
    const report = await seedOxiCloud(pool, dir.path, {
      users: 20,
      filesPerDrive: 33,
      foldersPerDrive: { min: 2, max: 5 },
      trashedFolderShare: 0.2,
      seed: 77,
      faults: FAULTS,
      faultsPerKind: 3,
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

  it('shorter than the retry window: the run rides it out and completes by itself; a cancel sent during it lands once Postgres is back', async () => {
    const files = await api.trigger(FILES, PARAMS);
    const folders = await api.trigger(FOLDERS, FOLDER_PARAMS);
    await midRun(FILES, files.run_id);
    await midRun(FOLDERS, folders.run_id, FOLDER_PARAMS.batch_size);

    let cancelAnswer: Response | undefined;
    await outage(SHORT_OUTAGE_MS, async () => {
      await sleep(SHORT_OUTAGE_MS / 3);
      // Sent while Postgres is down: accepted for the run this process executes.
      cancelAnswer = await fetch(`${base}/api/admin/jobs/${FOLDERS}/cancel`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      }).catch(() => undefined);
    });
    // Accepted for the run this process executes (the token's user was checked before the outage).
    expect(cancelAnswer?.status, 'the cancel sent during the outage').toBe(200);

    // files_consistency went on by itself: Completed, never Failed, no error.
    const filesDone = await api.waitFor(FILES, files.run_id, ['Completed', 'Failed', 'Paused'], 60_000);
    expect(filesDone.status, JSON.stringify(filesDone)).toBe('Completed');
    expect(filesDone.error_message).toBeNull();

    // The cancel landed after the outage: Paused, at a cursor, for the cancel.
    const foldersPaused = await api.waitFor(
      FOLDERS,
      folders.run_id,
      ['Paused', 'Completed', 'Failed'],
      30_000,
    );
    expect(foldersPaused.status, JSON.stringify(foldersPaused)).toBe('Paused');
    expect(foldersPaused.cursor_hex).not.toBeNull();
    expect(foldersPaused.pause_reason).toBe('cancel requested');
    const resumed = await api.trigger(FOLDERS);
    expect(resumed).toMatchObject({ run_id: folders.run_id, resumed: true });
    await api.waitFor(FOLDERS, folders.run_id, ['Completed'], 60_000);

    const filesGot = findingSet((await api.findings(FILES, files.run_id)).findings);
    const foldersGot = findingSet((await api.findings(FOLDERS, folders.run_id)).findings);
    const filesWant = await cleanFindings(FILES);
    // The seeded faults were found at all (the comparison is not between two empty sets).
    expect(seeded.length).toBeGreaterThanOrEqual(6);
    expect(filesWant).toEqual(expect.arrayContaining(seeded));
    expect(filesGot).toEqual(filesWant);
    expect(foldersGot).toEqual(await cleanFindings(FOLDERS));
  }, 240_000);

  it(
    'longer than the retry window: the run lands Paused at its cursor ("database unreachable") once Postgres is back; a trigger resumes it to the clean findings',
    async () => {
      const started = await api.trigger(FILES, PARAMS);
      await midRun(FILES, started.run_id);
      const before = await api.run(FILES, started.run_id);

      let cancelStatus: number | undefined;
      await outage(LONG_OUTAGE_MS, async () => {
        // Sent once the retry window has passed, while Postgres is still down.
        await sleep(RETRY_MS + (LONG_OUTAGE_MS - RETRY_MS) / 2);
        const res = await fetch(`${base}/api/admin/jobs/${FILES}/cancel`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
        }).catch(() => undefined);
        cancelStatus = res?.status;
      });
      expect(cancelStatus, 'the cancel sent during the outage').toBe(200);

      // Never stuck Running once the database is back.
      const landed = await api.waitFor(FILES, started.run_id, ['Paused', 'Completed', 'Failed'], 20_000);
      expect(landed.status, JSON.stringify(landed)).toBe('Paused');
      expect(landed.error_message).toBeNull();
      expect(landed.pause_reason).toBe('database unreachable');
      expect(landed.cursor_hex).not.toBeNull();
      expect(Number(landed.stats['scanned_count'])).toBeGreaterThanOrEqual(
        Number(before.stats['scanned_count']),
      );

      const again = await api.trigger(FILES);
      expect(again).toMatchObject({ run_id: started.run_id, resumed: true });
      const finished = await api.waitFor(FILES, started.run_id, ['Completed', 'Failed'], 60_000);
      expect(finished.status, JSON.stringify(finished)).toBe('Completed');
      const timing = finished as unknown as { active_ms: number; wall_ms: number };
      // Paused from the end of the retry window until the trigger (less a margin for the detection).
      expect(timing.wall_ms - timing.active_ms).toBeGreaterThan(LONG_OUTAGE_MS - RETRY_MS - 2_000);

      const got = findingSet((await api.findings(FILES, started.run_id)).findings);
      expect(got).toEqual(await cleanFindings(FILES));
      expect(server?.child.exitCode).toBeNull();
    },
    LONG_OUTAGE_MS + 180_000,
  );
});
