/**
 * The tree and drive faults: stale paths, live items under trashed folders,
 * folders and files in another drive than their parent, a shared drive
 * without an owner, drives whose root is shared or no root of theirs.
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
 * A second drive on a drive's root (§12 item 5): a new shared drive, owned
 * as the picked drive is, whose `root_folder_id` is the picked drive's root,
 * what a four-write that linked an existing root instead of its own leaves.
 * Nothing refuses it: there is no unique index on `root_folder_id`, and
 * `trg_no_orphan_root_folder` watches folders, not drives. A new drive
 * rather than an existing one repointed, whose own root and tree would be
 * orphaned too. drives_consistency reports both drives; folders_consistency
 * the root, which a drive other than its own names (§12 item 3).
 */
export const driveRootShared: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'drive_root_shared',
    'raise users or sharedDrives',
    (i) => pickDrive(ctx, 211, i, 'true'),
    (p) => ctx.usedDrives.add(p.id),
  );
  const out: OxiCloudFaultResource[] = [];
  for (const p of picks) {
    const [second] = await rows<{ id: string; root_id: string; root_name: string }>(
      ctx.client,
      `WITH root AS (
         SELECT fo.id, fo.name FROM storage.drives d JOIN storage.folders fo ON fo.id = d.root_folder_id
          WHERE d.id = $1
       ), second AS (
         INSERT INTO storage.drives (kind, root_folder_id, used_bytes, policies, created_at, updated_at)
         SELECT 'shared', r.id, 0, '{}'::jsonb, now() - interval '3 days', now() - interval '3 days' FROM root r
         RETURNING id
       )
       SELECT s.id, r.id AS root_id, r.name AS root_name FROM second s, root r`,
      [p.id],
    );
    if (!second) throw new Error(`internal: drive ${p.id} has no root folder`);
    ctx.usedDrives.add(second.id);
    // Owned as the first drive is: an owner is no part of this fault.
    await ctx.client.query(
      `INSERT INTO storage.role_grants (subject_type, subject_id, resource_type, resource_id, role, granted_by, granted_at)
       SELECT g.subject_type, g.subject_id, 'drive', $2, 'owner', g.granted_by, now() - interval '3 days'
         FROM storage.role_grants g
        WHERE g.resource_type = 'drive' AND g.resource_id = $1 AND g.role = 'owner'`,
      [p.id, second.id],
    );
    out.push(
      { type: 'drive', id: p.id, label: p.label, detail: { rootFolderId: second.root_id } },
      {
        type: 'drive',
        id: second.id,
        label: `${p.label}: a second drive on its root`,
        detail: { rootFolderId: second.root_id, rootOfDriveId: p.id },
      },
      {
        type: 'folder',
        id: second.root_id,
        label: `${p.label}: its root "${second.root_name}"`,
        detail: { driveId: p.id, secondDriveId: second.id },
      },
    );
  }
  return out;
};

/**
 * A drive's root folder that is no root and another drive's (§12 item 5):
 * a personal drive's root moved, by OxiCloud's own `move_folder` statement
 * (no guard refuses a drive's root; `parent_id` and `drive_id` from the
 * destination), into the root of a shared drive made for it (the
 * four-write, owned by the same owner), whose cascade carries the subtree
 * and its files along. The tree stays whole in the shared drive and both
 * drives' usage (and the owner's envelope) follow, so only the drive that
 * still names the moved folder breaks: `root_has_parent` and
 * `root_in_other_drive`. A new destination, so that no drive another fault
 * needs is taken.
 */
