/**
 * The tree and drive faults: stale paths, live items under trashed folders,
 * folders and files in another drive than their parent, a shared drive
 * without an owner.
 */
import { rows, toInt } from '../../sql-client.js';
import {
  addToDrive,
  drives,
  type FileRow,
  hashes,
  type Injector,
  LIVE_LEAF,
  n,
  notApplicable,
  type OxiCloudFaultResource,
  pickDrive,
  pickEach,
  pickFolder,
  pickLiveFile,
} from './fault-context.js';

export const wrongFolderPath: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'wrong_folder_path',
    'raise foldersPerDrive or users',
    (i) => pickFolder(ctx, 37, i, LIVE_LEAF),
    (p) => ctx.usedDrives.add(p.drive_id),
  );
  const out: OxiCloudFaultResource[] = [];
  for (const p of picks) {
    // Only name/parent_id fire the path trigger.
    await ctx.client.query("UPDATE storage.folders SET path = path || ' (stale)' WHERE id = $1", [p.id]);
    out.push({
      type: 'folder',
      id: p.id,
      label: `${p.label}:${p.path}`,
      detail: { storedPath: `${p.path} (stale)`, expectedPath: p.path },
    });
  }
  return out;
};

export const wrongFolderLpath: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'wrong_folder_lpath',
    'raise foldersPerDrive or users',
    (i) => pickFolder(ctx, 41, i, LIVE_LEAF),
    (p) => ctx.usedDrives.add(p.drive_id),
  );
  const out: OxiCloudFaultResource[] = [];
  for (const p of picks) {
    const [row] = await rows<{ lpath: string }>(
      ctx.client,
      `UPDATE storage.folders
          SET lpath = public.subltree(lpath, 0, public.nlevel(lpath) - 1) || public.text2ltree('x' || md5(path || $2::text))
        WHERE id = $1 RETURNING lpath::text AS lpath`,
      [p.id, String(ctx.options.seed)],
    );
    out.push({
      type: 'folder',
      id: p.id,
      label: `${p.label}:${p.path}`,
      detail: { storedLpath: row?.lpath, expectedLpath: p.lpath },
    });
  }
  return out;
};

export const liveFolderUnderTrashedParent: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'live_folder_under_trashed_parent',
    'raise trashedFolderShare or users',
    (i) => pickFolder(ctx, 43, i, 'f.is_trashed'),
    (p) => ctx.usedDrives.add(p.drive_id),
  );
  const out: OxiCloudFaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    const [row] = await rows<{ id: string; path: string }>(
      ctx.client,
      `INSERT INTO storage.folders (name, parent_id, drive_id, created_at, updated_at)
       VALUES ($3, $1, $2, now() - interval '3 days', now() - interval '3 days') RETURNING id, path`,
      [p.id, p.drive_id, `Restored ${i + 1}`],
    );
    if (!row) throw new Error('internal: folder insert returned nothing');
    out.push({ type: 'folder', id: row.id, label: `${p.label}:${row.path}`, detail: { parentId: p.id } });
  }
  return out;
};

export const liveFileUnderTrashedFolder: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'live_file_under_trashed_folder',
    'raise trashedFolderShare or filesPerDrive',
    async (i) =>
      (
        await rows<FileRow>(
          ctx.client,
          `SELECT f.id, f.name, f.blob_hash, f.size, f.drive_id, d.label, f.folder_id
             FROM storage.files f JOIN oxi_drives d ON d.id = f.drive_id JOIN storage.folders fo ON fo.id = f.folder_id
            WHERE f.is_trashed AND fo.is_trashed AND f.original_folder_id IS NULL
              AND NOT (f.drive_id = ANY($1::uuid[])) AND NOT (f.blob_hash = ANY($2::text[]))
            ORDER BY hashtextextended(f.name, $3::bigint + $4::bigint) LIMIT 1`,
          [drives(ctx), hashes(ctx), ctx.options.seed, 47_000 + i],
        )
      )[0],
    (p) => ctx.usedDrives.add(p.drive_id),
  );
  const out: OxiCloudFaultResource[] = [];
  for (const p of picks) {
    await ctx.client.query('UPDATE storage.files SET is_trashed = false, trashed_at = NULL WHERE id = $1', [
      p.id,
    ]);
    // A live file counts toward its drive (and a personal drive's owner): usage follows.
    await addToDrive(ctx, p.drive_id, toInt(p.size));
    out.push({ type: 'file', id: p.id, label: `${p.label}:${p.name}`, detail: { folderId: p.folder_id } });
  }
  return out;
};

export const folderUnderOtherDrive: Injector = async (ctx) => {
  const out: OxiCloudFaultResource[] = [];
  const picks = await pickEach(
    ctx,
    'folder_under_other_drive',
    'raise users',
    (i) => pickFolder(ctx, 53, i, LIVE_LEAF),
    (p) => ctx.usedDrives.add(p.drive_id),
  );
  for (const [i, p] of picks.entries()) {
    const target =
      (await pickDrive(ctx, 59, i, "d.kind = 'personal'")) ?? (await pickDrive(ctx, 59, i, 'true'));
    if (!target) notApplicable('folder_under_other_drive', n(ctx), i, 'raise users');
    ctx.usedDrives.add(target.id);
    const [root] = await rows<{ id: string }>(
      ctx.client,
      'SELECT root_folder_id AS id FROM storage.drives WHERE id = $1',
      [target.id],
    );
    await ctx.client.query('UPDATE storage.folders SET parent_id = $2 WHERE id = $1', [p.id, root?.id]);
    out.push({
      type: 'folder',
      id: p.id,
      label: `${p.label}:${p.path}`,
      detail: { parentId: root?.id, parentDriveId: target.id },
    });
  }
  return out;
};

