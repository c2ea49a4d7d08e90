/**
 * The blob deletion protocol (migration 0007) on real Postgres and a real
 * local blob store: dedup_gc never deletes the bytes of a live file, whether
 * a file insert races it, its ref_count lies, or its row was re-inserted.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultRunArgs, type JobOutcomeOk } from '@oxicloud/scheduler';
import {
  blake3Hex,
  isStorageError,
  LocalFsBlobStorage,
  PgOrphanBlobRepository,
  reserveBlob,
  type StorageDatabase,
} from '@oxicloud/storage';
import { createDedupGcJob, dedupGcConfigFromEnv } from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ago,
  HOUR,
  insertBlob,
  insertDrive,
  insertFile,
  insertUser,
  recordingLogger,
  storageDb,
} from './part1-fixtures.js';

const ITERATIONS = 20;
const ORPHANS_PER_ITERATION = 40;

describe('dedup_gc deletion protocol on Postgres + LocalFsBlobStorage', () => {
  let db: TestDatabase;
  let root: string;
  let storage: LocalFsBlobStorage;
  let drive: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    drive = await insertDrive(db.pool, await insertUser(db.pool, 'owner'), 'main');
  });
  afterAll(async () => {
    await db.drop();
  });
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'oxicloud-gc-protocol-'));
    storage = new LocalFsBlobStorage({ root });
    await db.pool.query('DELETE FROM storage.files; DELETE FROM storage.blobs');
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const signal = () => new AbortController().signal;
  /** The local store, a little slower to delete (as a real disk or S3 is), so the race window is wide. */
  const slowDeletes = () => ({
    delete: async (hash: string) => {
      await new Promise((r) => setTimeout(r, 2));
      return storage.delete(hash);
    },
  });
  const gcJob = (batchSize = 4, logger = recordingLogger()) =>
    createDedupGcJob({
      repository: new PgOrphanBlobRepository(storageDb(db.pool)),
      blobs: slowDeletes(),
      config: { ...dedupGcConfigFromEnv({}), batchSize },
      logger,
    });

  /** Every file must have a live (unmarked) blob row, bytes, and a ref_count equal to its files. */
  async function expectNoLiveFileWithoutBytes(): Promise<number> {
    const { rows } = await db.pool.query<{ blob_hash: string; has_row: boolean; marked: boolean }>(
      `SELECT DISTINCT f.blob_hash, b.hash IS NOT NULL AS has_row, b.deleting_at IS NOT NULL AS marked
         FROM storage.files f LEFT JOIN storage.blobs b ON b.hash = f.blob_hash`,
    );
    const broken: string[] = [];
    for (const r of rows) {
      if (!r.has_row) broken.push(`${r.blob_hash}: no blob row`);
      else if (r.marked) broken.push(`${r.blob_hash}: row marked as being deleted`);
      else if (!(await storage.exists(r.blob_hash))) broken.push(`${r.blob_hash}: no bytes`);
    }
    expect(broken).toEqual([]);
    const drift = await db.pool.query(
      `SELECT b.hash FROM storage.blobs b
        WHERE b.ref_count <> (SELECT count(*) FROM storage.files f WHERE f.blob_hash = b.hash)`,
    );
    expect(drift.rows).toEqual([]);
    return rows.length;
  }

  it(`${ITERATIONS} GC runs (with and without force) race file inserts from another connection (plain INSERT and reserveBlob): no file ends without its blob`, async () => {
    const other = new pg.Pool({ connectionString: db.url, max: 1 });
    const otherDb = new Kysely<StorageDatabase>({ dialect: new PostgresDialect({ pool: other }) });
    const totals = {
      plainInserted: 0,
      plainRefused: 0,
      plainNoRow: 0,
      reserved: 0,
      reservedWrote: 0,
      gcDeleted: 0,
    };
    try {
      for (let iteration = 0; iteration < ITERATIONS; iteration++) {
        await db.pool.query('DELETE FROM storage.files; DELETE FROM storage.blobs');
        const orphans: { hash: string; bytes: Uint8Array }[] = [];
        for (let i = 0; i < ORPHANS_PER_ITERATION; i++) {
          const content = `race ${iteration} orphan ${i} ${'x'.repeat(i)}`;
          const blob = await insertBlob(db.pool, content, { storage, orphanedAt: ago(2 * HOUR) });
          orphans.push({ hash: blob.hash, bytes: new TextEncoder().encode(content) });
        }
        const force = iteration % 2 === 1;
        let gcDone = false;
        const gc = gcJob()
          .run({ force }, signal())
          .finally(() => {
            gcDone = true;
          });
        let n = 0;
        while (!gcDone) {
          const target = orphans[(n * 7 + iteration) % orphans.length]!;
          const name = `f-${iteration}-${n}`;
          if (n % 2 === 0) {
            // The plain INSERT of the issue: the file takes the blob's hash and size from its row.
            try {
              const result = await other.query(
                `INSERT INTO storage.files (drive_id, name, blob_hash, size)
                 SELECT $1, $2, b.hash, b.size FROM storage.blobs b WHERE b.hash = $3`,
                [drive, name, target.hash],
              );
              if (result.rowCount === 1) totals.plainInserted += 1;
              else totals.plainNoRow += 1;
            } catch (error) {
              const code = (error as { code?: string }).code;
              // The insert lost the race: a clear refusal, never a file without bytes.
              expect(['OXB01', 'OXB02']).toContain(code);
              expect((error as Error).message).toMatch(
                /blob [0-9a-f]{64} (is being deleted|has no storage\.blobs row)/,
              );
              totals.plainRefused += 1;
            }
          } else {
            // The upload path: reserve, write the bytes if needed, insert the file, one transaction.
            await otherDb.transaction().execute(async (trx) => {
              const blob = await reserveBlob(trx, { hash: target.hash, size: target.bytes.byteLength });
              if (blob.writeBytes) {
                await storage.put(target.hash, target.bytes, target.bytes.byteLength);
                totals.reservedWrote += 1;
              }
              await trx
                .insertInto('storage.files')
                .values({ drive_id: drive, name, blob_hash: target.hash, size: target.bytes.byteLength })
                .execute();
            });
            totals.reserved += 1;
          }
          n += 1;
        }
        const outcome = (await gc) as JobOutcomeOk;
        expect(outcome.kind).toBe('ok');
        totals.gcDeleted += outcome.count;
        await expectNoLiveFileWithoutBytes();
        const marked = await db.pool.query('SELECT hash FROM storage.blobs WHERE deleting_at IS NOT NULL');
        expect(marked.rows).toEqual([]);
        // Every blob GC left alone is referenced, or still an orphan with its bytes.
        const { rows: left } = await db.pool.query<{ hash: string }>('SELECT hash FROM storage.blobs');
        for (const r of left) expect(await storage.exists(r.hash)).toBe(true);
      }
    } finally {
      await otherDb.destroy();
    }
    // The race was really run: GC deleted, inserts landed, some lost and were refused, reserves re-created bytes.
    expect(totals.gcDeleted).toBeGreaterThan(0);
    expect(totals.plainInserted).toBeGreaterThan(0);
    expect(totals.reserved).toBeGreaterThan(0);
    expect(totals.plainRefused + totals.plainNoRow).toBeGreaterThan(0);
    expect(totals.reservedWrote).toBeGreaterThan(0);
  }, 180_000);

  it('a hand-lowered ref_count does not fool GC: the bytes stay and the skip is counted (with and without force)', async () => {
    const live = [];
    for (let i = 0; i < 3; i++) {
      const blob = await insertBlob(db.pool, `live blob ${i}`, { storage });
      for (let j = 0; j < 3; j++) {
        await insertFile(db.pool, {
          driveId: drive,
          name: `live-${i}-${j}`,
          hash: blob.hash,
          size: blob.size,
        });
      }
      live.push(blob.hash);
    }
    const orphan = await insertBlob(db.pool, 'a real orphan', { storage, orphanedAt: ago(2 * HOUR) });
    await db.pool.query(
      `UPDATE storage.blobs SET ref_count = 0, orphaned_at = now() - interval '2 hours' WHERE hash = ANY($1::text[])`,
      [live],
    );
    const logger = recordingLogger();
    const outcome = (await gcJob(2, logger).run(defaultRunArgs, signal())) as JobOutcomeOk;
    expect(outcome.kind).toBe('ok');
    expect(outcome.extra).toMatchObject({ blobs_deleted: 1, skipped_referenced: 3, blobs_kept: 0 });
    const line = logger.lines.find((l) => l.fields['event'] === 'dedup_gc.skipped_referenced');
    expect(line?.level).toBe('warn');
    expect(line?.fields['count']).toBe(3);
    expect(await storage.exists(orphan.hash)).toBe(false);
    for (const hash of live) expect(await storage.exists(hash)).toBe(true);

    const forced = (await gcJob(2).run({ force: true }, signal())) as JobOutcomeOk;
    expect(forced.extra).toMatchObject({ blobs_deleted: 0, skipped_referenced: 3 });
    for (const hash of live) expect(await storage.exists(hash)).toBe(true);
    const { rows } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM storage.files f JOIN storage.blobs b ON b.hash = f.blob_hash
        WHERE b.deleting_at IS NULL`,
    );
    expect(rows[0]!.n).toBe(9);
  });

  it('a re-inserted row of a referenced blob gets its real ref_count, no orphaned_at, and is not collected', async () => {
    const blob = await insertBlob(db.pool, 'blob whose row is repaired', { storage });
    await insertFile(db.pool, { driveId: drive, name: 'a', hash: blob.hash, size: blob.size });
    await insertFile(db.pool, { driveId: drive, name: 'b', hash: blob.hash, size: blob.size });
    await db.pool.query('DELETE FROM storage.blobs WHERE hash = $1', [blob.hash]);
    // What a repair of a missing blob row does.
    await db.pool.query('INSERT INTO storage.blobs (hash, size) VALUES ($1, $2)', [blob.hash, blob.size]);
    const { rows } = await db.pool.query('SELECT ref_count, orphaned_at FROM storage.blobs WHERE hash = $1', [
      blob.hash,
    ]);
    expect(rows[0]).toEqual({ ref_count: 2, orphaned_at: null });
    const outcome = (await gcJob().run({ force: true }, signal())) as JobOutcomeOk;
    expect(outcome.extra).toMatchObject({ blobs_deleted: 0, skipped_referenced: 0 });
    expect(await storage.exists(blob.hash)).toBe(true);
  });

  it('the triggers refuse a file referencing a marked blob (OXB01) or a missing row (OXB02), by INSERT and by UPDATE', async () => {
    const marked = await insertBlob(db.pool, 'marked blob', { storage });
    await db.pool.query('UPDATE storage.blobs SET deleting_at = now() WHERE hash = $1', [marked.hash]);
    const missing = blake3Hex(new TextEncoder().encode('never stored'));
    const codeOf = async (p: Promise<unknown>) =>
      p.then(
        () => 'none',
        (e: { code?: string }) => e.code,
      );
    expect(
      await codeOf(insertFile(db.pool, { driveId: drive, name: 'm', hash: marked.hash, size: 11 })),
    ).toBe('OXB01');
    expect(await codeOf(insertFile(db.pool, { driveId: drive, name: 'x', hash: missing, size: 1 }))).toBe(
      'OXB02',
    );
    const live = await insertBlob(db.pool, 'live blob', { storage });
    const file = await insertFile(db.pool, { driveId: drive, name: 'l', hash: live.hash, size: live.size });
    expect(
      await codeOf(
        db.pool.query('UPDATE storage.files SET blob_hash = $2 WHERE id = $1', [file, marked.hash]),
      ),
    ).toBe('OXB01');
    expect(
      await codeOf(db.pool.query('UPDATE storage.files SET blob_hash = $2 WHERE id = $1', [file, missing])),
    ).toBe('OXB02');
    // Nothing half-written: the file still points at its blob, counts unchanged.
    const { rows } = await db.pool.query('SELECT hash, ref_count FROM storage.blobs ORDER BY ref_count');
    expect(rows).toEqual(
      expect.arrayContaining([
        { hash: marked.hash, ref_count: 0 },
        { hash: live.hash, ref_count: 1 },
      ]),
    );
    expect(await db.pool.query('SELECT count(*)::int AS n FROM storage.files')).toMatchObject({
      rows: [{ n: 1 }],
    });
  });

  describe('reserveBlob', () => {
    const kdb = () => storageDb(db.pool);
    const content = (text: string) => {
      const bytes = new TextEncoder().encode(text);
      return { hash: blake3Hex(bytes), size: bytes.byteLength };
    };

    it('creates a missing row, reuses a live one, and gives a referenced hash its real ref_count', async () => {
      const blob = content('reserve me');
      expect(await reserveBlob(kdb(), blob)).toEqual({ ...blob, status: 'created', writeBytes: true });
      expect(await reserveBlob(kdb(), blob)).toEqual({ ...blob, status: 'existing', writeBytes: false });

      const referenced = await insertBlob(db.pool, 'referenced, row lost', { storage });
      await insertFile(db.pool, { driveId: drive, name: 'r', hash: referenced.hash, size: referenced.size });
      await db.pool.query('DELETE FROM storage.blobs WHERE hash = $1', [referenced.hash]);
      expect((await reserveBlob(kdb(), referenced)).status).toBe('created');
      const { rows } = await db.pool.query(
        'SELECT ref_count, orphaned_at FROM storage.blobs WHERE hash = $1',
        [referenced.hash],
      );
      expect(rows[0]).toEqual({ ref_count: 1, orphaned_at: null });
    });

    it('revives a row a crashed GC left marked, and GC then leaves it alone', async () => {
      const blob = await insertBlob(db.pool, 'left marked by a crash', { orphanedAt: ago(2 * HOUR) });
      await db.pool.query('UPDATE storage.blobs SET deleting_at = now() WHERE hash = $1', [blob.hash]);
      const reserved = await reserveBlob(kdb(), blob);
      expect(reserved).toEqual({ ...blob, status: 'revived', writeBytes: true });
      await storage.put(blob.hash, new TextEncoder().encode('left marked by a crash'), blob.size);
      await insertFile(db.pool, { driveId: drive, name: 'revived', hash: blob.hash, size: blob.size });
      const outcome = (await gcJob().run({ force: true }, signal())) as JobOutcomeOk;
      expect(outcome.extra).toMatchObject({ blobs_deleted: 0, resumed: 0 });
      expect(await storage.exists(blob.hash)).toBe(true);
    });

    it('waits on a GC holding the row, then fails clearly after the lock timeout', async () => {
      const blob = await insertBlob(db.pool, 'held by GC', { storage, orphanedAt: ago(2 * HOUR) });
      await db.pool.query('UPDATE storage.blobs SET deleting_at = now() WHERE hash = $1', [blob.hash]);
      const gc = new pg.Client({ connectionString: db.url });
      await gc.connect();
      try {
        await gc.query('BEGIN');
        await gc.query('SELECT 1 FROM storage.blobs WHERE hash = $1 FOR UPDATE', [blob.hash]);
        const error = await reserveBlob(kdb(), blob, { lockTimeoutMs: 200 }).then(
          () => null,
          (e: unknown) => e,
        );
        expect(isStorageError(error, 'BLOB_BEING_DELETED')).toBe(true);
        expect((error as Error).message).toContain('held the blob row longer than 200 ms');
        // GC deletes the row and commits while an upload waits: the upload re-creates it.
        const waiting = reserveBlob(kdb(), blob, { lockTimeoutMs: 10_000 });
        await new Promise((r) => setTimeout(r, 100));
        await gc.query('DELETE FROM storage.blobs WHERE hash = $1', [blob.hash]);
        await gc.query('COMMIT');
        expect((await waiting).status).toBe('created');
      } finally {
        await gc.end();
      }
    });

    it('refuses a size that differs from the row and a bad hash, before writing anything', async () => {
      const blob = content('sized');
      await reserveBlob(kdb(), blob);
      await expect(reserveBlob(kdb(), { ...blob, size: blob.size + 1 })).rejects.toMatchObject({
        code: 'SIZE_MISMATCH',
      });
      await expect(reserveBlob(kdb(), { hash: 'nope', size: 1 })).rejects.toMatchObject({
        code: 'INVALID_HASH',
      });
    });
  });
});
