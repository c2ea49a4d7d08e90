import type { JobOutcomeOk } from '@oxicloud/scheduler';
import { defaultRunArgs } from '@oxicloud/scheduler';
import { PgTrashRepository } from '@oxicloud/storage';
import { createTrashCleanupJob, trashCleanupConfigFromEnv } from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ago,
  countRows,
  DAY,
  insertBlob,
  insertDrive,
  insertFile,
  insertFolder,
  insertUser,
  recordingLogger,
  storageDb,
} from './part1-fixtures.js';

describe('trash_cleanup on Postgres', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it('purges trash older than the retention with whole subtrees; keeps recent trash and live data', async () => {
    const pool = db.pool;
    const user = await insertUser(pool, 'alice');
    const drive = await insertDrive(pool, user, 'main');
    const old = ago(40 * DAY);
    const recent = ago(5 * DAY);

    // Old trashed subtree A/B/C with files at every level.
    const a = await insertFolder(pool, drive, null, 'A', old);
    const b = await insertFolder(pool, drive, a, 'B', old);
    const c = await insertFolder(pool, drive, b, 'C', old);
    // Old trashed D holding E, which was trashed only recently: E goes with its parent.
    const d = await insertFolder(pool, drive, null, 'D', old);
    const e = await insertFolder(pool, drive, d, 'E', recent);
    // Recently trashed R and a live folder L.
    const r = await insertFolder(pool, drive, null, 'R', recent);
    const l = await insertFolder(pool, drive, null, 'L');

    const shared = await insertBlob(pool, 'shared by purged and kept files');
    const onlyPurged = await insertBlob(pool, 'only referenced from purged trash');
    const blob = (name: string, folderId: string | null, trashedAt: Date | null, hash = shared) =>
      insertFile(pool, { driveId: drive, folderId, name, hash: hash.hash, size: hash.size, trashedAt });
    await blob('a1', a, old, onlyPurged);
    await blob('a2', a, old, onlyPurged);
    await blob('b1', b, old);
    await blob('c1', c, old);
    await blob('e1', e, recent);
    await blob('r1', r, recent);
    await blob('l-old', l, ago(31 * DAY));
    await blob('l-young', l, ago(29 * DAY));
    await blob('l-live', l, null);
    await blob('root-old', null, ago(60 * DAY));
    await blob('root-live', null, null);

    const config = { ...trashCleanupConfigFromEnv({}), batchSize: 2 };
    const job = createTrashCleanupJob({ repository: new PgTrashRepository(storageDb(pool)), config });
    const outcome = (await job.run(defaultRunArgs, new AbortController().signal)) as JobOutcomeOk;

    expect(outcome.kind).toBe('ok');
    // Folders A, B, C, D, E; files a1, a2, b1, c1, e1, l-old, root-old.
    expect(outcome.extra).toMatchObject({ folders: 5, files: 7, retention_days: 30 });
    expect(outcome.count).toBe(12);

    const folders = await pool.query<{ name: string }>('SELECT name FROM storage.folders ORDER BY name');
    expect(folders.rows.map((f) => f.name)).toEqual(['L', 'R']);
    const files = await pool.query<{ name: string }>('SELECT name FROM storage.files ORDER BY name');
    expect(files.rows.map((f) => f.name)).toEqual(['l-live', 'l-young', 'r1', 'root-live']);

    // The ref_count triggers ran: the blob only purged files used is now an orphan.
    const blobs = await pool.query<{ hash: string; ref_count: number; orphaned: boolean }>(
      'SELECT hash, ref_count, orphaned_at IS NOT NULL AS orphaned FROM storage.blobs',
    );
    const byHash = new Map(blobs.rows.map((row) => [row.hash, row]));
    expect(byHash.get(onlyPurged.hash)).toMatchObject({ ref_count: 0, orphaned: true });
    expect(byHash.get(shared.hash)).toMatchObject({ ref_count: 4, orphaned: false });

    // Nothing left to purge.
    const again = (await job.run(defaultRunArgs, new AbortController().signal)) as JobOutcomeOk;
    expect(again.count).toBe(0);
  });

  it('with retention 0 everything in the trash goes, across several batches', async () => {
    const fresh = await createTestDatabase();
    const pool = fresh.pool;
    const user = await insertUser(pool, 'bob');
    const drive = await insertDrive(pool, user, 'bulk');
    const blob = await insertBlob(pool, 'bulk blob');
    const now = ago(1000);
    for (let i = 0; i < 7; i++) {
      await insertFile(pool, {
        driveId: drive,
        name: `t${i}`,
        hash: blob.hash,
        size: blob.size,
        trashedAt: now,
      });
    }
    const trashedBefore = await countRows(pool, 'storage.files', 'is_trashed');
    expect(trashedBefore).toBe(7);
    const job = createTrashCleanupJob({
      repository: new PgTrashRepository(storageDb(pool)),
      config: trashCleanupConfigFromEnv({
        OXICLOUD_TRASH_RETENTION_DAYS: '0',
        OXICLOUD_TRASH_CLEANUP_BATCH_SIZE: '3',
      }),
    });
    const outcome = (await job.run(defaultRunArgs, new AbortController().signal)) as JobOutcomeOk;
    expect(outcome.count).toBe(trashedBefore);
    expect(outcome.extra['batches']).toBe(1 + Math.floor(trashedBefore / 3) + 1);
    expect(await countRows(pool, 'storage.files', 'is_trashed')).toBe(0);
    expect(await countRows(pool, 'storage.files', 'drive_id = $1', [drive])).toBe(0);
    await fresh.drop();
  });

  it('never purges live files or folders under a trashed folder past retention: the root is skipped, counted and named', async () => {
    const fresh = await createTestDatabase();
    const pool = fresh.pool;
    try {
      const drive = await insertDrive(pool, await insertUser(pool, 'carol'), 'main');
      const old = ago(40 * DAY);
      const blob = await insertBlob(pool, 'carol blob');
      const file = (name: string, folderId: string, trashedAt: Date | null) =>
        insertFile(pool, { driveId: drive, folderId, name, hash: blob.hash, size: blob.size, trashedAt });
      // T was trashed 40 days ago but 10 files in it, and a sub-folder S with a file, are live.
      const t = await insertFolder(pool, drive, null, 'T', old);
      for (let i = 0; i < 10; i++) await file(`live-${i}`, t, null);
      const s = await insertFolder(pool, drive, t, 'S');
      await file('live-in-s', s, null);
      await file('trashed-in-t', t, old);
      // U, inside T, is trashed with everything in it: it goes on its own.
      const u = await insertFolder(pool, drive, t, 'U', old);
      await file('trashed-in-u', u, old);
      // Z is old trash with nothing live: purged as before.
      const z = await insertFolder(pool, drive, null, 'Z', old);
      await file('trashed-in-z', z, old);

      const logger = recordingLogger();
      const job = createTrashCleanupJob({
        repository: new PgTrashRepository(storageDb(pool)),
        config: { ...trashCleanupConfigFromEnv({}), batchSize: 1 },
        logger,
      });
      const outcome = (await job.run(defaultRunArgs, new AbortController().signal)) as JobOutcomeOk;
      expect(outcome.kind).toBe('ok');
      // Folders U and Z with their files; then the trashed file left in T by the file phase.
      expect(outcome.extra).toMatchObject({ folders: 2, files: 3, skipped_live_descendants: 1 });

      const live = await pool.query<{ name: string }>('SELECT name FROM storage.files WHERE NOT is_trashed');
      expect(live.rows).toHaveLength(11);
      const folders = await pool.query<{ name: string }>('SELECT name FROM storage.folders ORDER BY name');
      expect(folders.rows.map((f) => f.name)).toEqual(['S', 'T']);
      const line = logger.lines.find((l) => l.fields['event'] === 'trash_cleanup.skipped_live_descendants');
      expect(line?.level).toBe('warn');
      expect(line?.fields['folder_ids']).toEqual([t]);

      // The next run skips it again (and does not loop on it).
      const again = (await job.run(defaultRunArgs, new AbortController().signal)) as JobOutcomeOk;
      expect(again.extra).toMatchObject({ folders: 0, files: 0, skipped_live_descendants: 1 });
      expect(await countRows(pool, 'storage.files', 'NOT is_trashed')).toBe(11);
    } finally {
      await fresh.drop();
    }
  });
});
