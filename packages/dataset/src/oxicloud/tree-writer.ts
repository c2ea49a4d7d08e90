/**
 * The tree writer: every drive's folders below its root, level by level
 * (the path trigger reads the parent row), then the files rows, as
 * OxiCloud's trash leaves them: a trashed folder's whole subtree is trashed
 * at its time, only the folder the trash ran on keeps `original_parent_id`;
 * a file trashed on its own keeps its folder and gets `original_folder_id`.
 */
import { categoryOrderFor } from '@oxicloud/storage';
import type { SqlClient } from '../sql-client.js';
import type { ContentDigest } from './content-writer.js';
import { mimeOf, type OxiCloudDatasetPlan, type PlannedContent } from './plan.js';
import { batches, drawIds } from './users-drives-writer.js';

/** Folder ids by `(driveNo, folderNo)`. */
export type FolderIds = (driveNo: number, folderNo: number) => string;

/** Inserts the folders below the roots. Returns the folder id lookup (roots included). */
export async function insertFolders(
  client: SqlClient,
  plan: OxiCloudDatasetPlan,
  ids: { userIds: readonly string[]; driveIds: readonly string[]; rootIds: readonly string[] },
  perStatement: number,
  onProgress: (done: number) => void,
): Promise<FolderIds> {
  const byKey = new Map<string, string>();
  const key = (d: number, f: number) => `${d}:${f}`;
  for (const d of plan.drives) byKey.set(key(d.driveNo, 0), ids.rootIds[d.driveNo] as string);
  const lookup: FolderIds = (d, f) => {
    const id = byKey.get(key(d, f));
    if (id === undefined) throw new Error(`internal: folder ${f} of drive ${d} has no id yet`);
    return id;
  };
  let done = 0;
  for (let depth = 1; depth <= plan.maxDepth; depth++) {
    const level = plan.drives.flatMap((d) =>
      d.folders.filter((f) => f.depth === depth).map((f) => ({ d, f })),
    );
    for (const part of batches(level, perStatement)) {
      const newIds = await drawIds(client, part.length);
      for (const [i, p] of part.entries()) byKey.set(key(p.d.driveNo, p.f.folderNo), newIds[i] as string);
      await client.query(
        `INSERT INTO storage.folders
           (id, name, parent_id, drive_id, is_trashed, trashed_at, original_parent_id,
            created_by, updated_by, created_at, updated_at)
         SELECT t.id, t.name, t.parent_id, t.drive_id, t.trashed_ago IS NOT NULL,
                now() - make_interval(secs => t.trashed_ago),
                CASE WHEN t.trash_root THEN t.parent_id END,
                t.user_id, t.user_id,
                now() - make_interval(secs => t.created_ago),
                now() - make_interval(secs => COALESCE(t.trashed_ago, t.created_ago))
           FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::uuid[], $5::int[], $6::boolean[], $7::uuid[], $8::int[])
                AS t(id, name, parent_id, drive_id, trashed_ago, trash_root, user_id, created_ago)`,
        [
          newIds,
          part.map((p) => p.f.name),
          part.map((p) => lookup(p.d.driveNo, p.f.parentNo)),
          part.map((p) => ids.driveIds[p.d.driveNo]),
          part.map((p) => p.f.trashedAgo),
          part.map((p) => p.f.trashRoot),
          part.map((p) => ids.userIds[p.d.userNo]),
          part.map((p) => p.f.createdAgo),
        ],
      );
      done += part.length;
      onProgress(done);
    }
  }
  const all = [...byKey.entries()];
  for (const part of batches(all, perStatement * 4)) {
    await client.query(
      `INSERT INTO oxi_folders (drive_no, folder_no, id)
       SELECT split_part(k, ':', 1)::int, split_part(k, ':', 2)::int, id
         FROM unnest($1::text[], $2::uuid[]) AS t(k, id)`,
      [part.map(([k]) => k), part.map(([, id]) => id)],
    );
  }
  return lookup;
}

/**
 * Inserts the files rows, `perStatement` at a time: `blob_hash` = the
 * content's file hash, `size` = its size, the MIME type and category of its
 * kind, `media_sort_date` = `created_at` (no metadata rows), uploaded by the
 * drive's user. Ids are the column default.
 */
export async function insertFiles(
  client: SqlClient,
  plan: OxiCloudDatasetPlan,
  digests: readonly ContentDigest[],
  ids: { userIds: readonly string[]; driveIds: readonly string[]; folderId: FolderIds },
  perStatement: number,
  onProgress: (done: number) => void,
): Promise<void> {
  let done = 0;
  for (const part of batches(plan.files, perStatement)) {
    const content = (no: number) => plan.contents[no] as PlannedContent;
    await client.query(
      `INSERT INTO storage.files
         (name, folder_id, blob_hash, size, mime_type, is_trashed, trashed_at, original_folder_id,
          created_at, updated_at, media_sort_date, category_order, drive_id, created_by, updated_by)
       SELECT t.name, t.folder_id, t.blob_hash, t.size, t.mime, t.trashed_ago IS NOT NULL,
              now() - make_interval(secs => t.trashed_ago),
              CASE WHEN t.directly THEN t.folder_id END,
              now() - make_interval(secs => t.created_ago),
              now() - make_interval(secs => COALESCE(t.trashed_ago, t.created_ago)),
              now() - make_interval(secs => t.created_ago),
              t.category, t.drive_id, t.user_id, t.user_id
         FROM unnest($1::text[], $2::uuid[], $3::text[], $4::bigint[], $5::text[], $6::int[], $7::boolean[],
                     $8::int[], $9::smallint[], $10::uuid[], $11::uuid[])
              AS t(name, folder_id, blob_hash, size, mime, trashed_ago, directly, created_ago, category, drive_id, user_id)`,
      [
        part.map((f) => f.name),
        part.map((f) => ids.folderId(f.driveNo, f.folderNo)),
        part.map((f) => digests[f.contentNo]?.fileHash),
        part.map((f) => content(f.contentNo).size),
        part.map((f) => mimeOf(content(f.contentNo))),
        part.map((f) => f.trashedAgo),
        part.map((f) => f.trashedDirectly),
        part.map((f) => f.createdAgo),
        part.map((f) => categoryOrderFor(f.name, mimeOf(content(f.contentNo)))),
        part.map((f) => ids.driveIds[f.driveNo]),
        part.map((f) => ids.userIds[plan.drives[f.driveNo]?.userNo ?? 0]),
      ],
    );
    done += part.length;
    onProgress(done);
  }
}
