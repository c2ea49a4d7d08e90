/**
 * `OxiRepairStore` under the real repair actions, on OxiCloud's schema
 * (real Postgres, real local blob stores): each action plans without
 * writing, applies under its row locks what it planned, refuses (writing
 * nothing) when the resource changed, and follows OxiCloud's rules: counts
 * only raised, paths through the trigger, OxiCloud's usage formulas,
 * dangling grants deleted, orphan bytes handed to `dedup_gc`, lost bytes
 * restored only from a verified copy.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ActionLine,
  type BlobHasher,
  chooseLine,
  createRepairActions,
  HAND_ORPHAN_BYTES_TO_GC,
  RESTORE_PARENT,
  type RepairActions,
  type RepairFinding,
  type RepairLine,
  TRASH_CHILD,
} from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LocalFsBlobStorage } from '../blob/local-fs-blob-storage.js';
import { LocalThumbnailStore } from '../blob/local-thumbnail-store.js';
import { externalThumbnailPath, thumbnailPath, transcodedImagePath } from '../blob/thumbnail-layout.js';
import { categoryOrderFor } from '../content/category-order.js';
import { blake3Hex } from '../hashing/blake3.js';
import type { OxiCloudDatabase } from './database.js';
import { OxiBlobIndexScan } from './oxi-blob-index-scan.js';
import { OxiRepairStore } from './oxi-repair-store.js';
import { oxiWorld } from './test-fixtures.js';
import { folderLabel, oxiTreeFixtures, randomHash, resetDomain } from './tree-fixtures.js';

let db: TestDatabase;
let kysely: Kysely<OxiCloudDatabase>;
let fx: ReturnType<typeof oxiTreeFixtures>;
let dirs: string[];
let source: LocalFsBlobStorage;
let other: LocalFsBlobStorage;
let store: OxiRepairStore;
let actions: RepairActions;

/** Real BLAKE3 over what `blobs` holds. */
const hasherOf = (blobs: LocalFsBlobStorage): BlobHasher => ({
  async hashStoredBlob(hash) {
    const chunks: Uint8Array[] = [];
    for await (const chunk of await blobs.get(hash)) chunks.push(chunk);
    const bytes = Buffer.concat(chunks);
    return { hash: blake3Hex(bytes), size: bytes.byteLength, head: bytes.subarray(0, 4096) };
  },
});

let seq = 0;
function finding(checkName: string, kind: string, resourceId: string): RepairFinding {
  seq += 1;
  return { id: `f-${seq}`, checkName, kind, resourceId, lastSeenRunId: null, detail: {} };
}
function asAction(line: RepairLine): ActionLine {
  if (line.type !== 'action') throw new Error(`expected an action line, got: ${JSON.stringify(line)}`);
  return line;
}
const one = async <T>(q: string, values: unknown[] = []): Promise<T> =>
  (await db.pool.query(q, values)).rows[0] as T;
const num = async (q: string, values: unknown[]): Promise<number> =>
  Number((await one<{ v: string | number }>(q, values)).v);
const driveUsed = (id: string) => num('SELECT used_bytes AS v FROM storage.drives WHERE id = $1', [id]);
const envelope = (id: string) => num('SELECT storage_used_bytes AS v FROM auth.users WHERE id = $1', [id]);

beforeAll(async () => {
  db = await createTestDatabase({ domain: 'oxicloud' });
  kysely = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool: db.pool }) });
  fx = oxiTreeFixtures(db.pool);
  dirs = [
    await mkdtemp(join(tmpdir(), 'oxi-repair-src-')),
    await mkdtemp(join(tmpdir(), 'oxi-repair-other-')),
  ];
  source = new LocalFsBlobStorage({ root: dirs[0] as string });
  other = new LocalFsBlobStorage({ root: dirs[1] as string });
  store = new OxiRepairStore(kysely);
  const copy = { blobs: other, hasher: hasherOf(other) };
  actions = createRepairActions({
    store,
    blobs: { blobs: source, hasher: hasherOf(source), other: null },
    restore: { source, sourceHasher: hasherOf(source), other: copy },
  });
});
afterAll(async () => {
  await kysely?.destroy();
  await db?.drop();
  for (const dir of dirs ?? []) await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  await resetDomain(db.pool);
});

