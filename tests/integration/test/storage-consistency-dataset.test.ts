import { backdateLocalBlob, type DatasetReport, FAULT_NAMES, generateDataset } from '@oxicloud/dataset';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsistencyHarness, consistencyHarness, summary } from './consistency-fixtures.js';
import { type BlobWorld, blobWorld } from './storage-consistency-fixtures.js';

/**
 * storage_consistency over a generated dataset with EVERY fault injected:
 * it must report exactly the storage faults of the report (orphan bytes,
 * missing bytes) and nothing for the faults the other checks own.
 */
describe('storage_consistency on a generated dataset with all faults', () => {
  let db: TestDatabase;
  let h: ConsistencyHarness;
  let w: BlobWorld;
  let report: DatasetReport;

  beforeAll(async () => {
    db = await createTestDatabase();
    w = await blobWorld(db.pool);
    h = consistencyHarness(db.pool);
    report = await generateDataset({
      pool: db.pool,
      blobs: w.storage,
      backdateBlob: backdateLocalBlob((hash) => w.storage.pathOf(hash)),
      options: {
        users: 30,
        filesPerUser: 20,
        blobsOnDisk: 200,
        foldersPerDrive: { min: 8, max: 16 },
        secondDriveShare: 0.5,
        trashedFolderShare: 0.2,
        trashedFileShare: 0.1,
        grants: 6,
        seed: 23,
        faults: [...FAULT_NAMES],
        faultsPerKind: 2,
      },
    });
  }, 120_000);
  afterAll(async () => {
    await h?.engine.shutdown({ timeoutMs: 1000 }).catch(() => undefined);
    await w?.close();
    await db?.drop();
  });

  const expected = () =>
    report.faults
      .filter((f) => f.expect.job === 'storage_consistency')
      .flatMap((f) => f.resourceIds.map((id) => `${f.expect.kind} ${f.expect.severity} ${id}`))
      .sort();

  it('reports exactly the orphan_blob_on_disk and blob_bytes_missing resources', async () => {
    expect(expected().length).toBe(4);
    const run = await h.run(w.check(), { batch_size: 40 });
    expect(run.status).toBe('Completed');
    expect(summary(run.findings)).toEqual(expected());
    const missing = report.faults.find((f) => f.fault === 'blob_bytes_missing');
    for (const resource of missing?.resources ?? []) {
      const finding = run.findings.find((f) => f.resourceId === resource.id);
      expect(finding?.detail['affected_file_ids']).toEqual(
        [...((resource.detail['fileIds'] as string[] | undefined) ?? [])].sort(),
      );
    }
  });

  it('deep + force over real JPEG / MP3 / PDF bytes: no hash or mime false positive', async () => {
    const run = await h.run(w.check(), { deep: true, force: true });
    expect(run.status).toBe('Completed');
    expect(summary(run.findings)).toEqual(expected());
  }, 60_000);
});
