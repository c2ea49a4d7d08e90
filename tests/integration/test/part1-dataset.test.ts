import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DatasetReport, type FaultName, generateDataset } from '@oxicloud/dataset';
import { defaultRunArgs, type JobOutcomeOk } from '@oxicloud/scheduler';
import {
  LocalFsBlobStorage,
  PgGrantRepository,
  PgOrphanBlobRepository,
  PgTrashRepository,
  PgUsageRepository,
} from '@oxicloud/storage';
import type { UsageCorrection } from '@oxicloud/tenants';
import {
  createDedupGcJob,
  createGrantCleanupJob,
  createStorageReconcileJob,
  createTrashCleanupJob,
  dedupGcConfigFromEnv,
  grantCleanupConfigFromEnv,
  storageReconcileConfigFromEnv,
  trashCleanupConfigFromEnv,
} from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, recordingLogger, storageDb } from './part1-fixtures.js';

/**
 * The Part 1 jobs over a generated dataset with the faults they act on:
 * each job must act on exactly the injected resources, and on nothing of
 * the clean part (old trash only, expired grants only, drifted counters only).
 */
describe('Part 1 jobs on a generated dataset with faults', () => {
  let db: TestDatabase;
  let root: string;
  let storage: LocalFsBlobStorage;
  let report: DatasetReport;
  const signal = () => new AbortController().signal;
  const idsOf = (fault: FaultName) => report.faults.find((f) => f.fault === fault)?.resourceIds ?? [];

  beforeAll(async () => {
    db = await createTestDatabase();
    root = await mkdtemp(join(tmpdir(), 'oxicloud-part1-dataset-'));
    storage = new LocalFsBlobStorage({ root });
    report = await generateDataset({
      pool: db.pool,
      blobs: storage,
      options: {
        users: 12,
        filesPerUser: 25,
        blobsOnDisk: 300,
        foldersPerDrive: { min: 8, max: 16 },
        secondDriveShare: 0.5,
        trashedFolderShare: 0.2,
        trashedFileShare: 0.1,
        grants: 6,
        seed: 11,
        faults: ['drive_used_bytes_drift', 'user_used_bytes_drift', 'expired_grants', 'old_trash'],
      },
    });
  });
  afterAll(async () => {
    await db.drop();
    await rm(root, { recursive: true, force: true });
  });

  it('storage_reconcile corrects exactly the drifted drives and users, then nothing', async () => {
    const expected = [...idsOf('drive_used_bytes_drift'), ...idsOf('user_used_bytes_drift')];
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThanOrEqual(10);
    const job = createStorageReconcileJob({
      repository: new PgUsageRepository(storageDb(db.pool)),
      config: storageReconcileConfigFromEnv({}),
    });
    const outcome = (await job.run(defaultRunArgs, signal())) as JobOutcomeOk;
    expect(outcome.count).toBe(expected.length);
    const corrected = (outcome.extra['largest'] as UsageCorrection[]).map((c) => c.id);
    expect(corrected.sort()).toEqual([...expected].sort());
    expect(((await job.run(defaultRunArgs, signal())) as JobOutcomeOk).count).toBe(0);
  });

  it('grant_cleanup deletes exactly the expired grants and audits their ids', async () => {
    const expected = idsOf('expired_grants');
    expect(expected.length).toBeGreaterThan(0);
    const grantsBefore = await countRows(db.pool, 'storage.role_grants');
    const logger = recordingLogger();
    const job = createGrantCleanupJob({
      repository: new PgGrantRepository(storageDb(db.pool)),
      config: grantCleanupConfigFromEnv({}),
      logger,
    });
    const outcome = (await job.run(defaultRunArgs, signal())) as JobOutcomeOk;
    expect(outcome.count).toBe(expected.length);
    expect(await countRows(db.pool, 'storage.role_grants')).toBe(grantsBefore - expected.length);
    const audit = logger.lines.find((l) => l.fields['target'] === 'audit')!;
    expect([...(audit.fields['grant_ids'] as string[])].sort()).toEqual([...expected].sort());
  });

  it('trash_cleanup purges exactly the old trash, then dedup_gc (force) collects the blobs it orphaned', async () => {
    const expected = idsOf('old_trash');
    expect(expected.length).toBeGreaterThan(0);
    const trashedBefore =
      (await countRows(db.pool, 'storage.folders', 'is_trashed')) +
      (await countRows(db.pool, 'storage.files', 'is_trashed'));
    const job = createTrashCleanupJob({
      repository: new PgTrashRepository(storageDb(db.pool)),
      config: { ...trashCleanupConfigFromEnv({}), batchSize: 3 },
    });
    const outcome = (await job.run(defaultRunArgs, signal())) as JobOutcomeOk;
    expect(outcome.count).toBe(expected.length);
    const trashedAfter =
      (await countRows(db.pool, 'storage.folders', 'is_trashed')) +
      (await countRows(db.pool, 'storage.files', 'is_trashed'));
    expect(trashedAfter).toBe(trashedBefore - expected.length);
    const left = await db.pool.query(
      `SELECT id FROM storage.folders WHERE id = ANY($1::uuid[])
       UNION ALL SELECT id FROM storage.files WHERE id = ANY($1::uuid[])`,
      [expected],
    );
    expect(left.rowCount).toBe(0);

    // The clean dataset has no orphan; the purge made some (blobs only old trash referenced).
    const orphans = await db.pool.query<{ hash: string }>(
      'SELECT hash FROM storage.blobs WHERE ref_count = 0',
    );
    expect(orphans.rowCount).toBeGreaterThan(0);
    const gc = createDedupGcJob({
      repository: new PgOrphanBlobRepository(storageDb(db.pool)),
      blobs: storage,
      config: dedupGcConfigFromEnv({}),
    });
    // Just orphaned: inside the default grace, so nothing goes without force.
    expect(((await gc.run(defaultRunArgs, signal())) as JobOutcomeOk).count).toBe(0);
    const forced = (await gc.run({ force: true }, signal())) as JobOutcomeOk;
    expect(forced.count).toBe(orphans.rowCount);
    for (const { hash } of orphans.rows) expect(await storage.exists(hash)).toBe(false);
    // Every file still has its blob row and its bytes.
    const referenced = await db.pool.query<{ hash: string }>(
      'SELECT DISTINCT f.blob_hash AS hash, b.hash IS NOT NULL AS has_row FROM storage.files f LEFT JOIN storage.blobs b ON b.hash = f.blob_hash',
    );
    for (const row of referenced.rows as { hash: string; has_row: boolean }[]) {
      expect(row.has_row).toBe(true);
      expect(await storage.exists(row.hash)).toBe(true);
    }
  });
});