describe('usage by OxiCloud formulas', () => {
  it('a personal drive: live files only, the owner envelope moved by the same delta; skips what changed', async () => {
    const alice = await fx.user('alice');
    const drive = await fx.personalDrive(alice);
    await fx.file(drive.driveId, drive.rootId, 'live', 11);
    const gone = await fx.file(drive.driveId, drive.rootId, 'trashed', 500);
    await fx.trashFile(gone.id);
    await db.pool.query('UPDATE storage.drives SET used_bytes = 1000 WHERE id = $1', [drive.driveId]);
    await db.pool.query('UPDATE auth.users SET storage_used_bytes = 1000 WHERE id = $1', [alice]);
    const plan = () => actions.plan(finding('drives_consistency', 'drive_used_bytes_drift', drive.driveId));
    const line = asAction(await plan());
    expect(line.before).toMatchObject({ used_bytes: 1000, files_bytes: 11, owner_id: alice });
    expect(line.derived).toEqual([
      { type: 'user', id: alice, before: {}, after: { storage_used_bytes_delta: -989 } },
    ]);
    await fx.file(drive.driveId, drive.rootId, 'late', 5);
    expect(await actions.apply(line)).toMatchObject({
      status: 'skipped',
      reason: expect.stringMatching(/files_bytes: planned 11, now 16/),
    });
    expect(await driveUsed(drive.driveId)).toBe(1000);
    expect(await actions.apply(asAction(await plan()))).toMatchObject({ status: 'applied' });
    expect([await driveUsed(drive.driveId), await envelope(alice)]).toEqual([16, 16]);
  });

  it('a shared drive moves no envelope; an envelope is the personal drives owned by grant', async () => {
    const bob = await fx.user('bob');
    const own = await fx.personalDrive(bob);
    const second = await fx.personalDrive(bob, { default: false });
    const shared = await fx.sharedDrive('Team', { type: 'user', id: bob });
    await fx.file(shared.driveId, shared.rootId, 'big', 700);
    const line = asAction(
      await actions.plan(finding('drives_consistency', 'drive_used_bytes_drift', shared.driveId)),
    );
    expect(line.derived).toEqual([]);
    expect(await actions.apply(line)).toMatchObject({ status: 'applied' });
    expect([await driveUsed(shared.driveId), await envelope(bob)]).toEqual([700, 0]);

    await db.pool.query('UPDATE storage.drives SET used_bytes = $2 WHERE id = $1', [own.driveId, 40]);
    await db.pool.query('UPDATE storage.drives SET used_bytes = $2 WHERE id = $1', [second.driveId, 2]);
    const user = asAction(await actions.plan(finding('drives_consistency', 'user_used_bytes_drift', bob)));
    expect(user.after).toEqual({ storage_used_bytes: 42 });
    await db.pool.query('UPDATE auth.users SET storage_used_bytes = 1 WHERE id = $1', [bob]);
    expect(await actions.apply(user)).toMatchObject({ status: 'skipped' });
    expect(await envelope(bob)).toBe(1);
    const again = asAction(await actions.plan(finding('drives_consistency', 'user_used_bytes_drift', bob)));
    expect(await actions.apply(again)).toMatchObject({ status: 'applied' });
    expect(await envelope(bob)).toBe(42);
  });
});

describe('folder paths through the trigger', () => {
  async function tree() {
    const u = await fx.user('carol');
    const drive = await fx.personalDrive(u);
    const a = await fx.folder(drive.driveId, drive.rootId, 'a');
    const b = await fx.folder(drive.driveId, a, 'b');
    const c = await fx.folder(drive.driveId, b, 'c');
    // Drift with the triggers off: a's path and lpath, c's lpath.
    await fx.drift(
      ["UPDATE storage.folders SET path = 'x/a', lpath = 'zz' WHERE id = $1", [a]],
      ["UPDATE storage.folders SET path = 'x/a/b' WHERE id = $1", [b]],
      ["UPDATE storage.folders SET lpath = 'yy' WHERE id = $1", [c]],
    );
    return { drive, a, b, c };
  }
  const rows = async () =>
    (
      await db.pool.query<{ id: string; path: string; lpath: string }>(
        'SELECT id, path, lpath::text FROM storage.folders',
      )
    ).rows;

  it('plans OxiCloud’s paths (no leading slash, `_` labels) and writes them only through `SET name = name`', async () => {
    const { drive, a, b, c } = await tree();
    const root = folderLabel(drive.rootId);
    const line = asAction(await actions.plan(finding('folders_consistency', 'path_mismatch', a)));
    expect(line.after).toEqual({ path: 'Personal/a', lpath: `${root}.${folderLabel(a)}` });
    expect(line.derived.map((d) => [d.id, d.after])).toEqual([
      [b, { path: 'Personal/a/b', lpath: `${root}.${folderLabel(a)}.${folderLabel(b)}` }],
      [c, { path: 'Personal/a/b/c', lpath: `${root}.${folderLabel(a)}.${folderLabel(b)}.${folderLabel(c)}` }],
    ]);
    const clock = await db.pool.query('SELECT id, tree_modified_at FROM storage.folders ORDER BY id');
    expect(await actions.apply(line)).toMatchObject({ status: 'applied', after: { rows_changed: 3 } });
    const byId = new Map((await rows()).map((r) => [r.id, r]));
    expect(byId.get(c)).toEqual({
      id: c,
      path: 'Personal/a/b/c',
      lpath: `${root}.${folderLabel(a)}.${folderLabel(b)}.${folderLabel(c)}`,
    });
    // The flusher is tree_modified_at's only writer (§4): the repair never touches it.
    expect(
      (await db.pool.query('SELECT id, tree_modified_at FROM storage.folders ORDER BY id')).rows,
    ).toEqual(clock.rows);
    expect(await actions.verify(line)).toBeNull();
  });

  it('skips when a user renamed the folder meanwhile; a root no drive points at needs a person', async () => {
    const { drive, a } = await tree();
    const line = asAction(await actions.plan(finding('folders_consistency', 'lpath_mismatch', a)));
    await db.pool.query("UPDATE storage.folders SET name = 'renamed' WHERE id = $1", [a]);
    const before = await rows();
    expect(await actions.apply(line)).toMatchObject({
      status: 'skipped',
      reason: expect.stringMatching(/path: planned "x\/a", now "Personal\/renamed"/),
    });
    expect(await rows()).toEqual(before);
    await fx.drift(
      ['UPDATE storage.drives SET root_folder_id = NULL WHERE id = $1', [drive.driveId]],
      ["UPDATE storage.folders SET path = 'wrong' WHERE id = $1", [drive.rootId]],
    );
    expect(await actions.plan(finding('folders_consistency', 'path_mismatch', drive.rootId))).toMatchObject({
      type: 'needs_person',
    });
  });
});

