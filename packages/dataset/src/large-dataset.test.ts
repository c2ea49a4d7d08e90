import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalFsBlobStorage } from '@oxicloud/storage';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findAnomalies } from '../test/inspect.js';
import { backdateLocalBlob } from './backdate.js';
import { FAULT_NAMES } from './faults.js';
import { generateDataset } from './generate-dataset.js';
import { type DatasetReport, describeDatasetReport } from './report.js';

/**
 * The yardstick: 1,000 users × 1,000 files (1,000,000 file rows),
 * 100,000 blobs with real bytes, every fault. Runs only with
 * OXICLOUD_DATASET_LARGE=1 (it writes ~550 MB of blobs and takes minutes).
 */
describe.runIf(process.env['OXICLOUD_DATASET_LARGE'] === '1')(
  'one million file rows with every fault',
  () => {
    let db: TestDatabase;
    let dir: string;
    let blobs: LocalFsBlobStorage;
    let report: DatasetReport;

    beforeAll(async () => {
      db = await createTestDatabase();
      dir = await mkdtemp(join(tmpdir(), 'oxicloud-dataset-large-'));
      blobs = new LocalFsBlobStorage({ root: join(dir, 'blobs') });
      report = await generateDataset({
        pool: db.pool,
        blobs,
        options: { users: 1000, filesPerUser: 1000, blobsOnDisk: 100_000, faults: [...FAULT_NAMES] },
        backdateBlob: backdateLocalBlob((h) => blobs.pathOf(h)),
      });
      console.log(describeDatasetReport(report));
      console.log('phase ms', JSON.stringify(report.phaseMs));
    }, 3_600_000);

    afterAll(async () => {
      await db?.drop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('has 1,000,000 file rows and 100,000 blobs, and takes minutes, not hours', async () => {
      const files = await db.pool.query('SELECT count(*)::int AS n FROM storage.files');
      expect(files.rows[0].n).toBe(1_000_000);
      expect(report.counts.files).toBe(1_000_000);
      expect(report.counts.blobs).toBe(100_000);
      expect(report.durationMs).toBeLessThan(30 * 60_000);
    });

    it('holds every fault exactly where the report says, and nothing else', async () => {
      const a = await findAnomalies(db.pool, blobs);
      const ids = (fault: (typeof FAULT_NAMES)[number]) =>
        [...(report.faults.find((r) => r.fault === fault)?.resourceIds ?? [])].sort();
      expect(a.driveDrift).toEqual(ids('drive_used_bytes_drift'));
      expect(a.userDriftVsDrives).toEqual(ids('user_used_bytes_drift'));
      expect(a.userDriftVsFiles).toEqual(ids('user_used_bytes_drift'));
      expect(a.liveFolderUnderTrashed).toEqual(ids('live_folder_under_trashed_parent'));
      expect(a.liveFileUnderTrashed).toEqual(ids('live_file_under_trashed_folder'));
      expect(a.pathMismatch).toEqual(ids('wrong_folder_path'));
      expect(a.lpathMismatch).toEqual(ids('wrong_folder_lpath'));
      expect(a.missingBlobRow).toEqual(ids('missing_blob_row'));
      expect(a.blobSizeMismatch).toEqual(ids('blob_size_mismatch'));
      expect(a.orphanOnDisk).toEqual(ids('orphan_blob_on_disk'));
      expect(a.bytesMissing).toEqual(ids('blob_bytes_missing'));
      expect(a.expiredGrants).toEqual(ids('expired_grants'));
      expect(a.oldTrash).toEqual(ids('old_trash'));
      expect(a.refCountWrong).toEqual([]);
      expect(a.unreferencedBlobs).toEqual([]);
      expect(a.youngRows).toEqual([]);
      for (const name of FAULT_NAMES) expect(ids(name).length).toBeGreaterThan(0);
    }, 1_800_000);
  },
);
