import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalFsBlobStorage } from '@oxicloud/storage';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { createBLAKE3 } from 'hash-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findAnomalies, fingerprint, listAll } from '../test/inspect.js';
import { backdateLocalBlob } from './backdate.js';
import { isDatasetError } from './errors.js';
import { FAULT_NAMES, type FaultName } from './faults.js';
import { generateDataset } from './generate-dataset.js';
import type { DatasetOptions } from './options.js';
import type { DatasetProgress, DatasetReport, FaultRecord } from './report.js';

const SMALL: DatasetOptions = {
  users: 30,
  filesPerUser: 40,
  blobsOnDisk: 300,
  foldersPerDrive: { min: 8, max: 25 },
  folderDepth: { min: 3, max: 5 },
  secondDriveShare: 0.2,
  trashedFolderShare: 0.15,
  trashedFileShare: 0.05,
  grants: 20,
  seed: 7,
};

interface Fixture {
  db: TestDatabase;
  dir: string;
  blobs: LocalFsBlobStorage;
}

const fixtures: Fixture[] = [];

async function fixture(): Promise<Fixture> {
  const db = await createTestDatabase();
  const dir = await mkdtemp(join(tmpdir(), 'oxicloud-dataset-'));
  const f = { db, dir, blobs: new LocalFsBlobStorage({ root: join(dir, 'blobs') }) };
  fixtures.push(f);
  return f;
}

afterAll(async () => {
  for (const f of fixtures) {
    await f.db.drop();
    await rm(f.dir, { recursive: true, force: true });
  }
});

async function count(db: TestDatabase, sql: string): Promise<number> {
  const r = await db.pool.query(sql);
  return Number(r.rows[0]?.n);
}

