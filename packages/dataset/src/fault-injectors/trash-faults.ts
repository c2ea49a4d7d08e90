/**
 * The trash fault: folder subtrees and files trashed long enough ago for
 * `trash_cleanup` to purge them.
 */
import type { FaultResource } from '../report.js';
import { rows } from '../sql-client.js';
import { type DriveRow, driveLabel, excluded, type Injector, n, notApplicable } from './fault-context.js';

export const oldTrash: Injector = async (ctx) => {
  const roots = await rows<DriveRow & { id: string; path: string; lpath: string; subtree: string }>(
    ctx.client,
    `WITH cand AS (
       SELECT f.id, f.path, f.lpath, d.id AS drive_id, d.username, d.name AS drive_name, d.drive_no
         FROM storage.folders f
         JOIN ds_drives d ON d.id = f.drive_id
         LEFT JOIN storage.folders p ON p.id = f.parent_id
        WHERE f.is_trashed AND (p.id IS NULL OR NOT p.is_trashed) AND NOT (d.id = ANY($1::uuid[]))
        ORDER BY hashtextextended(d.drive_no || ':' || f.path, $2::bigint + 23)
        LIMIT 50
     )
     SELECT c.id, c.path, c.lpath::text AS lpath, c.drive_id, c.username, c.drive_name,
            (SELECT count(*) FROM storage.folders s WHERE s.drive_id = c.drive_id AND s.lpath <@ c.lpath) AS subtree
       FROM cand c
      ORDER BY subtree, hashtextextended(c.drive_no || ':' || c.path, $2::bigint + 23)
      LIMIT $3::int`,
    [excluded(ctx), ctx.options.seed, n(ctx)],
  );
  const out: FaultResource[] = [];
  const rootDrives = new Set(roots.map((r) => r.drive_id));
  for (const [i, r] of roots.entries()) {
    const ago = `${45 * 24 + i} hours`;
    const touched = await rows<{ type: 'folder' | 'file'; id: string; label: string }>(
      ctx.client,
      `WITH fo AS (
         UPDATE storage.folders s
            SET trashed_at = now() - $3::interval, updated_at = now() - $3::interval,
                created_at = LEAST(s.created_at, now() - interval '60 days')
          WHERE s.drive_id = $1 AND s.lpath <@ $2::ltree
         RETURNING s.id, s.path
       ), fi AS (
         UPDATE storage.files f
            SET trashed_at = now() - $3::interval, updated_at = now() - $3::interval,
                created_at = LEAST(f.created_at, now() - interval '60 days')
           FROM fo WHERE f.folder_id = fo.id
         RETURNING f.id, fo.path || '/' || f.name AS label
       )
       SELECT 'folder' AS type, id, path AS label FROM fo
       UNION ALL SELECT 'file' AS type, id, label FROM fi
       ORDER BY type DESC, label`,
      [r.drive_id, r.lpath, ago],
    );
    for (const t of touched) {
      out.push({
        type: t.type,
        id: t.id,
        label: `${driveLabel(r)}:${t.label}`,
        detail: { trashRootId: r.id, trashedAgo: ago },
      });
    }
  }
  // Standalone trashed files (in a live folder or at a drive root), in other drives.
  const files = await rows<DriveRow & { id: string; name: string; path: string | null }>(
    ctx.client,
    `SELECT fi.id, fi.name, fo.path, d.id AS drive_id, d.username, d.name AS drive_name
       FROM storage.files fi
       JOIN ds_drives d ON d.id = fi.drive_id
       LEFT JOIN storage.folders fo ON fo.id = fi.folder_id
      WHERE fi.is_trashed AND (fo.id IS NULL OR NOT fo.is_trashed) AND NOT (d.id = ANY($1::uuid[]))
      ORDER BY hashtextextended(fi.name, $2::bigint + 29)
      LIMIT $3::int`,
    [[...excluded(ctx), ...rootDrives], ctx.options.seed, n(ctx)],
  );
  for (const [i, f] of files.entries()) {
    const ago = `${45 * 24 + 12 + i} hours`;
    await ctx.client.query(
      `UPDATE storage.files SET trashed_at = now() - $2::interval, updated_at = now() - $2::interval,
              created_at = LEAST(created_at, now() - interval '60 days')
        WHERE id = $1`,
      [f.id, ago],
    );
    out.push({
      type: 'file',
      id: f.id,
      label: `${driveLabel(f)}:${f.path ?? ''}/${f.name}`,
      detail: { trashedAgo: ago },
    });
  }
  if (roots.length === 0 && files.length === 0) {
    notApplicable('old_trash', n(ctx), 0, 'raise trashedFolderShare or trashedFileShare');
  }
  for (const d of rootDrives) ctx.usedDrives.add(d);
  for (const f of files) ctx.usedDrives.add(f.drive_id);
  return out;
};
