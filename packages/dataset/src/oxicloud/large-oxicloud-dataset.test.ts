import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalFsBlobStorage } from '@oxicloud/storage';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkInvariants, OXICLOUD_FAULT_INVARIANT } from '../../test/oxicloud-invariants.js';
import { backdateLocalBlob } from '../backdate.js';
import { OXICLOUD_FAULT_NAMES } from './faults.js';
import { generateOxiCloudDataset } from './generate-oxicloud-dataset.js';
import { describeOxiCloudDatasetReport, type OxiCloudDatasetReport } from './report.js';

/**
 * The yardstick on OxiCloud's domain: 1,000 personal drives × 1,000
 * files (1,000,000 file rows, CDC manifests, chunk rows and real bytes),
 * every fault. Runs only with OXICLOUD_DATASET_LARGE=1 (it writes some GB of
 * blobs and takes minutes); `OXICLOUD_DATASET_LARGE_USERS` scales it down
 * to try the test itself.
 */
const users = Number(process.env['OXICLOUD_DATASET_LARGE_USERS'] ?? 1000);

describe.runIf(process.env['OXICLOUD_DATASET_LARGE'] === '1')(
  `${users * 1000} file rows on OxiCloud's domain with every fault`,
  () => {
    let db: TestDatabase;
    let dir: string;
    let blobs: LocalFsBlobStorage;
    let report: OxiCloudDatasetReport;

    beforeAll(async () => {
      db = await createTestDatabase({ domain: 'oxicloud' });
      dir = await mkdtemp(join(tmpdir(), 'oxicloud-dataset-large-'));
      blobs = new LocalFsBlobStorage({ root: join(dir, '.blobs') });
      report = await generateOxiCloudDataset({
        pool: db.pool,
        blobs,
        storageRoot: dir,
        backdateBlob: backdateLocalBlob((h) => blobs.pathOf(h)),
        options: { users, filesPerDrive: 1000, faults: [...OXICLOUD_FAULT_NAMES] },
      });
      console.log(describeOxiCloudDatasetReport(report));
    }, 3_600_000);

    afterAll(async () => {
      await db?.drop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('has 1,000 file rows per drive, and takes minutes, not hours', async () => {
      const files = await db.pool.query('SELECT count(*)::int AS n FROM storage.files');
      expect(files.rows[0].n).toBe(report.counts.files);
      expect(report.counts.files).toBeGreaterThanOrEqual(users * 1000);
      expect(report.durationMs).toBeLessThan(30 * 60_000);
    });

    it('holds every fault exactly where the report says, and nothing else', async () => {
      const found = await checkInvariants(db.pool, blobs, dir);
      const expected: Record<string, string[]> = Object.fromEntries(Object.keys(found).map((k) => [k, []]));
      for (const r of report.faults) expected[OXICLOUD_FAULT_INVARIANT[r.fault]]?.push(...r.resourceIds);
      for (const k of Object.keys(expected)) expected[k]?.sort();
      expect(found).toEqual(expected);
      for (const name of OXICLOUD_FAULT_NAMES) {
        expect(report.faults.find((r) => r.fault === name)?.resourceIds.length, name).toBeGreaterThan(0);
      }
    }, 1_800_000);
  },
);