describe('a clean dataset', () => {
  let f: Fixture;
  let report: DatasetReport;
  const phases: DatasetProgress[] = [];

  beforeAll(async () => {
    f = await fixture();
    report = await generateDataset({
      pool: f.db.pool,
      blobs: f.blobs,
      options: SMALL,
      onProgress: (p) => phases.push(p),
    });
  });

  it('has the asked-for users, files and blobs, and the report counts what is in the database', async () => {
    expect(report.counts.users).toBe(30);
    expect(report.counts.files).toBe(30 * 40);
    expect(report.counts.blobs).toBe(300);
    expect(report.faults).toEqual([]);
    expect(await count(f.db, 'SELECT count(*) AS n FROM auth.users')).toBe(30);
    expect(await count(f.db, 'SELECT count(*) AS n FROM storage.drives')).toBe(report.counts.drives);
    // secondDriveShare 0.2 of 30 users: exactly 6 users own two drives.
    expect(report.counts.drives).toBe(36);
    expect(await count(f.db, 'SELECT count(*) AS n FROM storage.folders')).toBe(report.counts.folders);
    expect(await count(f.db, 'SELECT count(*) AS n FROM storage.files')).toBe(1200);
    expect(await count(f.db, 'SELECT count(*) AS n FROM storage.files WHERE is_trashed')).toBe(
      report.counts.trashedFiles,
    );
    expect(await count(f.db, 'SELECT count(*) AS n FROM storage.blobs')).toBe(300);
    expect(await count(f.db, 'SELECT count(*) AS n FROM storage.role_grants')).toBe(20);
    expect(report.counts.trashedFolders).toBeGreaterThan(0);
    expect(report.counts.trashedFiles).toBeGreaterThan(0);
    expect(report.counts.rootFiles).toBeGreaterThan(0);
    expect(report.counts.audioFiles).toBe(
      await count(f.db, "SELECT count(*) AS n FROM storage.files WHERE mime_type = 'audio/mpeg'"),
    );
    expect(report.counts.audioFiles).toBeGreaterThan(0);
    expect(report.counts.imageFiles).toBeGreaterThan(0);
  });

  it('has folder trees of depth 3 to 5 with 8 to 25 folders per drive', async () => {
    const r = await f.db.pool.query(
      'SELECT drive_id, count(*)::int AS n, max(nlevel(lpath))::int AS depth FROM storage.folders GROUP BY drive_id',
    );
    expect(r.rows).toHaveLength(36);
    for (const row of r.rows as { n: number; depth: number }[]) {
      expect(row.n).toBeGreaterThanOrEqual(8);
      expect(row.n).toBeLessThanOrEqual(25);
      expect(row.depth).toBeGreaterThanOrEqual(3);
      expect(row.depth).toBeLessThanOrEqual(5);
    }
  });

  it('breaks no invariant: accounting, trash, paths, ref counts, blob rows against bytes, ages', async () => {
    const a = await findAnomalies(f.db.pool, f.blobs);
    expect(a).toEqual({
      driveDrift: [],
      userDriftVsDrives: [],
      userDriftVsFiles: [],
      liveFolderUnderTrashed: [],
      liveFileUnderTrashed: [],
      pathMismatch: [],
      lpathMismatch: [],
      missingBlobRow: [],
      blobSizeMismatch: [],
      orphanOnDisk: [],
      bytesMissing: [],
      diskSizeMismatch: [],
      expiredGrants: [],
      oldTrash: [],
      refCountWrong: [],
      unreferencedBlobs: [],
      trashNotWholeSubtree: [],
      youngRows: [],
    });
    // used_bytes is not trivially zero.
    expect(
      await count(f.db, 'SELECT count(*) AS n FROM storage.drives WHERE used_bytes > 0'),
    ).toBeGreaterThan(30);
    // Some blobs are shared by several files (dedup).
    expect(await count(f.db, 'SELECT count(*) AS n FROM storage.blobs WHERE ref_count >= 2')).toBeGreaterThan(
      0,
    );
  });

  it('stores real bytes whose BLAKE3 is their key, sized within the range, with the declared type magic', async () => {
    const hasher = await createBLAKE3();
    const listed = await listAll(f.blobs);
    expect(listed).toHaveLength(300);
    const types = new Map(
      (await f.db.pool.query('SELECT hash, content_type FROM storage.blobs')).rows.map(
        (r: { hash: string; content_type: string }) => [r.hash, r.content_type],
      ),
    );
    for (const entry of listed) {
      const chunks: Uint8Array[] = [];
      for await (const chunk of await f.blobs.get(entry.hash)) chunks.push(chunk);
      const bytes = Buffer.concat(chunks);
      hasher.init();
      hasher.update(bytes);
      expect(hasher.digest('hex')).toBe(entry.hash);
      expect(bytes.length).toBeGreaterThanOrEqual(1024);
      expect(bytes.length).toBeLessThanOrEqual(16 * 1024);
      const type = types.get(entry.hash);
      if (type === 'audio/mpeg') expect(bytes.subarray(0, 3).toString('latin1')).toBe('ID3');
      if (type === 'image/jpeg') expect([...bytes.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
      if (type === 'application/pdf') expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    }
  });

  it('has no expired grant and no trash past the 30-day retention, but has grants and recent trash', async () => {
    expect(
      await count(f.db, 'SELECT count(*) AS n FROM storage.role_grants WHERE expires_at IS NOT NULL'),
    ).toBe(10);
    expect(
      await count(
        f.db,
        "SELECT count(*) AS n FROM storage.files WHERE is_trashed AND trashed_at BETWEEN now() - interval '8 days' AND now() - interval '1 day'",
      ),
    ).toBe(report.counts.trashedFiles);
    // Grants never point a user at their own resources.
    expect(
      await count(
        f.db,
        `SELECT count(*) AS n FROM storage.role_grants g
           JOIN storage.drives d ON d.id = g.resource_id OR d.id = (SELECT drive_id FROM storage.folders WHERE id = g.resource_id)
          WHERE d.owner_id = g.subject_id`,
      ),
    ).toBe(0);
  });

  it('reports progress through every phase in order', () => {
    const order = [...new Set(phases.map((p) => p.phase))];
    expect(order).toEqual([
      'plan',
      'blob_bytes',
      'users',
      'drives',
      'folders',
      'blob_rows',
      'files',
      'usage',
      'grants',
      'faults',
      'commit',
      'storage_faults',
    ]);
    const files = phases.filter((p) => p.phase === 'files');
    expect(files.at(-1)).toMatchObject({ done: 1200, total: 1200 });
  });

  it('refuses to seed the same seed twice into one database', async () => {
    const err = await generateDataset({ pool: f.db.pool, blobs: f.blobs, options: SMALL }).catch(
      (e: unknown) => e,
    );
    expect(isDatasetError(err, 'ALREADY_SEEDED')).toBe(true);
    expect((err as Error).message).toMatch(/seed 7/);
  });
});

describe('with every fault', () => {
  let f: Fixture;
  let report: DatasetReport;
  const FAULTY: DatasetOptions = { ...SMALL, users: 60, seed: 11, faults: [...FAULT_NAMES] };

  beforeAll(async () => {
    f = await fixture();
    report = await generateDataset({
      pool: f.db.pool,
      blobs: f.blobs,
      options: FAULTY,
      backdateBlob: backdateLocalBlob((h) => f.blobs.pathOf(h)),
    });
  });

  const record = (fault: FaultName): FaultRecord => {
    const r = report.faults.find((x) => x.fault === fault);
    if (!r) throw new Error(`no record for ${fault}`);
    return r;
  };
  const sorted = (xs: readonly string[]) => [...xs].sort();

  it('records every fault once, in order, each with its resources and expected finding', () => {
    expect(report.faults.map((r) => r.fault)).toEqual([...FAULT_NAMES]);
    for (const r of report.faults) {
      expect(r.resourceIds.length).toBeGreaterThan(0);
      expect(r.resourceIds).toEqual(r.resources.map((x) => x.id));
      expect(new Set(r.resourceIds).size).toBe(r.resourceIds.length);
    }
  });

  // One assertion block per fault: independent SQL / disk inspection finds
  // EXACTLY the reported ids, and no other check's anomaly appears anywhere.
  let anomalies: Awaited<ReturnType<typeof findAnomalies>>;
  beforeAll(async () => {
    anomalies = await findAnomalies(f.db.pool, f.blobs);
  });

  it('drive_used_bytes_drift: two drives of each picked user, +delta and -delta', async () => {
    const r = record('drive_used_bytes_drift');
    expect(r.expect).toEqual({
      job: 'drives_consistency',
      kind: 'drive_used_bytes_drift',
      severity: 'Drift',
    });
    expect(r.resourceIds).toHaveLength(4);
    expect(anomalies.driveDrift).toEqual(sorted(r.resourceIds));
    for (const res of r.resources) {
      const row = await f.db.pool.query(
        'SELECT d.used_bytes, (SELECT sum(size) FROM storage.files WHERE drive_id = d.id) AS actual FROM storage.drives d WHERE id = $1',
        [res.id],
      );
      expect(Number(row.rows[0].used_bytes)).toBe(res.detail['storedBytes']);
      expect(Number(row.rows[0].actual)).toBe(res.detail['expectedBytes']);
    }
  });

  it('user_used_bytes_drift: only the picked users, whichever way the envelope is computed', () => {
    const r = record('user_used_bytes_drift');
    expect(r.resourceIds).toHaveLength(2);
    expect(anomalies.userDriftVsDrives).toEqual(sorted(r.resourceIds));
    expect(anomalies.userDriftVsFiles).toEqual(sorted(r.resourceIds));
  });

  it('live_folder_under_trashed_parent: new live folders whose parent is trashed', async () => {
    const r = record('live_folder_under_trashed_parent');
    expect(r.expect.kind).toBe('parent_trashed_mismatch');
    expect(anomalies.liveFolderUnderTrashed).toEqual(sorted(r.resourceIds));
    const rows = await f.db.pool.query(
      `SELECT c.id, p.id AS parent FROM storage.folders c JOIN storage.folders p ON p.id = c.parent_id
        WHERE c.id = ANY($1) AND p.is_trashed AND NOT c.is_trashed`,
      [r.resourceIds],
    );
    expect(rows.rowCount).toBe(2);
  });

  it('live_file_under_trashed_folder: files un-trashed inside trashed folders', () => {
    const r = record('live_file_under_trashed_folder');
    expect(r.expect).toEqual({
      job: 'files_consistency',
      kind: 'parent_folder_trashed',
      severity: 'DataLoss',
    });
    expect(anomalies.liveFileUnderTrashed).toEqual(sorted(r.resourceIds));
    // The invariant "a trashed folder's content is trashed" is broken exactly by the two faults above.
    expect(anomalies.trashNotWholeSubtree).toEqual(
      sorted([...r.resourceIds, ...record('live_folder_under_trashed_parent').resourceIds]),
    );
  });

  it('wrong_folder_path: leaf folders whose stored path differs from the parent chain', async () => {
    const r = record('wrong_folder_path');
    expect(anomalies.pathMismatch).toEqual(sorted(r.resourceIds));
    for (const res of r.resources) {
      const row = await f.db.pool.query('SELECT path FROM storage.folders WHERE id = $1', [res.id]);
      expect(row.rows[0].path).toBe(res.detail['storedPath']);
      expect(row.rows[0].path).not.toBe(res.detail['expectedPath']);
    }
  });

  it('wrong_folder_lpath: leaf folders whose stored lpath differs from the parent chain', () => {
    const r = record('wrong_folder_lpath');
    expect(anomalies.lpathMismatch).toEqual(sorted(r.resourceIds));
  });

  it('missing_blob_row: files whose blob has neither a row nor bytes', async () => {
    const r = record('missing_blob_row');
    expect(r.expect).toEqual({ job: 'files_consistency', kind: 'missing_blob', severity: 'DataLoss' });
    expect(anomalies.missingBlobRow).toEqual(sorted(r.resourceIds));
    for (const res of r.resources) {
      expect(await f.blobs.exists(String(res.detail['blobHash']))).toBe(false);
    }
  });

  it('blob_size_mismatch: files whose size differs from their blob row, accounting kept right', () => {
    const r = record('blob_size_mismatch');
    expect(anomalies.blobSizeMismatch).toEqual(sorted(r.resourceIds));
    for (const res of r.resources) expect(res.detail['fileSize']).not.toBe(res.detail['blobSize']);
  });

  it('orphan_blob_on_disk: bytes with no row, backdated past any grace window', async () => {
    const r = record('orphan_blob_on_disk');
    expect(r.expect).toEqual({ job: 'storage_consistency', kind: 'orphan_blob', severity: 'Reclaimable' });
    expect(anomalies.orphanOnDisk).toEqual(sorted(r.resourceIds));
    for (const hash of r.resourceIds) {
      const head = await f.blobs.head(hash);
      expect(head?.modifiedAt?.getTime()).toBeLessThan(Date.now() - 2 * 86_400_000);
    }
  });

  it('blob_bytes_missing: blob rows whose bytes are gone, with the files that point at them', async () => {
    const r = record('blob_bytes_missing');
    expect(anomalies.bytesMissing).toEqual(sorted(r.resourceIds));
    for (const res of r.resources) {
      const files = await f.db.pool.query(
        'SELECT id::text FROM storage.files WHERE blob_hash = $1 ORDER BY id',
        [res.id],
      );
      expect(files.rows.map((x: { id: string }) => x.id)).toEqual(res.detail['fileIds']);
      expect(files.rowCount).toBeGreaterThan(0);
    }
  });

  it('expired_grants: grants that expired days ago', () => {
    const r = record('expired_grants');
    expect(r.expect).toEqual({ job: 'grant_cleanup', kind: 'expired_grant' });
    // lingering_expired_grant's grants expired long ago too: grant_cleanup deletes both.
    expect(anomalies.expiredGrants).toEqual(
      sorted([...r.resourceIds, ...record('lingering_expired_grant').resourceIds]),
    );
  });

  it('the blob-row, grant, drive and mime faults: each lists the finding of its check per resource', async () => {
    const byFault = (name: Parameters<typeof record>[0]) =>
      record(name).findings.map((x) => `${x.job} ${x.kind} ${x.severity} ${x.resourceId}`);
    expect(byFault('blob_ref_count_drift')).toEqual(
      record('blob_ref_count_drift').resourceIds.map(
        (h) => `blobs_consistency ref_count_mismatch Drift ${h}`,
      ),
    );
    // The blob-row check's invariant is broken exactly by its two faults.
    expect(anomalies.refCountWrong).toEqual(
      sorted([
        ...record('blob_ref_count_drift').resourceIds,
        ...record('blob_orphaned_at_unset').resourceIds,
      ]),
    );
    expect(byFault('folder_parent_cycle')).toHaveLength(
      (2 * record('folder_parent_cycle').resourceIds.length) / 2,
    );
    expect(record('folder_parent_cycle').findings.every((x) => x.kind === 'orphan_root')).toBe(true);
    expect(record('dangling_grant').findings.every((x) => x.kind === 'dangling_grant')).toBe(true);
    expect(record('file_mime_mismatch').findings.every((x) => x.severity === 'Drift')).toBe(true);
    expect(record('missing_blob_row').findings.map((x) => x.resourceId)).toEqual(
      record('missing_blob_row').resources.map((x) => String(x.detail['blobHash'])),
    );
    expect(record('old_trash').findings).toEqual([]);
  });

  it('old_trash: whole trashed subtrees and standalone trashed files past the retention', async () => {
    const r = record('old_trash');
    expect(r.expect).toEqual({ job: 'trash_cleanup', kind: 'expired_trash' });
    expect(anomalies.oldTrash).toEqual(sorted(r.resourceIds));
    expect(r.resources.some((x) => x.type === 'folder')).toBe(true);
    expect(r.resources.some((x) => x.type === 'file')).toBe(true);
  });

  it('leaves everything else intact: ref counts, sizes on disk, ages', () => {
    expect(anomalies.diskSizeMismatch).toEqual([]);
    expect(anomalies.youngRows).toEqual([]);
  });

  it('same seed, same dataset and faults (by content and label); another seed differs', async () => {
    const again = await fixture();
    const second = await generateDataset({
      pool: again.db.pool,
      blobs: again.blobs,
      options: FAULTY,
      backdateBlob: backdateLocalBlob((h) => again.blobs.pathOf(h)),
    });
    expect(await fingerprint(again.db.pool)).toBe(await fingerprint(f.db.pool));
    expect(second.counts).toEqual(report.counts);
    const labels = (rep: DatasetReport) =>
      rep.faults.map((x) => [x.fault, x.resources.map((res) => res.label)]);
    expect(labels(second)).toEqual(labels(report));
    expect(sorted((await listAll(again.blobs)).map((b) => b.hash))).toEqual(
      sorted((await listAll(f.blobs)).map((b) => b.hash)),
    );

    const other = await fixture();
    await generateDataset({
      pool: other.db.pool,
      blobs: other.blobs,
      options: { ...FAULTY, seed: 12, faults: [] },
    });
    expect(await fingerprint(other.db.pool)).not.toBe(await fingerprint(f.db.pool));
  });
});

describe('when a fault cannot be applied', () => {
  it('rejects with FAULT_NOT_APPLICABLE and rolls every row back', async () => {
    const f = await fixture();
    const err = await generateDataset({
      pool: f.db.pool,
      blobs: f.blobs,
      options: { users: 3, filesPerUser: 5, secondDriveShare: 0, faults: ['drive_used_bytes_drift'] },
    }).catch((e: unknown) => e);
    expect(isDatasetError(err, 'FAULT_NOT_APPLICABLE')).toBe(true);
    expect((err as Error).message).toMatch(/secondDriveShare/);
    expect(await count(f.db, 'SELECT count(*) AS n FROM auth.users')).toBe(0);
    expect(await count(f.db, 'SELECT count(*) AS n FROM storage.files')).toBe(0);
    // No orphan bytes left behind either: the blob store is as empty as the tables.
    expect(await f.blobs.list({ limit: 10 })).toEqual([]);
  });
});