describe('file size and trash', () => {
  it('blob_size_mismatch: the content size (manifest total_size); a trashed file moves no usage', async () => {
    const w = await oxiWorld(db.pool, source);
    const up = await w.upload({ name: 'doc', data: randomBytes(70_000) });
    await db.pool.query('UPDATE storage.files SET size = size + 30 WHERE id = $1', [up.fileId]);
    await db.pool.query('UPDATE storage.drives SET used_bytes = $2 WHERE id = $1', [w.driveId, up.size + 30]);
    await db.pool.query('UPDATE auth.users SET storage_used_bytes = $2 WHERE id = $1', [
      w.userId,
      up.size + 30,
    ]);
    const line = asAction(await actions.plan(finding('files_consistency', 'blob_size_mismatch', up.fileId)));
    expect(line.after).toEqual({ size: 70_000 });
    expect(line.derived.map((d) => [d.type, d.after])).toEqual([
      ['drive', { used_bytes_delta: -30 }],
      ['user', { storage_used_bytes_delta: -30 }],
    ]);
    expect(await actions.apply(line)).toMatchObject({ status: 'applied' });
    expect([await driveUsed(w.driveId), await envelope(w.userId)]).toEqual([70_000, 70_000]);

    const old = await w.upload({ name: 'old', data: randomBytes(100) });
    await db.pool.query(
      'UPDATE storage.files SET size = 7, is_trashed = true, trashed_at = now() WHERE id = $1',
      [old.fileId],
    );
    const trashed = asAction(
      await actions.plan(finding('files_consistency', 'blob_size_mismatch', old.fileId)),
    );
    expect(trashed.derived).toEqual([]);
    expect(await actions.apply(trashed)).toMatchObject({ status: 'applied' });
    expect(await driveUsed(w.driveId)).toBe(70_000);
  });

  it('a live row under a trashed parent: trash_child completes the cascade (usage follows); restore_parent clears original_*', async () => {
    const u = await fx.user('dave');
    const drive = await fx.personalDrive(u);
    const top = await fx.folder(drive.driveId, drive.rootId, 'top');
    const child = await fx.folder(drive.driveId, top, 'child');
    const inner = await fx.file(drive.driveId, child, 'inner', 9);
    await db.pool.query(
      "UPDATE storage.folders SET is_trashed = true, trashed_at = now() - interval '2 days', original_parent_id = parent_id WHERE id = $1",
      [top],
    );
    await db.pool.query('UPDATE storage.drives SET used_bytes = 9 WHERE id = $1', [drive.driveId]);
    await db.pool.query('UPDATE auth.users SET storage_used_bytes = 9 WHERE id = $1', [u]);
    const line = asAction(
      await actions.plan(finding('folders_consistency', 'parent_trashed_mismatch', child)),
    );
    expect(line.choices?.map((c) => c.id)).toEqual([RESTORE_PARENT, TRASH_CHILD]);
    expect(line.choices?.[1]?.derived.filter((d) => d.type === 'drive' || d.type === 'user')).toEqual([
      { type: 'drive', id: drive.driveId, before: {}, after: { used_bytes_delta: -9 } },
      { type: 'user', id: u, before: {}, after: { storage_used_bytes_delta: -9 } },
    ]);
    expect(await actions.apply(line)).toMatchObject({
      status: 'skipped',
      reason: expect.stringMatching(/no choice/),
    });
    expect(await actions.apply(chooseLine(line, TRASH_CHILD) as ActionLine)).toMatchObject({
      status: 'applied',
    });
    const rows = await db.pool.query<{
      id: string;
      is_trashed: boolean;
      trashed_at: Date | null;
      original_parent_id: string | null;
    }>('SELECT id, is_trashed, trashed_at, original_parent_id FROM storage.folders WHERE id = $1', [child]);
    expect(rows.rows[0]).toMatchObject({ is_trashed: true, original_parent_id: null });
    expect(rows.rows[0]?.trashed_at).not.toBeNull();
    expect(
      (await one<{ t: boolean }>('SELECT is_trashed AS t FROM storage.files WHERE id = $1', [inner.id])).t,
    ).toBe(true);
    expect([await driveUsed(drive.driveId), await envelope(u)]).toEqual([0, 0]);

    // A second live folder under the same trashed top: restoring the top leaves it a live row without original_*.
    const other = await fx.folder(drive.driveId, top, 'other');
    const restore = asAction(
      await actions.plan(finding('folders_consistency', 'parent_trashed_mismatch', other)),
    );
    expect(await actions.apply(chooseLine(restore, RESTORE_PARENT) as ActionLine)).toMatchObject({
      status: 'applied',
    });
    expect(
      await one('SELECT is_trashed, trashed_at, original_parent_id FROM storage.folders WHERE id = $1', [
        top,
      ]),
    ).toEqual({ is_trashed: false, trashed_at: null, original_parent_id: null });
  });
});