export const fileInOtherDriveFolder: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'file_in_other_drive_folder',
    'raise users or filesPerDrive',
    (i) => pickLiveFile(ctx, 61, i),
    (p) => ctx.usedDrives.add(p.drive_id),
  );
  const out: OxiCloudFaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    const target =
      (await pickDrive(ctx, 67, i, "d.kind = 'personal'")) ?? (await pickDrive(ctx, 67, i, 'true'));
    if (!target) notApplicable('file_in_other_drive_folder', n(ctx), i, 'raise users');
    ctx.usedDrives.add(target.id);
    const size = toInt(p.size);
    await ctx.client.query('UPDATE storage.files SET drive_id = $2 WHERE id = $1', [p.id, target.id]);
    await addToDrive(ctx, p.drive_id, -size);
    await addToDrive(ctx, target.id, size);
    out.push({
      type: 'file',
      id: p.id,
      label: `${p.label}:${p.name}`,
      detail: { driveId: target.id, folderDriveId: p.drive_id },
    });
  }
  return out;
};

export const driveWithoutOwner: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'drive_without_owner',
    'raise sharedDrives',
    (i) => pickDrive(ctx, 71, i, "d.kind = 'shared'"),
    (p) => ctx.usedDrives.add(p.id),
  );
  for (const p of picks) {
    await ctx.client.query(
      "DELETE FROM storage.role_grants WHERE resource_type = 'drive' AND resource_id = $1 AND role = 'owner'",
      [p.id],
    );
  }
  return picks.map((p) => ({ type: 'drive', id: p.id, label: p.label, detail: {} }));
};

/**
 * A drive repointed at a new root folder, its old root's folders and files
 * moved there, the old root left live and empty: what a hand-made "reset" of
 * a drive or a restore does (§12 item 4). OxiCloud's `trg_no_orphan_root_folder`
 * only checks the rows a statement touched, and the old root is not touched.
 * The generator writes in one transaction, where the old root's own INSERT
 * is still a pending check: those pending checks run first (the trigger is
 * set IMMEDIATE, then DEFERRED again), as they would have at that INSERT's commit.
 */
export const rootWithoutDrive: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'root_without_drive',
    'raise users',
    (i) => pickDrive(ctx, 73, i, "d.kind = 'personal'"),
    (p) => ctx.usedDrives.add(p.id),
  );
  await ctx.client.query('SET CONSTRAINTS storage.trg_no_orphan_root_folder IMMEDIATE');
  await ctx.client.query('SET CONSTRAINTS storage.trg_no_orphan_root_folder DEFERRED');
  const out: OxiCloudFaultResource[] = [];
  for (const p of picks) {
    const [root] = await rows<{ id: string; name: string }>(
      ctx.client,
      'SELECT fo.id, fo.name FROM storage.drives d JOIN storage.folders fo ON fo.id = d.root_folder_id WHERE d.id = $1',
      [p.id],
    );
    if (!root) throw new Error(`internal: drive ${p.id} has no root folder`);
    const [fresh] = await rows<{ id: string }>(
      ctx.client,
      `INSERT INTO storage.folders (name, parent_id, drive_id, created_at, updated_at)
       VALUES ($1 || ' (new root)', NULL, $2, now() - interval '3 days', now() - interval '3 days') RETURNING id`,
      [root.name, p.id],
    );
    if (!fresh) throw new Error('internal: folder insert returned nothing');
    await ctx.client.query('UPDATE storage.drives SET root_folder_id = $2 WHERE id = $1', [p.id, fresh.id]);
    await ctx.client.query('UPDATE storage.folders SET parent_id = $2 WHERE parent_id = $1', [
      root.id,
      fresh.id,
    ]);
    await ctx.client.query('UPDATE storage.files SET folder_id = $2 WHERE folder_id = $1', [
      root.id,
      fresh.id,
    ]);
    out.push({
      type: 'folder',
      id: root.id,
      label: `${p.label}: its old root "${root.name}"`,
      detail: { driveId: p.id, newRootId: fresh.id },
    });
  }
  return out;
};

/**
 * A live folder that still carries `original_parent_id` (a restore that did
 * not clear it, §12 item 7): if its parent is trashed later, the cascade
 * leaves it as if trashed on its own, and restoring the parent leaves it in
 * the trash.
 */
export const liveFolderWithOriginalParent: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'live_folder_with_original_parent',
    'raise foldersPerDrive or users',
    (i) => pickFolder(ctx, 79, i, `${LIVE_LEAF} AND f.original_parent_id IS NULL`),
    // Only the folder's own finding changes: its drive stays free for the faults that need one.
    () => undefined,
  );
  for (const p of picks) {
    await ctx.client.query('UPDATE storage.folders SET original_parent_id = parent_id WHERE id = $1', [p.id]);
  }
  return picks.map((p) => ({ type: 'folder', id: p.id, label: `${p.label}:${p.path}`, detail: {} }));
};

/**
 * A live file whose capture metadata was written (OxiCloud's trigger moved
 * its `media_sort_date` to `captured_at`), then deleted: no trigger resets
 * the date (§9, §12 item 22).
 */
export const mediaSortDateDrift: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'media_sort_date_drift',
    'raise users or filesPerDrive',
    (i) => pickLiveFile(ctx, 83, i),
    (p) => ctx.usedDrives.add(p.drive_id),
  );
  for (const p of picks) {
    await ctx.client.query(
      "INSERT INTO storage.file_metadata (file_id, captured_at) VALUES ($1, now() - interval '400 days')",
      [p.id],
    );
    await ctx.client.query('DELETE FROM storage.file_metadata WHERE file_id = $1', [p.id]);
  }
  return picks.map((p) => ({ type: 'file', id: p.id, label: `${p.label}:${p.name}`, detail: {} }));
};
