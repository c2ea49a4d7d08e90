import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BLAKE3_EMPTY, hashFileContent, LocalFsBlobStorage, manifestContent } from '@oxicloud/storage';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkInvariants,
  OXICLOUD_FAULT_ALSO_INVARIANT,
  OXICLOUD_FAULT_INVARIANT,
} from '../../test/oxicloud-invariants.js';
import { backdateLocalBlob } from '../backdate.js';
import { isDatasetError } from '../errors.js';
import { OXICLOUD_FAULT_NAMES } from './faults.js';
import { generateOxiCloudDataset } from './generate-oxicloud-dataset.js';
import type { OxiCloudDatasetOptions } from './options.js';
import { describeOxiCloudDatasetReport, type OxiCloudDatasetReport } from './report.js';
import { listThumbnailHashes, THUMBNAIL_SIZES } from './thumbnails.js';

const MiB = 1024 * 1024;
const SMALL: OxiCloudDatasetOptions = {
  users: 8,
  admins: 2,
  externalUsers: 3,
  sharedDrives: 3,
  groups: 1,
  membersPerGroup: 3,
  filesPerDrive: 24,
  multiChunkFileShare: 0.1,
  legacyFileShare: 0.12,
  emptyFileShare: 0.04,
  dedupShare: 0.2,
  sharedChunkShare: 0.4,
  multiChunkSize: { min: MiB + 1, max: MiB + 400_000 },
  trashedFolderShare: 0.2,
  trashedFileShare: 0.08,
  oldTrashShare: 0.4,
  seed: 7,
};

interface Fixture {
  db: TestDatabase;
  dir: string;
  blobs: LocalFsBlobStorage;
}

const fixtures: Fixture[] = [];

async function fixture(): Promise<Fixture> {
  const db = await createTestDatabase({ domain: 'oxicloud' });
  const dir = await mkdtemp(join(tmpdir(), 'oxicloud-oxi-dataset-'));
  const f = { db, dir, blobs: new LocalFsBlobStorage({ root: join(dir, '.blobs') }) };
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
  return Number((await db.pool.query(sql)).rows[0]?.n);
}

/** What the same seed must reproduce: names, paths, sizes, hashes, kinds and counts (never ids or times). */
async function fingerprint(db: TestDatabase): Promise<unknown> {
  const q = async (sql: string) => (await db.pool.query(sql)).rows;
  return {
    users: await q(
      'SELECT username, email, role, is_external, storage_used_bytes FROM auth.users ORDER BY username',
    ),
    folders: await q(
      `SELECT d.kind, r.name AS drive, f.path, f.is_trashed, f.original_parent_id IS NOT NULL AS trash_root
         FROM storage.folders f JOIN storage.drives d ON d.id = f.drive_id JOIN storage.folders r ON r.id = d.root_folder_id
        ORDER BY 2, 3, 4`,
    ),
    files: await q(
      `SELECT fo.path, f.name, f.blob_hash, f.size, f.mime_type, f.is_trashed
         FROM storage.files f JOIN storage.folders fo ON fo.id = f.folder_id ORDER BY f.name`,
    ),
    manifests: await q(
      'SELECT file_hash, chunk_hashes, chunk_sizes, ref_count FROM storage.chunk_manifests ORDER BY file_hash',
    ),
    blobs: await q('SELECT hash, size, ref_count, content_type FROM storage.blobs ORDER BY hash'),
  };
}

