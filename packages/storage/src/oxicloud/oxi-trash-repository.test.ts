import type { JobOutcomeOk, Logger } from '@oxicloud/scheduler';
import { createTrashCleanupJob } from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { OxiCloudDatabase } from './database.js';
import {
  OXICLOUD_TRASH_RETENTION_DAYS_FLOOR,
  OxiTrashRepository,
  oxiTrashRetentionDays,
} from './oxi-trash-repository.js';
import { oxiTreeFixtures, randomHash, resetDomain } from './tree-fixtures.js';

let db: TestDatabase;
let kysely: Kysely<OxiCloudDatabase>;
let fx: ReturnType<typeof oxiTreeFixtures>;

interface World {
  driveId: string;
  rootId: string;
  frozen: { driveId: string; rootId: string };
  docs: string;
  liveFile: string;
}
let w: World;

async function seed(): Promise<World> {
  const alice = await fx.user('alice');
  const drive = await fx.personalDrive(alice);
  const frozen = await fx.sharedDrive(
    'Legal hold',
    { type: 'user', id: alice },
    { policies: { read_only: true } },
  );
  const docs = await fx.folder(drive.driveId, drive.rootId, 'docs');
  const liveFile = (await fx.file(drive.driveId, docs, 'keep.txt', 3)).id;
  return { driveId: drive.driveId, rootId: drive.rootId, frozen, docs, liveFile };
}

const ids = async (table: 'storage.files' | 'storage.folders') =>
  (await db.pool.query<{ id: string }>(`SELECT id FROM ${table} ORDER BY id`)).rows.map((r) => r.id).sort();

function purge(retentionDays: number, logger?: Logger) {
  const repository = new OxiTrashRepository(kysely, logger ? { logger } : {});
  const job = createTrashCleanupJob({
    repository,
    config: { intervalMs: null, retentionDays, batchSize: 2 },
  });
  return job.run({ force: false }, new AbortController().signal) as Promise<JobOutcomeOk>;
}

beforeAll(async () => {
  db = await createTestDatabase({ domain: 'oxicloud' });
  kysely = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool: db.pool }) });
  fx = oxiTreeFixtures(db.pool);
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  await resetDomain(db.pool);
  w = await seed();
});