export const driveRootNotRoot: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'drive_root_not_root',
    'raise users',
    (i) => pickDrive(ctx, 223, i, "d.kind = 'personal'"),
    (p) => ctx.usedDrives.add(p.id),
  );
  const one = async <T extends object>(text: string, values: unknown[]): Promise<T> => {
    const [row] = await rows<T>(ctx.client, text, values);
    if (!row) throw new Error(`internal: no row from ${text.slice(0, 40)}…`);
    return row;
  };
  const liveBytes = async (driveId: string) =>
    toInt(
      (
        await one<{ n: string }>(
          'SELECT COALESCE(sum(size), 0)::text AS n FROM storage.files WHERE drive_id = $1 AND NOT is_trashed',
          [driveId],
        )
      ).n,
    );
  const out: OxiCloudFaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    const root = await one<{ id: string; name: string }>(
      'SELECT fo.id, fo.name FROM storage.drives d JOIN storage.folders fo ON fo.id = d.root_folder_id WHERE d.id = $1',
      [p.id],
    );
    // The four-write of the destination: drive, root folder, link, owner grants (the moved drive's owners).
    const dest = await one<{ id: string }>(
      `INSERT INTO storage.drives (kind, used_bytes, policies, created_at, updated_at)
       VALUES ('shared', 0, '{}'::jsonb, now() - interval '3 days', now() - interval '3 days') RETURNING id`,
      [],
    );
    const destRoot = await one<{ id: string }>(
      `INSERT INTO storage.folders (name, parent_id, drive_id, created_at, updated_at)
       VALUES ($1, NULL, $2, now() - interval '3 days', now() - interval '3 days') RETURNING id`,
      [`Moved in ${i + 1}`, dest.id],
    );
    await ctx.client.query('UPDATE storage.drives SET root_folder_id = $2 WHERE id = $1', [
      dest.id,
      destRoot.id,
    ]);
    await ctx.client.query(
      `INSERT INTO storage.role_grants (subject_type, subject_id, resource_type, resource_id, role, granted_by, granted_at)
       SELECT g.subject_type, g.subject_id, 'drive', $2, 'owner', g.granted_by, now() - interval '3 days'
         FROM storage.role_grants g
        WHERE g.resource_type = 'drive' AND g.resource_id = $1 AND g.role = 'owner'`,
      [p.id, dest.id],
    );
    ctx.usedDrives.add(dest.id);
    const before = await liveBytes(p.id);
    // OxiCloud's move_folder, as it runs it (folder_db_repository.rs).
    const move = await ctx.client.query(
      `WITH dest AS (SELECT drive_id FROM storage.folders WHERE id = $1::uuid)
       UPDATE storage.folders f
          SET parent_id = $1::uuid, drive_id = COALESCE((SELECT drive_id FROM dest), f.drive_id), updated_at = now()
        WHERE f.id = $2::uuid AND NOT f.is_trashed`,
      [destRoot.id, root.id],
    );
    if (move.rowCount !== 1) throw new Error(`internal: the root ${root.id} of drive ${p.id} was not moved`);
    const moved = before - (await liveBytes(p.id));
    await addToDrive(ctx, p.id, -moved);
    await addToDrive(ctx, dest.id, moved);
    out.push({
      type: 'drive',
      id: p.id,
      label: `${p.label}: its root "${root.name}" moved into a shared drive`,
      detail: { rootFolderId: root.id, rootDriveId: dest.id, movedBytes: moved },
    });
  }
  return out;
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

/**
 * `category_order_drift`: a live file's `category_order` set to 9999, what
 * OxiCloud's `copy_folder_tree` leaves on every copy (the column's default,
 * §12 item 23).
 */
export const categoryOrderDrift: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'category_order_drift',
    'raise users or filesPerDrive',
    (i) => pickLiveFile(ctx, 89, i),
    (p) => ctx.usedDrives.add(p.drive_id),
  );
  for (const p of picks) {
    await ctx.client.query('UPDATE storage.files SET category_order = 9999 WHERE id = $1', [p.id]);
  }
  return picks.map((p) => ({ type: 'file', id: p.id, label: `${p.label}:${p.name}`, detail: {} }));
};

/**
 * `audio_metadata_missing`: a live audio file's `audio.file_metadata` row
 * deleted (the extraction OxiCloud runs in the background failed or never
 * ran, §9). On a store OxiCloud's extractor cannot read (S3, encrypted) no
 * file has such a row: nothing to break, no resource.
 */
export const audioMetadataMissing: Injector = async (ctx) => {
  if (!ctx.readsRawMedia) return [];
  const picks = await pickEach(
    ctx,
    'audio_metadata_missing',
    'raise users or filesPerDrive (audio files of one chunk or legacy content carry the rows)',
    (i) =>
      pickLiveFile(ctx, 97, i, 'AND EXISTS (SELECT 1 FROM audio.file_metadata am WHERE am.file_id = f.id)'),
    (p) => ctx.usedDrives.add(p.drive_id),
  );
  for (const p of picks) {
    await ctx.client.query('DELETE FROM audio.file_metadata WHERE file_id = $1', [p.id]);
  }
  return picks.map((p) => ({ type: 'file', id: p.id, label: `${p.label}:${p.name}`, detail: {} }));
};