describe('blob counters: raised, never lowered', () => {
  it('raises a low count, leaves a high one to a person, stamps an unset mark; setBlobRefCount refuses to lower', async () => {
    const w = await oxiWorld(db.pool, source);
    const shared = randomBytes(20);
    const first = await w.upload({ name: 'one', data: shared });
    await w.upload({ name: 'two', data: shared, legacy: false });
    const legacy = await w.upload({ name: 'legacy', data: randomBytes(30), legacy: true });
    // The one-chunk content's chunk row counts its one manifest; set it low. The legacy blob high.
    await db.pool.query('UPDATE storage.blobs SET ref_count = 0, orphaned_at = now() WHERE hash = $1', [
      first.hash,
    ]);
    await db.pool.query('UPDATE storage.blobs SET ref_count = 3 WHERE hash = $1', [legacy.hash]);
    const low = asAction(await actions.plan(finding('blobs_consistency', 'ref_count_mismatch', first.hash)));
    expect(low.after).toEqual({ ref_count: 1, orphaned_at: null });
    expect(await actions.apply(low)).toMatchObject({
      status: 'applied',
      after: { ref_count: 1, orphaned_at: null },
    });

    const high = await actions.plan(finding('blobs_consistency', 'ref_count_mismatch', legacy.hash));
    expect(high).toMatchObject({
      type: 'needs_person',
      reason: expect.stringMatching(/ref_count 3 is above the 1 .* never lowers/),
    });
    await expect(store.write((tx) => tx.setBlobRefCount(legacy.hash, 1))).rejects.toThrow(/never lowers/);
    expect(await num('SELECT ref_count AS v FROM storage.blobs WHERE hash = $1', [legacy.hash])).toBe(3);

    const bytes = randomBytes(40);
    const hash = blake3Hex(bytes);
    await db.pool.query(
      'INSERT INTO storage.blobs (hash, size, ref_count, orphaned_at) VALUES ($1, 40, 0, NULL)',
      [hash],
    );
    const mark = asAction(await actions.plan(finding('blobs_consistency', 'orphaned_at_mismatch', hash)));
    expect(await actions.apply(mark)).toMatchObject({ status: 'applied' });
    expect(
      (await one<{ o: Date | null }>('SELECT orphaned_at AS o FROM storage.blobs WHERE hash = $1', [hash])).o,
    ).not.toBeNull();
  });
});

describe('manifest counters: raised to the files, never lowered', () => {
  it('raises a low count and lists the files at risk; skips when a file came since the plan; a high one needs a person', async () => {
    const w = await oxiWorld(db.pool, source);
    const data = randomBytes(3000);
    const a = await w.upload({ name: 'a.bin', data });
    const b = await w.upload({ name: 'b.bin', data });
    const c = await w.upload({ name: 'c.bin', data });
    // What a folder copy leaves: three files, the count at 1 (deleting any one would drop the manifest).
    await db.pool.query('UPDATE storage.chunk_manifests SET ref_count = 1 WHERE file_hash = $1', [a.hash]);
    const low = finding('manifests_consistency', 'manifest_ref_count_low', a.hash);
    const line = asAction(await actions.plan(low));
    expect(line.action).toBe('raise_manifest_ref_count');
    expect(line.before).toEqual({
      ref_count: 1,
      file_count: 3,
      files_at_risk: [a.fileId, b.fileId, c.fileId].sort(),
    });
    expect(line.after).toEqual({ ref_count: 3 });
    expect(line.summary).toMatch(/ref_count 1 → 3 .* at risk until now: 3 file\(s\)/);

    // A fourth file lands between the plan and the apply: the count changed, nothing is written.
    const d = await w.upload({ name: 'd.bin', data });
    expect(await actions.apply(line)).toMatchObject({
      status: 'skipped',
      reason: expect.stringMatching(/file_count: planned 3, now 4/),
    });
    // The upload's own +1 (what OxiCloud's upload adds) left it at 2; a new plan raises it to 4.
    expect(
      await num('SELECT ref_count AS v FROM storage.chunk_manifests WHERE file_hash = $1', [a.hash]),
    ).toBe(2);
    const again = asAction(
      await actions.plan(finding('manifests_consistency', 'manifest_ref_count_low', a.hash)),
    );
    expect(await actions.apply(again)).toMatchObject({ status: 'applied', after: { ref_count: 4 } });
    expect(await actions.verify(again)).toBeNull();
    expect(d.hash).toBe(a.hash);

    // Never lowered: the store refuses, and a count above the files is a person's.
    await expect(store.write((tx) => tx.raiseManifestRefCount!(a.hash, 3))).rejects.toThrow(/never lowers/);
    await db.pool.query('UPDATE storage.chunk_manifests SET ref_count = 9 WHERE file_hash = $1', [a.hash]);
    const high = await actions.plan({
      ...finding('manifests_consistency', 'manifest_ref_count_high', a.hash),
      detail: { ref_count: 9, file_count: 4 },
    });
    expect(high).toMatchObject({
      type: 'needs_person',
      reason: expect.stringMatching(/ref_count 9 is above the 4 file\(s\) .* never lowers a count/),
    });
    expect(
      await num('SELECT ref_count AS v FROM storage.chunk_manifests WHERE file_hash = $1', [a.hash]),
    ).toBe(9);
  });
});