describe('OxiTrashRepository: trash_cleanup with OxiCloud’s promises', () => {
  it('the floor is 30 days: oxiTrashRetentionDays raises a shorter retention, keeps a longer one', () => {
    expect(OXICLOUD_TRASH_RETENTION_DAYS_FLOOR).toBe(30);
    expect(oxiTrashRetentionDays(7)).toBe(30);
    expect(oxiTrashRetentionDays(0)).toBe(30);
    expect(oxiTrashRetentionDays(45)).toBe(45);
  });

  it('nothing trashed longer than 30 days → nothing purged, even with a 7-day retention', async () => {
    const f = await fx.file(w.driveId, w.docs, 'recent.txt', 1);
    await fx.trashFile(f.id, 8);
    const before = { files: await ids('storage.files'), folders: await ids('storage.folders') };
    const outcome = await purge(7);
    expect(outcome.kind).toBe('ok');
    expect(outcome.count).toBe(0);
    expect({ files: await ids('storage.files'), folders: await ids('storage.folders') }).toEqual(before);
  });

  it('a 29-day-old file and folder subtree survive a 7-day retention (told once); 31-day-old ones go, files before folders', async () => {
    const young = await fx.file(w.driveId, w.docs, 'young.txt', 1);
    await fx.trashFile(young.id, 29);
    const youngFolder = await fx.folder(w.driveId, w.rootId, 'young');
    const youngInner = await fx.file(w.driveId, youngFolder, 'in.txt', 1);
    await fx.trashFolder(youngFolder, 29);
    const old = await fx.file(w.driveId, w.docs, 'old.txt', 1);
    await fx.trashFile(old.id, 31);
    const oldFolder = await fx.folder(w.driveId, w.rootId, 'old');
    const oldSub = await fx.folder(w.driveId, oldFolder, 'sub');
    const oldInner = await fx.file(w.driveId, oldSub, 'in.txt', 1);
    await fx.trashFolder(oldFolder, 31);
    const warnings: object[] = [];
    const logger: Logger = {
      info: () => {},
      debug: () => {},
      error: () => {},
      warn: (f) => warnings.push(f),
    };
    const outcome = await purge(7, logger);
    expect(outcome.kind).toBe('ok');
    expect(outcome.extra).toMatchObject({ folders: 2, files: 2 });
    expect(await ids('storage.files')).toEqual([w.liveFile, young.id, youngInner.id].sort());
    expect(await ids('storage.folders')).toEqual([w.rootId, w.frozen.rootId, w.docs, youngFolder].sort());
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ event: 'trash_cleanup.retention_floor', floor_days: 30 });
    for (const gone of [old.id, oldInner.id]) expect(await ids('storage.files')).not.toContain(gone);
    for (const gone of [oldFolder, oldSub]) expect(await ids('storage.folders')).not.toContain(gone);
  });

  it('a longer retention is used as it is: a 31-day-old item survives 45 days of retention', async () => {
    const f = await fx.file(w.driveId, w.docs, 'old.txt', 1);
    await fx.trashFile(f.id, 31);
    const outcome = await purge(45);
    expect(outcome.count).toBe(0);
    expect(await ids('storage.files')).toContain(f.id);
  });

  it("a read_only drive's old trash stays (files and folders); the other drive's goes", async () => {
    const frozenFile = await fx.file(w.frozen.driveId, w.frozen.rootId, 'evidence.pdf', 1);
    await fx.trashFile(frozenFile.id, 90);
    const frozenFolder = await fx.folder(w.frozen.driveId, w.frozen.rootId, 'case');
    await fx.file(w.frozen.driveId, frozenFolder, 'mail.eml', 1);
    await fx.trashFolder(frozenFolder, 90);
    const gone = await fx.file(w.driveId, w.docs, 'gone.txt', 1);
    await fx.trashFile(gone.id, 90);
    const before = await ids('storage.files');
    // The frozen subtree is not even selected (nor locked).
    const cutoff = new Date(Date.now() - 31 * 86_400_000);
    expect(await new OxiTrashRepository(kysely).purgeFolderBatch(cutoff, 10, null)).toEqual({
      selected: 0,
      folders: 0,
      files: 0,
      skippedLiveDescendants: [],
      next: null,
    });
    const outcome = await purge(30);
    expect(outcome.count).toBe(1);
    expect(await ids('storage.files')).toEqual(before.filter((id) => id !== gone.id));
    expect(await ids('storage.folders')).toContain(frozenFolder);
  });

  it("deletes decrement storage.blobs only (the trigger); a manifest's ref_count is left to GC phase 1", async () => {
    const hash = randomHash();
    await db.pool.query(
      `INSERT INTO storage.chunk_manifests (file_hash, chunk_hashes, chunk_sizes, total_size, chunk_count, ref_count)
       VALUES ($1::varchar, ARRAY[$1::text], ARRAY[5]::bigint[], 5, 1, 1)`,
      [hash],
    );
    const f = await fx.file(w.driveId, w.docs, 'one-chunk.bin', 5, { hash });
    await fx.trashFile(f.id, 40);
    await purge(30);
    const blob = await db.pool.query('SELECT ref_count, orphaned_at FROM storage.blobs WHERE hash = $1', [
      hash,
    ]);
    expect(blob.rows[0].ref_count).toBe(0);
    expect(blob.rows[0].orphaned_at).not.toBeNull();
    const manifest = await db.pool.query(
      'SELECT ref_count FROM storage.chunk_manifests WHERE file_hash = $1',
      [hash],
    );
    expect(manifest.rows[0].ref_count).toBe(1);
  });

  it('a trashed folder still holding a live row (legacy trash), or a trashed drive root, is not purged', async () => {
    const legacy = await fx.folder(w.driveId, w.rootId, 'legacy');
    const liveInside = await fx.file(w.driveId, legacy, 'alive.txt', 1);
    await fx.trashFolder(legacy, 40);
    await db.pool.query('UPDATE storage.files SET is_trashed = false, trashed_at = NULL WHERE id = $1', [
      liveInside.id,
    ]);
    const alice2 = await fx.user('carol');
    const other = await fx.personalDrive(alice2);
    await fx.trashFolder(other.rootId, 40);
    const outcome = await purge(30);
    expect(outcome.extra).toMatchObject({ folders: 0, files: 0, skipped_live_descendants: 1 });
    expect(await ids('storage.folders')).toEqual(expect.arrayContaining([legacy, other.rootId]));
    const drives = await db.pool.query('SELECT id FROM storage.drives WHERE id = $1', [other.driveId]);
    expect(drives.rowCount).toBe(1);
  });
});
