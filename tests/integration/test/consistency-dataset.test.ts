import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConsistencyRegistry } from '@oxicloud/consistency';
import { type DatasetReport, type FaultName, generateDataset } from '@oxicloud/dataset';
import { LocalFsBlobStorage } from '@oxicloud/storage';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsistencyHarness, consistencyHarness, summary } from './consistency-fixtures.js';

/** The faults the three checks (drives, folders, files) must find, and the severity each check gives them. */
const FAULTS: Record<string, { job: string; kind: string; severity: string }> = {
  drive_used_bytes_drift: { job: 'drives_consistency', kind: 'drive_used_bytes_drift', severity: 'Drift' },
  user_used_bytes_drift: { job: 'drives_consistency', kind: 'user_used_bytes_drift', severity: 'Drift' },
  live_folder_under_trashed_parent: {
    job: 'folders_consistency',
    kind: 'parent_trashed_mismatch',
    severity: 'DataLoss',
  },
  wrong_folder_path: { job: 'folders_consistency', kind: 'path_mismatch', severity: 'Drift' },
  wrong_folder_lpath: { job: 'folders_consistency', kind: 'lpath_mismatch', severity: 'Drift' },
  live_file_under_trashed_folder: {
    job: 'files_consistency',
    kind: 'parent_folder_trashed',
    severity: 'DataLoss',
  },
  missing_blob_row: { job: 'files_consistency', kind: 'missing_blob', severity: 'DataLoss' },
  blob_size_mismatch: { job: 'files_consistency', kind: 'blob_size_mismatch', severity: 'Drift' },
};

describe('the three checks on a generated dataset with every fault they own', () => {
  let db: TestDatabase;
  let h: ConsistencyHarness;
  let blobRoot: string;
  let report: DatasetReport;

  beforeAll(async () => {
    db = await createTestDatabase();
    h = consistencyHarness(db.pool);
    blobRoot = await mkdtemp(join(tmpdir(), 'oxicloud-consistency-'));
    report = await generateDataset({
      pool: db.pool,
      blobs: new LocalFsBlobStorage({ root: blobRoot }),
      options: {
        users: 12,
        filesPerUser: 60,
        foldersPerDrive: { min: 5, max: 12 },
        secondDriveShare: 0.5,
        seed: 7,
        faults: Object.keys(FAULTS) as FaultName[],
        faultsPerKind: 2,
      },
    });
  }, 120_000);
  afterAll(async () => {
    await h?.engine.shutdown({ timeoutMs: 1000 }).catch(() => undefined);
    await db?.drop();
    if (blobRoot) await rm(blobRoot, { recursive: true, force: true });
  });

  it('each check reports exactly the injected faults of its kinds, with the chosen severity', async () => {
    const registry = new ConsistencyRegistry().register(h.drives).register(h.folders).register(h.files);
    // The three adapters' checks, however many they list: among them the three these faults are for.
    const names = [h.drives, h.folders, h.files].flatMap((a) => a.consistencyChecks().map((c) => c.name));
    expect(registry.allChecks().map((c) => c.name)).toEqual(names);
    expect(names).toEqual(expect.arrayContaining(Object.values(FAULTS).map((f) => f.job)));
    expect(registry.describe()).toBe(
      `consistency: 3 adapter(s) registered, ${names.length} check(s) available`,
    );
    for (const check of registry.allChecks()) {
      const expected = report.faults
        .filter((f) => FAULTS[f.fault]?.job === check.name)
        .flatMap((f) =>
          f.resources.map((r) => {
            const { kind, severity } = FAULTS[f.fault]!;
            // missing_blob is one finding per blob: its resource is the hash the file points at.
            const id = kind === 'missing_blob' ? String(r.detail['blobHash']) : r.id;
            return `${kind} ${severity} ${id}`;
          }),
        )
        .sort();
      // A check these faults are for finds them; any other check of the adapters finds nothing here.
      const faulted = Object.values(FAULTS).some((f) => f.job === check.name);
      if (faulted) expect(expected.length, check.name).toBeGreaterThan(0);
      else expect(expected, check.name).toEqual([]);
      const run = await h.run(check);
      expect(run.status, check.name).toBe('Completed');
      expect(summary(run.findings), check.name).toEqual(expected);
      for (const f of run.findings.filter((x) => x.kind === 'missing_blob')) {
        const fault = report.faults.find((x) => x.fault === 'missing_blob_row');
        const file = fault?.resources.find((r) => r.detail['blobHash'] === f.resourceId);
        expect(f.detail).toMatchObject({ ref_count: 1, live_file_count: 1, affected_file_ids: [file?.id] });
      }
    }
  });
});