describe('a clean OxiCloud-shaped dataset', () => {
  let f: Fixture;
  let report: OxiCloudDatasetReport;

  beforeAll(async () => {
    f = await fixture();
    report = await generateOxiCloudDataset({
      pool: f.db.pool,
      blobs: f.blobs,
      storageRoot: f.dir,
      options: SMALL,
    });
  });

  it('holds every content kind, dedup, shared chunks, old trash, externals and groups, as the report counts them', async () => {
    const c = report.counts;
    expect(c.users).toBe(8);
    expect(c.files).toBe((8 + 3) * 24);
    for (const k of [
      'multiChunkFiles',
      'oneChunkFiles',
      'emptyFiles',
      'legacyFiles',
      'imageFiles',
      'dedupFiles',
      'sharedChunks',
      'oldTrashedFiles',
      'trashedFolders',
      'thumbnails',
    ] as const) {
      expect(c[k], k).toBeGreaterThan(0);
    }
    expect(c.multiChunkFiles + c.oneChunkFiles + c.emptyFiles + c.legacyFiles).toBe(c.files);
    expect(describeOxiCloudDatasetReport(report)).toContain(
      `${c.files} files (${c.multiChunkFiles} multi-chunk, ${c.oneChunkFiles} one-chunk, ${c.emptyFiles} empty, ${c.legacyFiles} legacy;`,
    );
    expect(await count(f.db, 'SELECT count(*) AS n FROM storage.files')).toBe(c.files);
    expect(await count(f.db, 'SELECT count(*) AS n FROM storage.folders')).toBe(c.folders);
    expect(await count(f.db, 'SELECT count(*) AS n FROM storage.folders WHERE is_trashed')).toBe(
      c.trashedFolders,
    );
    expect(await count(f.db, 'SELECT count(*) AS n FROM storage.chunk_manifests')).toBe(c.manifests);
    expect(await count(f.db, 'SELECT count(*) AS n FROM storage.blobs WHERE content_type IS NULL')).toBe(
      c.chunkBlobs,
    );
    expect(await count(f.db, 'SELECT count(*) AS n FROM storage.blobs WHERE content_type IS NOT NULL')).toBe(
      c.legacyBlobs,
    );
    expect(await count(f.db, 'SELECT count(*) AS n FROM storage.role_grants')).toBe(c.grants);
    // Share links: each has its one viewer token grant on its file (§12 item 21).
    expect(c.shares).toBeGreaterThan(0);
    expect(
      await count(
        f.db,
        `SELECT count(*) AS n FROM storage.shares s JOIN storage.role_grants g
            ON g.subject_type = 'token' AND g.subject_id = s.id AND g.role = 'viewer'
           AND g.resource_type = 'file' AND g.resource_id = s.item_id::uuid`,
      ),
    ).toBe(c.shares);
    // Faces: a few on live images, each with its file's content hash (§10).
    expect(c.faces).toBeGreaterThan(0);
    expect(
      await count(
        f.db,
        `SELECT count(*) AS n FROM faces.faces fa JOIN storage.files fi ON fi.id = fa.file_id
          WHERE fa.blob_hash = fi.blob_hash AND fi.mime_type LIKE 'image/%' AND NOT fi.is_trashed`,
      ),
    ).toBe(c.faces);
    expect(await count(f.db, 'SELECT COALESCE(sum(size), 0) AS n FROM storage.blobs')).toBe(c.blobBytes);
    expect(
      await count(
        f.db,
        "SELECT count(*) AS n FROM storage.files WHERE trashed_at < now() - interval '30 days'",
      ),
    ).toBe(c.oldTrashedFiles);
    expect(
      await count(f.db, 'SELECT count(*) AS n FROM storage.chunk_manifests WHERE chunk_count >= 2'),
    ).toBeGreaterThan(0);
  });

  it('creates drives as the four-write does: personal with one user owner, shared with user and group owners', async () => {
    const personal = (
      await f.db.pool.query(
        `SELECT d.quota_bytes, d.policies, r.name, r.parent_id, d.default_for_user = g.subject_id AS owner_is_default,
                g.subject_type, u.is_external
           FROM storage.drives d JOIN storage.folders r ON r.id = d.root_folder_id
           JOIN storage.role_grants g ON g.resource_type = 'drive' AND g.resource_id = d.id AND g.role = 'owner'
           JOIN auth.users u ON u.id = d.default_for_user
          WHERE d.kind = 'personal'`,
      )
    ).rows;
    expect(personal).toHaveLength(8);
    for (const p of personal) {
      expect(p).toEqual({
        quota_bytes: null,
        policies: { include_in_photo_index: true, include_in_music_index: true },
        name: 'Personal',
        parent_id: null,
        owner_is_default: true,
        subject_type: 'user',
        is_external: false,
      });
    }
    const sharedOwners = (
      await f.db.pool.query(
        `SELECT g.subject_type, count(*)::int AS n FROM storage.drives d
           JOIN storage.role_grants g ON g.resource_type = 'drive' AND g.resource_id = d.id AND g.role = 'owner'
          WHERE d.kind = 'shared' AND d.default_for_user IS NULL AND d.policies = '{}' AND d.quota_bytes > 0
          GROUP BY 1 ORDER BY 1`,
      )
    ).rows;
    expect(sharedOwners).toEqual([
      { subject_type: 'group', n: 2 },
      { subject_type: 'user', n: 2 },
    ]);
    expect(await count(f.db, 'SELECT count(*) AS n FROM auth.subject_group_members')).toBe(3);
    expect(await count(f.db, "SELECT count(*) AS n FROM auth.users WHERE role = 'admin'")).toBe(2);
    // Externals: no drive, no storage, a grant each.
    expect(
      await count(
        f.db,
        `SELECT count(*) AS n FROM auth.users u WHERE u.is_external AND u.storage_used_bytes = 0
            AND NOT EXISTS (SELECT 1 FROM storage.drives d WHERE d.default_for_user = u.id)
            AND EXISTS (SELECT 1 FROM storage.role_grants g WHERE g.subject_id = u.id AND g.role <> 'owner')`,
      ),
    ).toBe(3);
    // Every id is a random UUIDv4 (the schema's gen_random_uuid()).
    const v4 = "'^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'";
    for (const t of [
      'auth.users',
      'storage.drives',
      'storage.folders',
      'storage.files',
      'storage.role_grants',
    ]) {
      expect(await count(f.db, `SELECT count(*) AS n FROM ${t} WHERE id::text !~ ${v4}`), t).toBe(0);
    }
  });

  it('stores content as the upload path does: empty manifest without a blob row, one-chunk hash shared, legacy without manifest', async () => {
    const empty = (
      await f.db.pool.query(
        'SELECT cardinality(chunk_hashes) AS n, total_size, chunk_count, ref_count FROM storage.chunk_manifests WHERE file_hash = $1',
        [BLAKE3_EMPTY],
      )
    ).rows;
    expect(empty).toEqual([{ n: 0, total_size: '0', chunk_count: 0, ref_count: report.counts.emptyFiles }]);
    expect(await count(f.db, `SELECT count(*) AS n FROM storage.blobs WHERE hash = '${BLAKE3_EMPTY}'`)).toBe(
      0,
    );
    expect(
      await count(
        f.db,
        `SELECT count(*) AS n FROM storage.chunk_manifests m JOIN storage.blobs b ON b.hash = m.file_hash
          WHERE m.chunk_count = 1 AND m.chunk_hashes[1] = m.file_hash AND b.content_type IS NULL`,
      ),
    ).toBeGreaterThan(0);
    expect(
      await count(
        f.db,
        `SELECT count(*) AS n FROM storage.blobs b WHERE b.content_type IS NOT NULL
            AND EXISTS (SELECT 1 FROM storage.chunk_manifests m WHERE m.file_hash = b.hash OR m.chunk_hashes @> ARRAY[b.hash::text])`,
      ),
    ).toBe(0);
    // A chunk repeated inside a manifest or shared by two: counted once per manifest.
    expect(
      await count(
        f.db,
        `SELECT count(*) AS n FROM storage.blobs b WHERE b.ref_count >= 2 AND b.content_type IS NULL`,
      ),
    ).toBe(report.counts.sharedChunks);
  });

  it('satisfies every §12 invariant 1–20 (and 22): each check finds nothing', async () => {
    const found = await checkInvariants(f.db.pool, f.blobs, f.dir);
    const broken = Object.entries(found).filter(([, ids]) => ids.length > 0);
    expect(broken).toEqual([]);
  });

  it("hashes every file's bytes, read back through the port, to its blob_hash", async () => {
    const files = (
      await f.db.pool.query<{
        blob_hash: string;
        size: string;
        chunk_hashes: string[] | null;
        chunk_sizes: string[] | null;
        total_size: string | null;
        chunk_count: number | null;
      }>(
        `SELECT DISTINCT f.blob_hash, f.size, m.chunk_hashes, m.chunk_sizes, m.total_size, m.chunk_count
           FROM storage.files f LEFT JOIN storage.chunk_manifests m ON m.file_hash = f.blob_hash`,
      )
    ).rows;
    expect(files.length).toBeGreaterThan(50);
    for (const r of files) {
      const content =
        r.chunk_hashes === null
          ? { kind: 'legacy' as const, hash: r.blob_hash, size: Number(r.size) }
          : manifestContent({
              fileHash: r.blob_hash,
              chunkHashes: r.chunk_hashes,
              chunkSizes: (r.chunk_sizes ?? []).map(Number),
              totalSize: Number(r.total_size),
              chunkCount: r.chunk_count ?? 0,
            });
      const digest = await hashFileContent(content, f.blobs);
      expect(digest).toEqual({ hash: r.blob_hash, size: Number(r.size) });
    }
  });

  it('writes the three thumbnails of every image content, keyed by its file hash', async () => {
    const images = (
      await f.db.pool.query<{ blob_hash: string }>(
        "SELECT DISTINCT blob_hash FROM storage.files WHERE mime_type = 'image/jpeg' ORDER BY 1",
      )
    ).rows.map((r) => r.blob_hash);
    expect(images.length).toBeGreaterThan(0);
    for (const size of THUMBNAIL_SIZES)
      expect((await listThumbnailHashes(f.dir, size)).sort()).toEqual(images);
    expect(report.counts.thumbnails).toBe(images.length * 3);
  });

  it('gives the same names, paths, sizes, hashes and counts for the same seed (ids differ)', async () => {
    const again = await fixture();
    const second = await generateOxiCloudDataset({ pool: again.db.pool, blobs: again.blobs, options: SMALL });
    expect(second.counts).toEqual({ ...report.counts, thumbnails: 0 });
    expect(await fingerprint(again.db)).toEqual(await fingerprint(f.db));
    const ids = async (db: TestDatabase) =>
      (await db.pool.query('SELECT id FROM storage.drives ORDER BY id')).rows;
    expect(await ids(again.db)).not.toEqual(await ids(f.db));
    // A second run with the same seed into the same database is refused, and writes nothing.
    const error = await generateOxiCloudDataset({
      pool: again.db.pool,
      blobs: again.blobs,
      options: SMALL,
    }).catch((e: unknown) => e);
    expect(isDatasetError(error, 'ALREADY_SEEDED')).toBe(true);
  });

  it('has checks that can fail, those no fault maps to included (run last: it breaks the dataset)', async () => {
    const q = (sql: string) => f.db.pool.query(sql);
    // The path cascade carries the root's new path down, so only the root breaks rule 1.
    await q(
      "UPDATE storage.folders SET path = path || '-x' WHERE id = (SELECT root_folder_id FROM storage.drives ORDER BY id LIMIT 1)",
    );
    await q(
      'UPDATE storage.drives SET root_folder_id = NULL WHERE id = (SELECT id FROM storage.drives ORDER BY id DESC LIMIT 1)',
    );
    await q(
      'UPDATE storage.chunk_manifests SET chunk_count = chunk_count + 1 WHERE file_hash = (SELECT min(file_hash) FROM storage.chunk_manifests)',
    );
    await q(
      "UPDATE storage.files SET media_sort_date = created_at - interval '1 day' WHERE id = (SELECT min(id::text)::uuid FROM storage.files)",
    );
    const found = await checkInvariants(f.db.pool, f.blobs, f.dir);
    const broken = Object.entries(found)
      .filter(([, ids]) => ids.length > 0)
      .map(([name, ids]) => [name, ids.length]);
    // The drive without a root also leaves its root folder without a drive pointing at it (rule 4).
    expect(Object.fromEntries(broken)).toEqual({
      rootPath: 1,
      driveRoot: 1,
      folderDrive: 1,
      manifestShape: 1,
      mediaSortDate: 1,
    });
  });
});

