/**
 * The repair actions on real Postgres and a real local blob store: each
 * plans without writing, applies what it planned, and refuses (writing
 * nothing) when the resource changed between plan and apply.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blake3Hex, LocalFsBlobStorage, PgRepairStore, reserveBlob } from '@oxicloud/storage';
import {
  type ActionLine,
  type BlobHasher,
  chooseLine,
  createRepairActions,
  RESTORE_PARENT,
  type RepairActions,
  type RepairFinding,
  type RepairLine,
  TRASH_CHILD,
} from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  insertBlob,
  insertDrive,
  insertFile,
  insertFolder,
  insertUser,
  storageDb,
} from './part1-fixtures.js';

let seq = 0;
function finding(checkName: string, kind: string, resourceId: string): RepairFinding {
  seq += 1;
  return { id: `f-${seq}`, checkName, kind, resourceId, lastSeenRunId: null, detail: {} };
}

function asAction(line: RepairLine): ActionLine {
  if (line.type !== 'action') throw new Error(`expected an action line, got: ${JSON.stringify(line)}`);
  return line;
}

describe('repair actions on Postgres + LocalFsBlobStorage', () => {
  let db: TestDatabase;
  let root: string;
  let storage: LocalFsBlobStorage;
  let actions: RepairActions;
  let store: PgRepairStore;
  let user: string;
  let drive: string;

  /** Real BLAKE3 over the stored bytes. */
  const hasher: BlobHasher = {
    async hashStoredBlob(hash) {
      const chunks: Uint8Array[] = [];
      for await (const chunk of await storage.get(hash)) chunks.push(chunk);
      const bytes = Buffer.concat(chunks);
      return { hash: blake3Hex(bytes), size: bytes.byteLength, head: bytes.subarray(0, 4096) };
    },
  };

  const one = async <T>(q: string, values: unknown[] = []): Promise<T> =>
    (await db.pool.query(q, values)).rows[0] as T;
  const usage = async () => ({
    drive: Number(
      (await one<{ v: string }>('SELECT used_bytes AS v FROM storage.drives WHERE id = $1', [drive])).v,
    ),
    user: Number(
      (await one<{ v: string }>('SELECT storage_used_bytes AS v FROM auth.users WHERE id = $1', [user])).v,
    ),
  });

  beforeAll(async () => {
    db = await createTestDatabase();
    root = await mkdtemp(join(tmpdir(), 'oxicloud-repair-'));
    storage = new LocalFsBlobStorage({ root });
    store = new PgRepairStore(storageDb(db.pool));
    actions = createRepairActions({ store, blobs: { blobs: storage, hasher } });
  });
  afterAll(async () => {
    await db.drop();
    await rm(root, { recursive: true, force: true });
  });
  beforeEach(async () => {
    await db.pool.query(
      'DELETE FROM storage.files; DELETE FROM storage.blobs; DELETE FROM storage.folders; DELETE FROM storage.drives; DELETE FROM auth.users',
    );
    user = await insertUser(db.pool, 'owner');
    drive = await insertDrive(db.pool, user, 'main');
  });

  /** A file of `content` on the drive with its blob row, bytes and consistent usage. */
  async function file(
    content: string,
    folderId: string | null = null,
  ): Promise<{ id: string; hash: string; size: number }> {
    const blob = await insertBlob(db.pool, content, { storage });
    const id = await insertFile(db.pool, {
      driveId: drive,
      folderId,
      name: content,
      hash: blob.hash,
      size: blob.size,
    });
    await db.pool.query('UPDATE storage.drives SET used_bytes = used_bytes + $2 WHERE id = $1', [
      drive,
      blob.size,
    ]);
    await db.pool.query('UPDATE auth.users SET storage_used_bytes = storage_used_bytes + $2 WHERE id = $1', [
      user,
      blob.size,
    ]);
    return { id, ...blob };
  }

  describe('drive used_bytes drift', () => {
    it('plans recorded → sum of the drive files, and applies it with the owner envelope moved by the same delta', async () => {
      await file('hello world');
      await db.pool.query('UPDATE storage.drives SET used_bytes = 1000 WHERE id = $1', [drive]);
      await db.pool.query('UPDATE auth.users SET storage_used_bytes = 1000 WHERE id = $1', [user]);
      const line = asAction(
        await actions.plan(finding('drives_consistency', 'drive_used_bytes_drift', drive)),
      );
      expect(line.action).toBe('recompute_drive_used_bytes');
      expect(line.before).toMatchObject({ used_bytes: 1000, files_bytes: 11 });
      expect(line.after).toEqual({ used_bytes: 11 });
      expect(line.summary).toContain('1,000 → 11');
      expect(line.derived).toEqual([
        { type: 'user', id: user, before: {}, after: { storage_used_bytes_delta: -989 } },
      ]);
      expect(await usage()).toEqual({ drive: 1000, user: 1000 }); // planning wrote nothing
      expect(await actions.apply(line)).toMatchObject({ status: 'applied', after: { used_bytes: 11 } });
      expect(await usage()).toEqual({ drive: 11, user: 11 });
    });

    it('skips when a file was added between plan and apply, naming what changed', async () => {
      await db.pool.query('UPDATE storage.drives SET used_bytes = 500 WHERE id = $1', [drive]);
      const line = asAction(
        await actions.plan(finding('drives_consistency', 'drive_used_bytes_drift', drive)),
      );
      await file('late upload');
      const before = await usage();
      const outcome = await actions.apply(line);
      expect(outcome.status).toBe('skipped');
      expect(outcome.status === 'skipped' && outcome.reason).toMatch(/files_bytes: planned 0, now 11/);
      expect(await usage()).toEqual(before);
    });
  });

  describe('user used_bytes drift', () => {
    it('sets the envelope to the sum of the drives; skips when the drift changed', async () => {
      await db.pool.query('UPDATE storage.drives SET used_bytes = 40 WHERE id = $1', [drive]);
      await db.pool.query('UPDATE auth.users SET storage_used_bytes = 7 WHERE id = $1', [user]);
      const line = asAction(await actions.plan(finding('drives_consistency', 'user_used_bytes_drift', user)));
      expect(line.after).toEqual({ storage_used_bytes: 40 });
      await db.pool.query('UPDATE auth.users SET storage_used_bytes = 8 WHERE id = $1', [user]);
      const refused = await actions.apply(line);
      expect(refused).toMatchObject({ status: 'skipped' });
      expect((await usage()).user).toBe(8);
      const again = asAction(
        await actions.plan(finding('drives_consistency', 'user_used_bytes_drift', user)),
      );
      expect(await actions.apply(again)).toMatchObject({ status: 'applied' });
      expect((await usage()).user).toBe(40);
    });
  });

  describe('path_mismatch / lpath_mismatch', () => {
    async function tree() {
      const a = await insertFolder(db.pool, drive, null, 'a');
      const b = await insertFolder(db.pool, drive, a, 'b');
      const c = await insertFolder(db.pool, drive, b, 'c');
      // Corrupt b and c directly (the triggers fire on parent_id/name only).
      await db.pool.query("UPDATE storage.folders SET path = '/x/b' WHERE id = $1", [b]);
      await db.pool.query("UPDATE storage.folders SET path = '/x/b/c', lpath = 'zz' WHERE id = $1", [c]);
      return { a, b, c };
    }
    const paths = async () =>
      (
        await db.pool.query<{ name: string; path: string; lpath: string }>(
          'SELECT name, path, lpath::text FROM storage.folders ORDER BY path',
        )
      ).rows;

    it('recomputes the folder from its parent chain and rewrites the subtree below', async () => {
      const { a, b, c } = await tree();
      const line = asAction(await actions.plan(finding('folders_consistency', 'path_mismatch', b)));
      expect(line.before).toMatchObject({ path: '/x/b' });
      expect(line.after).toEqual({ path: '/a/b', lpath: `${a}.${b}`.replaceAll('-', '') });
      expect(line.derived.map((d) => d.id)).toEqual([c]);
      expect(line.derived[0]?.after).toEqual({ path: '/a/b/c', lpath: `${a}.${b}.${c}`.replaceAll('-', '') });
      expect(await actions.apply(line)).toMatchObject({ status: 'applied', after: { rows_changed: 2 } });
      const after = await paths();
      expect(after.map((r) => r.path)).toEqual(['/a', '/a/b', '/a/b/c']);
      expect(after[2]?.lpath).toBe(`${a}.${b}.${c}`.replaceAll('-', ''));
    });

    it('skips when a user renamed the folder between plan and apply', async () => {
      const { b } = await tree();
      const line = asAction(await actions.plan(finding('folders_consistency', 'lpath_mismatch', b)));
      await db.pool.query("UPDATE storage.folders SET name = 'renamed' WHERE id = $1", [b]);
      const before = await paths();
      const outcome = await actions.apply(line);
      expect(outcome.status).toBe('skipped');
      expect(outcome.status === 'skipped' && outcome.reason).toMatch(
        /path: planned "\/x\/b", now "\/a\/renamed"/,
      );
      expect(await paths()).toEqual(before);
    });
  });

  describe('blob_size_mismatch', () => {
    it('sets the file size from the blob row and moves drive and user usage; skips when the size changed', async () => {
      const f = await file('twelve bytes');
      await db.pool.query('UPDATE storage.files SET size = 20 WHERE id = $1', [f.id]);
      await db.pool.query('UPDATE storage.drives SET used_bytes = 20 WHERE id = $1', [drive]);
      await db.pool.query('UPDATE auth.users SET storage_used_bytes = 20 WHERE id = $1', [user]);
      const line = asAction(await actions.plan(finding('files_consistency', 'blob_size_mismatch', f.id)));
      expect(line.after).toEqual({ size: 12 });
      expect(line.derived.map((d) => [d.type, d.after])).toEqual([
        ['drive', { used_bytes_delta: -8 }],
        ['user', { storage_used_bytes_delta: -8 }],
      ]);
      await db.pool.query('UPDATE storage.files SET size = 21 WHERE id = $1', [f.id]);
      expect(await actions.apply(line)).toMatchObject({ status: 'skipped' });
      await db.pool.query('UPDATE storage.files SET size = 20 WHERE id = $1', [f.id]);
      expect(await actions.apply(line)).toMatchObject({ status: 'applied' });
      expect(
        Number((await one<{ size: string }>('SELECT size FROM storage.files WHERE id = $1', [f.id])).size),
      ).toBe(12);
      expect(await usage()).toEqual({ drive: 12, user: 12 });
    });
  });

  describe('live row under a trashed parent', () => {
    async function setup() {
      const top = await insertFolder(db.pool, drive, null, 'top', new Date());
      const child = await insertFolder(db.pool, drive, top, 'child');
      const inner = await file('inner', child);
      return { top, child, inner };
    }
    const trashed = async (table: string, id: string) =>
      (await one<{ t: boolean }>(`SELECT is_trashed AS t FROM ${table} WHERE id = $1`, [id])).t;

    it('offers both choices, refuses without one, restores the parent when chosen', async () => {
      const { top, child } = await setup();
      const line = asAction(
        await actions.plan(finding('folders_consistency', 'parent_trashed_mismatch', child)),
      );
      expect(line.choices?.map((c) => c.id)).toEqual([RESTORE_PARENT, TRASH_CHILD]);
      expect(await actions.apply(line)).toMatchObject({
        status: 'skipped',
        reason: expect.stringMatching(/no choice/),
      });
      const chosen = chooseLine(line, RESTORE_PARENT);
      expect(chosen?.derived).toEqual([
        { type: 'folder', id: top, before: { is_trashed: true }, after: { is_trashed: false } },
      ]);
      expect(await actions.apply(chosen as ActionLine)).toMatchObject({ status: 'applied' });
      expect(await trashed('storage.folders', top)).toBe(false);
      expect(await trashed('storage.folders', child)).toBe(false);
    });

    it('trashes the folder and the live file below it when chosen', async () => {
      const { top, child, inner } = await setup();
      const line = asAction(
        await actions.plan(finding('folders_consistency', 'parent_trashed_mismatch', child)),
      );
      const chosen = chooseLine(line, TRASH_CHILD) as ActionLine;
      expect(chosen.derived.map((d) => d.id)).toEqual([child, inner.id]);
      expect(await actions.apply(chosen)).toMatchObject({ status: 'applied' });
      expect(await trashed('storage.folders', child)).toBe(true);
      expect(await trashed('storage.files', inner.id)).toBe(true);
      expect(await trashed('storage.folders', top)).toBe(true);
    });

    it('skips a file whose parent was restored meanwhile', async () => {
      const { top, inner } = await setup();
      const line = chooseLine(
        asAction(await actions.plan(finding('files_consistency', 'parent_folder_trashed', inner.id))),
        TRASH_CHILD,
      ) as ActionLine;
      await db.pool.query('UPDATE storage.folders SET is_trashed = FALSE, trashed_at = NULL');
      expect(await actions.apply(line)).toMatchObject({
        status: 'skipped',
        reason: expect.stringMatching(/trashed_ancestors/),
      });
      expect(await trashed('storage.files', inner.id)).toBe(false);
      expect(await trashed('storage.folders', top)).toBe(false);
    });
  });

  describe('orphan_blob and missing_blob', () => {
    async function bytesOnly(content: string) {
      const bytes = new TextEncoder().encode(content);
      const hash = blake3Hex(bytes);
      await storage.put(hash, bytes, bytes.byteLength);
      return { hash, size: bytes.byteLength, bytes };
    }

    it('bytes without a row or reference: a marked row first, then bytes, then row', async () => {
      const orphan = await bytesOnly('orphan bytes');
      const line = asAction(await actions.plan(finding('storage_consistency', 'orphan_blob', orphan.hash)));
      expect(line.action).toBe('delete_orphan_bytes');
      expect(line.before).toEqual({ row: null, referenced_by: 0, bytes_size: orphan.size });
      expect(await storage.exists(orphan.hash)).toBe(true);
      expect(await actions.apply(line)).toMatchObject({
        status: 'applied',
        after: { row: null, bytes_size: null },
      });
      expect(await storage.exists(orphan.hash)).toBe(false);
      expect(
        (await db.pool.query('SELECT 1 FROM storage.blobs WHERE hash = $1', [orphan.hash])).rowCount,
      ).toBe(0);
    });

    it('skips the deletion when a new upload references the orphan hash between plan and apply', async () => {
      const orphan = await bytesOnly('soon referenced');
      const line = asAction(await actions.plan(finding('storage_consistency', 'orphan_blob', orphan.hash)));
      const kdb = storageDb(db.pool);
      await kdb.transaction().execute(async (trx) => {
        await reserveBlob(trx, { hash: orphan.hash, size: orphan.size });
        await trx
          .insertInto('storage.files')
          .values({ drive_id: drive, name: 'up', blob_hash: orphan.hash, size: orphan.size })
          .execute();
      });
      const outcome = await actions.apply(line);
      expect(outcome).toMatchObject({
        status: 'skipped',
        reason: expect.stringMatching(/referenced_by: planned 0, now 1/),
      });
      expect(await storage.exists(orphan.hash)).toBe(true);
    });

    it('a marked row for orphan bytes is never written once a file references the hash', async () => {
      const orphan = await bytesOnly('referenced under the lock');
      await reserveBlob(storageDb(db.pool), { hash: orphan.hash, size: orphan.size });
      await insertFile(db.pool, { driveId: drive, name: 'late', hash: orphan.hash, size: orphan.size });
      await db.pool.query('DELETE FROM storage.blobs WHERE hash = $1', [orphan.hash]);
      const marked = await store.write((tx) => tx.insertMarkedBlobRow(orphan.hash, orphan.size));
      expect(marked).toBe(false);
      expect(
        (await db.pool.query('SELECT 1 FROM storage.blobs WHERE hash = $1', [orphan.hash])).rowCount,
      ).toBe(0);
    });

    it('skips delete_orphan_blob when an upload restarted the orphan grace between plan and apply', async () => {
      const blob = await insertBlob(db.pool, 'row orphan re-reserved', { storage });
      await db.pool.query(
        "UPDATE storage.blobs SET orphaned_at = now() - interval '2 days' WHERE hash = $1",
        [blob.hash],
      );
      const line = asAction(await actions.plan(finding('storage_consistency', 'orphan_blob', blob.hash)));
      expect(line.action).toBe('delete_orphan_blob');
      // An upload reserves the existing row (outside a transaction); its file row is not inserted yet.
      await reserveBlob(storageDb(db.pool), { hash: blob.hash, size: blob.size });
      expect(await actions.apply(line)).toMatchObject({
        status: 'skipped',
        reason: expect.stringMatching(/orphaned_at/),
      });
      const row = await one<{ deleting_at: Date | null }>(
        'SELECT deleting_at FROM storage.blobs WHERE hash = $1',
        [blob.hash],
      );
      expect(row.deleting_at).toBeNull();
      expect(await storage.exists(blob.hash)).toBe(true);
    });

    it('an unreferenced row with ref_count 0: deleted through the protocol as dedup_gc does', async () => {
      const blob = await insertBlob(db.pool, 'row orphan', { storage });
      const line = asAction(await actions.plan(finding('storage_consistency', 'orphan_blob', blob.hash)));
      expect(line.action).toBe('delete_orphan_blob');
      expect(await actions.apply(line)).toMatchObject({ status: 'applied' });
      expect(await storage.exists(blob.hash)).toBe(false);
      expect((await db.pool.query('SELECT 1 FROM storage.blobs WHERE hash = $1', [blob.hash])).rowCount).toBe(
        0,
      );
    });

    it('bytes present, row missing, files reference it: inserts the row through reserve with the real ref_count', async () => {
      const f1 = await file('shared content');
      await file('other');
      await insertFile(db.pool, { driveId: drive, name: 'copy', hash: f1.hash, size: f1.size });
      await db.pool.query('DELETE FROM storage.blobs WHERE hash = $1', [f1.hash]);
      const line = asAction(await actions.plan(finding('files_consistency', 'missing_blob', f1.hash)));
      expect(line.action).toBe('insert_blob_row');
      expect(line.after).toEqual({ row: { size: f1.size, ref_count: 2, deleting: false } });
      expect(await actions.apply(line)).toMatchObject({ status: 'applied', after: { reserve: 'created' } });
      const row = await one<{ ref_count: number; orphaned_at: Date | null; size: string }>(
        'SELECT ref_count, orphaned_at, size FROM storage.blobs WHERE hash = $1',
        [f1.hash],
      );
      expect(row).toEqual({ ref_count: 2, orphaned_at: null, size: String(f1.size) });
    });

    it('missing_blob with no bytes: needs a person, listing the affected files and their owners', async () => {
      const f = await file('lost content');
      await db.pool.query('DELETE FROM storage.blobs WHERE hash = $1', [f.hash]);
      await storage.delete(f.hash);
      const line = await actions.plan(finding('files_consistency', 'missing_blob', f.hash));
      expect(line.type).toBe('needs_person');
      if (line.type !== 'needs_person') return;
      expect(line.reason).toMatch(/no bytes .* 1 file\(s\) reference it/);
      expect(line.affected).toEqual([
        {
          file_id: f.id,
          name: 'lost content',
          drive_id: drive,
          owner_id: user,
          owner: 'owner',
          size: f.size,
        },
      ]);
    });

    it('a finding kind without an action needs a person', async () => {
      const line = await actions.plan(finding('storage_migration', 'migration_failed', 'x'));
      expect(line).toMatchObject({
        type: 'needs_person',
        reason: expect.stringMatching(/no safe repair action/),
      });
    });
  });
});
