/**
 * The folder-tree faults (found by `folders_consistency`): a live folder
 * under a trashed parent, a stale path or lpath, a folder whose parent is in
 * another drive, and a parent cycle.
 */
import type { FaultName } from '../faults.js';
import type { FaultResource } from '../report.js';
import { rows } from '../sql-client.js';
import {
  type DriveRow,
  driveLabel,
  excluded,
  type FaultContext,
  type Injector,
  n,
  notApplicable,
} from './fault-context.js';

export const liveFolderUnderTrashedParent: Injector = async (ctx) => {
  const picks = await rows<DriveRow & { id: string; path: string }>(
    ctx.client,
    `SELECT f.id, f.path, d.id AS drive_id, d.username, d.name AS drive_name
       FROM storage.folders f JOIN ds_drives d ON d.id = f.drive_id
      WHERE f.is_trashed AND NOT (d.id = ANY($1::uuid[]))
      ORDER BY hashtextextended(d.drive_no || ':' || f.path, $2::bigint)
      LIMIT $3::int`,
    [excluded(ctx), ctx.options.seed, n(ctx)],
  );
  if (picks.length < n(ctx)) {
    notApplicable(
      'live_folder_under_trashed_parent',
      n(ctx),
      picks.length,
      'raise trashedFolderShare or users',
    );
  }
  const out: FaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    const [row] = await rows<{ id: string; path: string }>(
      ctx.client,
      `INSERT INTO storage.folders (drive_id, parent_id, name, created_at, updated_at)
       VALUES ($1, $2, $3, now() - interval '3 days', now() - interval '3 days')
       RETURNING id, path`,
      [p.drive_id, p.id, `Restored ${i + 1}`],
    );
    if (!row) throw new Error('internal: folder insert returned nothing');
    out.push({
      type: 'folder',
      id: row.id,
      label: `${driveLabel(p)}:${row.path}`,
      detail: { parentId: p.id, parentPath: p.path },
    });
  }
  for (const p of picks) ctx.usedDrives.add(p.drive_id);
  return out;
};

async function pickLiveLeafFolders(ctx: FaultContext, fault: FaultName, salt: number) {
  const picks = await rows<DriveRow & { id: string; path: string; lpath: string }>(
    ctx.client,
    `SELECT f.id, f.path, f.lpath::text AS lpath, d.id AS drive_id, d.username, d.name AS drive_name
       FROM storage.folders f JOIN ds_drives d ON d.id = f.drive_id
      WHERE NOT f.is_trashed AND NOT (d.id = ANY($1::uuid[]))
        AND NOT EXISTS (SELECT 1 FROM storage.folders c WHERE c.parent_id = f.id)
      ORDER BY hashtextextended(d.drive_no || ':' || f.path, $2::bigint + $4::bigint)
      LIMIT $3::int`,
    [excluded(ctx), ctx.options.seed, n(ctx), salt],
  );
  if (picks.length < n(ctx)) notApplicable(fault, n(ctx), picks.length, 'raise users');
  for (const p of picks) ctx.usedDrives.add(p.drive_id);
  return picks;
}

export const wrongFolderPath: Injector = async (ctx) => {
  const picks = await pickLiveLeafFolders(ctx, 'wrong_folder_path', 11);
  const out: FaultResource[] = [];
  for (const p of picks) {
    // Columns other than parent_id/name do not fire the path triggers.
    const [row] = await rows<{ path: string }>(
      ctx.client,
      `UPDATE storage.folders SET path = '/Stale' || path WHERE id = $1 RETURNING path`,
      [p.id],
    );
    out.push({
      type: 'folder',
      id: p.id,
      label: `${driveLabel(p)}:${p.path}`,
      detail: { storedPath: row?.path, expectedPath: p.path },
    });
  }
  return out;
};

export const wrongFolderLpath: Injector = async (ctx) => {
  const picks = await pickLiveLeafFolders(ctx, 'wrong_folder_lpath', 13);
  const out: FaultResource[] = [];
  for (const p of picks) {
    const [row] = await rows<{ lpath: string }>(
      ctx.client,
      `UPDATE storage.folders
          SET lpath = subltree(lpath, 0, nlevel(lpath) - 1) || text2ltree(md5(path || $2::text))
        WHERE id = $1 RETURNING lpath::text AS lpath`,
      [p.id, String(ctx.options.seed)],
    );
    out.push({
      type: 'folder',
      id: p.id,
      label: `${driveLabel(p)}:${p.path}`,
      detail: { storedLpath: row?.lpath, expectedLpath: p.lpath },
    });
  }
  return out;
};

export const folderUnderOtherDrive: Injector = async (ctx) => {
  const picks = await pickLiveLeafFolders(ctx, 'folder_under_other_drive', 37);
  const out: FaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    const [target] = await rows<{ id: string; drive_id: string; path: string }>(
      ctx.client,
      `SELECT f.id, f.drive_id, f.path FROM storage.folders f JOIN ds_drives dd ON dd.id = f.drive_id
        WHERE f.parent_id IS NULL AND NOT f.is_trashed AND f.drive_id <> $1 AND NOT (f.drive_id = ANY($2::uuid[]))
        ORDER BY hashtextextended(dd.drive_no || ':' || f.path, $3::bigint + $4::bigint) LIMIT 1`,
      [p.drive_id, excluded(ctx), ctx.options.seed, i],
    );
    if (!target) notApplicable('folder_under_other_drive', n(ctx), i, 'raise users');
    await ctx.client.query('UPDATE storage.folders SET parent_id = $2 WHERE id = $1', [p.id, target.id]);
    ctx.usedDrives.add(target.drive_id);
    out.push({
      type: 'folder',
      id: p.id,
      label: `${driveLabel(p)}:${p.path}`,
      detail: { parentId: target.id, parentDriveId: target.drive_id, parentPath: target.path },
    });
  }
  return out;
};

export const folderParentCycle: Injector = async (ctx) => {
  const picks = await pickLiveLeafFolders(ctx, 'folder_parent_cycle', 41);
  const out: FaultResource[] = [];
  await ctx.client.query('ALTER TABLE storage.folders DISABLE TRIGGER folders_cascade_path');
  try {
    for (const p of picks) {
      const [b] = await rows<{ id: string; path: string }>(
        ctx.client,
        `INSERT INTO storage.folders (drive_id, parent_id, name, created_at, updated_at)
         VALUES ($1, $2, 'Loop', now() - interval '3 days', now() - interval '3 days') RETURNING id, path`,
        [p.drive_id, p.id],
      );
      if (!b) throw new Error('internal: folder insert returned nothing');
      await ctx.client.query('UPDATE storage.folders SET parent_id = $2 WHERE id = $1', [p.id, b.id]);
      out.push(
        { type: 'folder', id: p.id, label: `${driveLabel(p)}:${p.path}`, detail: { cycleWith: b.id } },
        { type: 'folder', id: b.id, label: `${driveLabel(p)}:${b.path}`, detail: { cycleWith: p.id } },
      );
    }
  } finally {
    await ctx.client.query('ALTER TABLE storage.folders ENABLE TRIGGER folders_cascade_path');
  }
  return out;
};