/** The check of `checkInvariants` each fault must show up in, and nowhere else. */
describe('every ported fault', () => {
  let f: Fixture;
  let report: OxiCloudDatasetReport;

  beforeAll(async () => {
    f = await fixture();
    report = await generateOxiCloudDataset({
      pool: f.db.pool,
      blobs: f.blobs,
      storageRoot: f.dir,
      backdateBlob: backdateLocalBlob((h) => f.blobs.pathOf(h)),
      options: { ...SMALL, users: 12, sharedDrives: 6, seed: 11, faults: [...OXICLOUD_FAULT_NAMES] },
    });
  });

  it('is injected once per kind, in order, each on resources of its own', () => {
    expect(report.faults.map((r) => r.fault)).toEqual([...OXICLOUD_FAULT_NAMES]);
    // One resource each; a shared root: both drives and the root folder.
    for (const r of report.faults)
      expect(r.resourceIds, r.fault).toHaveLength(r.fault === 'drive_root_shared' ? 3 : 1);
    const all = report.faults.flatMap((r) => r.resourceIds);
    expect(new Set(all).size).toBe(all.length);
  });

  it('produces exactly its drift: each check finds the ids of the faults mapped to it, and nothing else', async () => {
    const found = await checkInvariants(f.db.pool, f.blobs, f.dir);
    // Every check the faults map to finds something (so a check that finds nothing cannot pass here).
    for (const name of new Set(Object.values(OXICLOUD_FAULT_INVARIANT)))
      expect(found[name], name).not.toEqual([]);
    const expected: Record<string, string[]> = Object.fromEntries(Object.keys(found).map((k) => [k, []]));
    for (const r of report.faults)
      for (const res of r.resources) {
        const also = r.expect.also?.on === res.type ? OXICLOUD_FAULT_ALSO_INVARIANT[r.fault] : undefined;
        expected[also ?? OXICLOUD_FAULT_INVARIANT[r.fault]]?.push(res.id);
      }
    for (const k of Object.keys(expected)) expected[k]?.sort();
    expect(found).toEqual(expected);
  });
});

describe('faults the clean dataset cannot hold', () => {
  it('are refused before anything is committed, and the bytes written are removed again', async () => {
    const f = await fixture();
    const error = await generateOxiCloudDataset({
      pool: f.db.pool,
      blobs: f.blobs,
      options: { ...SMALL, sharedDrives: 0, faults: ['drive_without_owner'] },
    }).catch((e: unknown) => e);
    expect(isDatasetError(error, 'FAULT_NOT_APPLICABLE')).toBe(true);
    expect(String((error as Error).message)).toMatch(/drive_without_owner.*sharedDrives/);
    expect(await count(f.db, 'SELECT count(*) AS n FROM auth.users')).toBe(0);
    expect(await f.blobs.list({ limit: 10 })).toEqual([]);
  });
});