/** A file row under a given id, as a restore brings a file back: in the world's root, with `content`'s bytes. */
async function restoreFile(
  w: { rootFolderId: string; driveId: string },
  id: string,
  name: string,
  content: { hash: string; size: number },
): Promise<void> {
  await db.pool.query(
    `INSERT INTO storage.files (id, name, folder_id, blob_hash, size, drive_id, category_order)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      id,
      name,
      w.rootFolderId,
      content.hash,
      content.size,
      w.driveId,
      categoryOrderFor(name, 'application/octet-stream'),
    ],
  );
}

describe('dangling references: deleted, re-checked under the row lock', () => {
  it('deletes a favorite and a NextCloud id whose item is gone; skips a favorite whose file came back', async () => {
    const w = await oxiWorld(db.pool, source);
    const kept = await w.upload({ name: 'kept.txt', data: randomBytes(10) });
    const gone = randomUUID();
    const back = randomUUID();
    const fav = await one<{ id: number }>(
      "INSERT INTO auth.user_favorites (user_id, item_id, item_type) VALUES ($1, $2, 'file') RETURNING id",
      [w.userId, gone],
    );
    const favBack = await one<{ id: number }>(
      "INSERT INTO auth.user_favorites (user_id, item_id, item_type) VALUES ($1, $2, 'file') RETURNING id",
      [w.userId, back],
    );
    const live = await one<{ id: number }>(
      "INSERT INTO auth.user_favorites (user_id, item_id, item_type) VALUES ($1, $2, 'file') RETURNING id",
      [w.userId, kept.fileId],
    );
    const nc = await one<{ id: string }>(
      "INSERT INTO storage.nextcloud_object_ids (object_type, object_id) VALUES ('folder', $1) RETURNING id::text",
      [gone],
    );

    const line = asAction(
      await actions.plan(finding('references_consistency', 'dangling_favorite', String(fav.id))),
    );
    expect(line.action).toBe('delete_dangling_reference');
    expect(line.before).toEqual({ item_type: 'file', item_id: gone, reason: 'missing' });
    expect(await actions.apply(line)).toMatchObject({ status: 'applied' });
    expect(await num('SELECT count(*) AS v FROM auth.user_favorites WHERE id = $1', [fav.id])).toBe(0);
    expect(await actions.verify(line)).toBeNull();

    const ncLine = asAction(
      await actions.plan(finding('references_consistency', 'dangling_nextcloud_id', nc.id)),
    );
    expect(await actions.apply(ncLine)).toMatchObject({ status: 'applied' });
    expect(await num('SELECT count(*) AS v FROM storage.nextcloud_object_ids WHERE id = $1', [nc.id])).toBe(
      0,
    );

    // Planned while the file was missing; the file is there (restored under its id) when the line is applied.
    const backLine = asAction(
      await actions.plan(finding('references_consistency', 'dangling_favorite', String(favBack.id))),
    );
    await restoreFile(w, back, 'back.txt', kept);
    expect(await actions.apply(backLine)).toMatchObject({
      status: 'skipped',
      reason: expect.stringMatching(/reason: planned "missing", now null/),
    });
    expect(await num('SELECT count(*) AS v FROM auth.user_favorites WHERE id = $1', [favBack.id])).toBe(1);
    // A favorite of an existing file is no dangling row: nothing to plan.
    expect(
      await actions.plan(finding('references_consistency', 'dangling_favorite', String(live.id))),
    ).toMatchObject({
      type: 'needs_person',
      reason: expect.stringMatching(/exists again: nothing to delete/),
    });
  });
});

describe('orphan thumbnails and transcoded images: removed once re-checked', () => {
  it('removes the thumbnails of content nothing names and the derived files of a gone file; keeps those in use', async () => {
    const root = await mkdtemp(join(tmpdir(), 'oxi-repair-thumbs-'));
    dirs.push(root);
    const thumbnails = new LocalThumbnailStore(root);
    const withThumbnails = createRepairActions({
      store,
      thumbnails: { thumbnails, index: new OxiBlobIndexScan(kysely) },
    });
    const w = await oxiWorld(db.pool, source);
    const used = await w.upload({ name: 'photo.jpg', data: randomBytes(50), mime: 'image/jpeg' });
    const orphanHash = randomHash();
    const goneFile = randomUUID();
    const write = async (path: string) => {
      await mkdir(join(path, '..'), { recursive: true });
      await writeFile(path, Buffer.alloc(100));
    };
    await write(thumbnailPath(root, 'icon', orphanHash, 'webp'));
    await write(thumbnailPath(root, 'large', orphanHash, 'jpg'));
    await write(thumbnailPath(root, 'icon', used.hash, 'webp'));
    await write(externalThumbnailPath(root, 'preview', goneFile));
    await write(transcodedImagePath(root, goneFile));

    const line = asAction(
      await withThumbnails.plan(finding('storage_consistency', 'orphan_thumbnail', orphanHash)),
    );
    expect(line.action).toBe('remove_orphan_derived_files');
    expect(line.before).toEqual({
      files: [`.thumbnails/icon/${orphanHash}.webp`, `.thumbnails/large/${orphanHash}.jpg`],
      bytes: 200,
    });
    expect(await withThumbnails.apply(line)).toMatchObject({ status: 'applied', after: { removed: 2 } });
    expect(await thumbnails.stat(orphanHash)).toBeNull();
    expect(await withThumbnails.verify(line)).toBeNull();

    // Content a file names: in use, nothing to plan.
    expect(
      await withThumbnails.plan(finding('storage_consistency', 'orphan_thumbnail', used.hash)),
    ).toMatchObject({
      type: 'needs_person',
      reason: expect.stringMatching(/names this content again/),
    });
    // The transcoded image of a gone file goes; its ext- thumbnail is its own finding and stays until planned.
    const transcoded = asAction(
      await withThumbnails.plan(finding('storage_consistency', 'orphan_transcoded_image', goneFile)),
    );
    expect(await withThumbnails.apply(transcoded)).toMatchObject({
      status: 'applied',
      after: { removed: 1 },
    });
    const left = await thumbnails.statByFileId(goneFile);
    expect(left?.transcoded).toBeNull();
    expect(left?.externalThumbnails?.files).toEqual([`.thumbnails/preview/ext-${goneFile}.jpg`]);
    // Planned while the file was gone; a file row with that id appears (a restore): skipped, the file stays.
    const ext = asAction(
      await withThumbnails.plan(finding('storage_consistency', 'orphan_file_thumbnail', goneFile)),
    );
    await restoreFile(w, goneFile, 'back.jpg', used);
    expect(await withThumbnails.apply(ext)).toMatchObject({
      status: 'skipped',
      reason: expect.stringMatching(/exists again/),
    });
    expect((await thumbnails.statByFileId(goneFile))?.externalThumbnails).not.toBeNull();
  });
});

describe('derived file columns: OxiCloud’s formulas, under the file row lock', () => {
  it('recomputes category_order and media_sort_date; skips a file renamed since the plan', async () => {
    const w = await oxiWorld(db.pool, source);
    const copy = await w.upload({ name: 'report.pdf', data: randomBytes(40), mime: 'application/pdf' });
    const photo = await w.upload({ name: 'photo.jpg', data: randomBytes(50), mime: 'image/jpeg' });
    const renamed = await w.upload({ name: 'notes', data: randomBytes(30) });
    // A folder copy's 9999; a metadata row written then deleted (no trigger resets the date); a rename.
    await db.pool.query('UPDATE storage.files SET category_order = 9999 WHERE id = $1', [copy.fileId]);
    await db.pool.query(
      "INSERT INTO storage.file_metadata (file_id, captured_at) VALUES ($1, '2019-01-02T03:04:05.123456Z')",
      [photo.fileId],
    );
    await db.pool.query('DELETE FROM storage.file_metadata WHERE file_id = $1', [photo.fileId]);
    await db.pool.query("UPDATE storage.files SET name = 'notes.pdf' WHERE id = $1", [renamed.fileId]);

    const category = asAction(
      await actions.plan(finding('files_consistency', 'category_order_mismatch', copy.fileId)),
    );
    expect(category.action).toBe('recompute_category_order');
    expect(category.before).toEqual({ category_order: '9999', expected: '400' });
    expect(await actions.apply(category)).toMatchObject({
      status: 'applied',
      after: { category_order: '400' },
    });
    expect(await actions.verify(category)).toBeNull();

    const date = asAction(
      await actions.plan(finding('files_consistency', 'media_sort_date_mismatch', photo.fileId)),
    );
    expect(date.action).toBe('recompute_media_sort_date');
    expect(await actions.apply(date)).toMatchObject({ status: 'applied' });
    const { rows } = await db.pool.query<{ same: boolean }>(
      'SELECT media_sort_date = created_at AS same FROM storage.files WHERE id = $1',
      [photo.fileId],
    );
    expect(rows[0]?.same).toBe(true);

    // Planned for the rename to .pdf (500 → 400); renamed again before the apply: the bucket changed, skipped.
    const stale = asAction(
      await actions.plan(finding('files_consistency', 'category_order_mismatch', renamed.fileId)),
    );
    expect(stale.after).toEqual({ category_order: '400' });
    await db.pool.query("UPDATE storage.files SET name = 'notes.mp3' WHERE id = $1", [renamed.fileId]);
    expect(await actions.apply(stale)).toMatchObject({
      status: 'skipped',
      reason: expect.stringMatching(/expected: planned "400", now "300"/),
    });
    expect(await num('SELECT category_order AS v FROM storage.files WHERE id = $1', [renamed.fileId])).toBe(
      500,
    );
  });
});

describe('stale faces: deleted, re-checked under the face row lock', () => {
  it('deletes a face of old content; keeps one of the current content; skips when the file went back to it', async () => {
    const w = await oxiWorld(db.pool, source);
    const before = await w.upload({ name: 'old.jpg', data: randomBytes(60), mime: 'image/jpeg' });
    const photo = await w.upload({ name: 'photo.jpg', data: randomBytes(70), mime: 'image/jpeg' });
    const face = async (fileId: string, hash: string) =>
      (
        await one<{ id: string }>(
          `INSERT INTO faces.faces (file_id, user_id, bbox, det_score, embedding, blob_hash)
           VALUES ($1, $2, ARRAY[0.1, 0.1, 0.2, 0.2]::real[], 0.9, '\\x00', $3) RETURNING id`,
          [fileId, w.userId, hash],
        )
      ).id;
    const stale = await face(photo.fileId, before.hash);
    const current = await face(photo.fileId, photo.hash);
    const back = await face(photo.fileId, before.hash);

    const line = asAction(await actions.plan(finding('references_consistency', 'stale_face_hash', stale)));
    expect(line.action).toBe('delete_stale_face');
    expect(line.before).toEqual({ file_id: photo.fileId, face_hash: before.hash, file_hash: photo.hash });
    expect(await actions.apply(line)).toMatchObject({ status: 'applied' });
    expect(await num('SELECT count(*) AS v FROM faces.faces WHERE id = $1', [stale])).toBe(0);
    expect(await actions.verify(line)).toBeNull();

    expect(await actions.plan(finding('references_consistency', 'stale_face_hash', current))).toMatchObject({
      type: 'needs_person',
      reason: expect.stringMatching(/belongs to its file's content/),
    });
    // Planned; then the file's content goes back to the face's (an old version restored): skipped, kept.
    const backLine = asAction(await actions.plan(finding('references_consistency', 'stale_face_hash', back)));
    await db.pool.query('UPDATE storage.files SET blob_hash = $1 WHERE id = $2', [before.hash, photo.fileId]);
    expect(await actions.apply(backLine)).toMatchObject({
      status: 'skipped',
      reason: expect.stringMatching(/file_hash: planned/),
    });
    expect(await num('SELECT count(*) AS v FROM faces.faces WHERE id = $1', [back])).toBe(1);
  });
});

describe('grants', () => {
  it('deletes a grant whose resource or subject is gone; skips one whose resource came back', async () => {
    const u = await fx.user('erin');
    const drive = await fx.personalDrive(u);
    const noFile = await fx.grant(
      { type: 'user', id: u },
      { type: 'file', id: '00000000-0000-4000-8000-000000000001' },
    );
    const noUser = await fx.grant(
      { type: 'user', id: '00000000-0000-4000-8000-000000000002' },
      { type: 'drive', id: drive.driveId },
    );
    for (const id of [noFile, noUser]) {
      const line = asAction(await actions.plan(finding('grants_consistency', 'dangling_grant', id)));
      expect(line.action).toBe('delete_dangling_grant');
      expect(await actions.apply(line)).toMatchObject({ status: 'applied' });
      expect((await db.pool.query('SELECT 1 FROM storage.role_grants WHERE id = $1', [id])).rowCount).toBe(0);
    }
    const folderId = '00000000-0000-4000-8000-000000000003';
    const back = await fx.grant({ type: 'user', id: u }, { type: 'folder', id: folderId });
    const line = asAction(await actions.plan(finding('grants_consistency', 'dangling_grant', back)));
    await db.pool.query(
      "INSERT INTO storage.folders (id, name, parent_id, drive_id) VALUES ($1, 'back', $2, $3)",
      [folderId, drive.rootId, drive.driveId],
    );
    expect(await actions.apply(line)).toMatchObject({
      status: 'skipped',
      reason: expect.stringMatching(/resource_exists/),
    });
  });
});

describe('bytes', () => {
  it('orphan bytes get a row at ref_count 0 with orphaned_at for dedup_gc; never once a manifest lists them', async () => {
    const bytes = randomBytes(50);
    const hash = blake3Hex(bytes);
    await source.put(hash, bytes, bytes.length);
    const line = asAction(await actions.plan(finding('storage_consistency', 'orphan_blob', hash)));
    expect(line.action).toBe(HAND_ORPHAN_BYTES_TO_GC);
    expect(await actions.apply(line)).toMatchObject({ status: 'applied' });
    expect(
      await one('SELECT ref_count, orphaned_at IS NOT NULL AS marked FROM storage.blobs WHERE hash = $1', [
        hash,
      ]),
    ).toEqual({
      ref_count: 0,
      marked: true,
    });
    expect(await source.exists(hash)).toBe(true); // dedup_gc's, past its grace
    expect(await actions.verify(line)).toBeNull();
    await expect(store.finishBlobDeletion(hash)).rejects.toThrow(/no deletion protocol/);

    const late = randomBytes(60);
    const lateHash = blake3Hex(late);
    await source.put(lateHash, late, late.length);
    const planned = asAction(await actions.plan(finding('storage_consistency', 'orphan_blob', lateHash)));
    await db.pool.query(
      `INSERT INTO storage.chunk_manifests (file_hash, chunk_hashes, chunk_sizes, total_size, chunk_count)
       VALUES ($1, ARRAY[$2, $2], ARRAY[60, 60]::bigint[], 120, 2)`,
      [randomHash(), lateHash],
    );
    expect(await actions.apply(planned)).toMatchObject({ status: 'skipped' });
    expect((await db.pool.query('SELECT 1 FROM storage.blobs WHERE hash = $1', [lateHash])).rowCount).toBe(0);
  });

  it('missing_blob: bytes present → the row with the expected count; bytes gone → needs a person naming the owners', async () => {
    const w = await oxiWorld(db.pool, source);
    const legacy = await w.upload({
      name: 'scan.pdf',
      data: randomBytes(30),
      legacy: true,
      mime: 'application/pdf',
    });
    await w.upload({ name: 'copy.pdf', data: legacy.bytes, legacy: true, mime: 'application/pdf' });
    await db.pool.query('DELETE FROM storage.blobs WHERE hash = $1', [legacy.hash]);
    const line = asAction(await actions.plan(finding('files_consistency', 'missing_blob', legacy.hash)));
    expect(line.action).toBe('insert_blob_row');
    expect(await actions.apply(line)).toMatchObject({ status: 'applied', after: { reserve: 'created' } });
    expect(
      await one('SELECT ref_count, orphaned_at, size, content_type FROM storage.blobs WHERE hash = $1', [
        legacy.hash,
      ]),
    ).toEqual({ ref_count: 2, orphaned_at: null, size: '30', content_type: 'application/pdf' });

    const big = await w.upload({ name: 'big.bin', data: randomBytes(150_000) });
    await db.pool.query('DELETE FROM storage.chunk_manifests WHERE file_hash = $1', [big.hash]);
    const lost = await actions.plan(finding('files_consistency', 'missing_blob', big.hash));
    expect(lost).toMatchObject({
      type: 'needs_person',
      reason: expect.stringMatching(/no bytes .* 1 file\(s\) reference it/),
    });
    expect(lost.type === 'needs_person' && lost.affected).toEqual([
      expect.objectContaining({
        file_id: big.fileId,
        drive_id: w.driveId,
        owner_id: w.userId,
        owner: expect.stringMatching(/^u-/),
      }),
    ]);
  });

  it('missing chunk bytes: restored from the other store only when its copy hashes to the key', async () => {
    const w = await oxiWorld(db.pool, source);
    const up = await w.upload({ name: 'video', data: randomBytes(140_000) });
    const [chunk, second] = up.objects;
    if (chunk === undefined || second === undefined) throw new Error('two chunks expected');
    await other.put(chunk.hash, chunk.bytes, chunk.size);
    await other.put(second.hash, randomBytes(second.size), second.size); // a copy with other bytes
    for (const o of [chunk, second]) await source.delete(o.hash);
    const line = asAction(
      await actions.plan(finding('storage_consistency', 'missing_blob_bytes', chunk.hash)),
    );
    expect(line.action).toBe('restore_bytes_from_local');
    expect(line.before).toMatchObject({ row: { size: chunk.size, ref_count: 1 }, referenced_by: 1 });
    expect(await actions.apply(line)).toMatchObject({ status: 'applied' });
    expect(await actions.verify(line)).toBeNull();
    const bad = await actions.plan(finding('storage_consistency', 'missing_blob_bytes', second.hash));
    expect(bad).toMatchObject({ type: 'needs_person', reason: expect.stringMatching(/not to the key/) });
    expect(bad.type === 'needs_person' && bad.affected).toEqual([
      expect.objectContaining({ file_id: up.fileId }),
    ]);
    expect(await source.exists(second.hash)).toBe(false);
  });
});
