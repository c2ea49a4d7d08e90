/**
 * The reference faults: a favorite left behind by a file deleted since
 * (OxiCloud deletes no favorite with its item, fact sheet §10); a share link
 * whose grant was never written (fact sheet §8: the share row and its grant
 * are two statements); a face left with the hash of content its file no
 * longer has (fact sheet §10).
 */
import { rows } from '../../sql-client.js';
import { hashes, type Injector, n, notApplicable, type OxiCloudFaultResource } from './fault-context.js';

export const danglingFavorite: Injector = async (ctx) => {
  const out: OxiCloudFaultResource[] = [];
  for (let i = 0; i < n(ctx); i++) {
    // The id of a file no longer there (any id no files row has): the favorite outlived it.
    const [f] = await rows<{ id: string; username: string; file_id: string }>(
      ctx.client,
      `WITH pick AS (
         SELECT u.id AS user_id, u.username
           FROM oxi_users u
           JOIN storage.drives d ON d.default_for_user = u.id
           JOIN oxi_drives od ON od.id = d.id
          WHERE u.user_no < 100
          ORDER BY hashtextextended(u.username, $1::bigint + 7 + $2::bigint) LIMIT 1
       )
       INSERT INTO auth.user_favorites (user_id, item_id, item_type, created_at)
       SELECT p.user_id, gen_random_uuid()::text, 'file', now() - interval '2 days' FROM pick p
       RETURNING id::text, (SELECT username FROM pick) AS username, item_id AS file_id`,
      [ctx.options.seed, i],
    );
    if (!f) notApplicable('dangling_favorite', n(ctx), i, 'raise users');
    out.push({
      type: 'favorite',
      id: f.id,
      label: `${f.username}'s favorite of a deleted file (${i + 1})`,
      detail: { itemId: f.file_id },
    });
  }
  return out;
};

export const shareWithoutGrant: Injector = async (ctx) => {
  const out: OxiCloudFaultResource[] = [];
  for (let i = 0; i < n(ctx); i++) {
    const [s] = await rows<{ id: string; username: string; file_id: string }>(
      ctx.client,
      `WITH pick AS (
         SELECT u.id AS user_id, u.username, f.id AS file_id, f.name
           FROM oxi_users u
           JOIN storage.drives d ON d.default_for_user = u.id
           JOIN oxi_drives od ON od.id = d.id
           JOIN storage.files f ON f.drive_id = d.id AND NOT f.is_trashed
          WHERE u.user_no < 100
          ORDER BY hashtextextended(u.username || ':' || f.name, $1::bigint + 11 + $2::bigint) LIMIT 1
       )
       INSERT INTO storage.shares (item_id, item_name, item_type, token, created_at, created_by)
       SELECT p.file_id::text, p.name, 'file', gen_random_uuid()::text,
              extract(epoch FROM now() - interval '2 days')::bigint, p.user_id FROM pick p
       RETURNING id::text, (SELECT username FROM pick) AS username, item_id AS file_id`,
      [ctx.options.seed, i],
    );
    if (!s) notApplicable('share_without_grant', n(ctx), i, 'raise users or filesPerDrive');
    out.push({
      type: 'share',
      id: s.id,
      label: `${s.username}'s share link with no grant (${i + 1})`,
      detail: { itemId: s.file_id },
    });
  }
  return out;
};

export const danglingNextcloudId: Injector = async (ctx) => {
  const out: OxiCloudFaultResource[] = [];
  for (let i = 0; i < n(ctx); i++) {
    // The id of a file deleted since: OxiCloud never deletes its NextCloud id.
    const [r] = await rows<{ id: string; file_id: string }>(
      ctx.client,
      `INSERT INTO storage.nextcloud_object_ids (object_type, object_id)
       VALUES ('file', gen_random_uuid()) RETURNING id::text, object_id::text AS file_id`,
    );
    if (!r) throw new Error('internal: nextcloud id insert returned nothing');
    out.push({
      type: 'nextcloud_id',
      id: r.id,
      label: `NextCloud id of a deleted file (${i + 1})`,
      detail: { itemId: r.file_id },
    });
  }
  return out;
};

/**
 * A face that describes content its file no longer has (fact sheet §10):
 * the image's content was updated, and the reindex, which deletes the
 * file's faces first, failed in its background task. Its `blob_hash` is
 * another content's that is still stored (a non-empty manifest no earlier
 * fault touched), so the finding's reason is `stale_hash`. The face's file
 * and drive stay free for other faults: only the face changes.
 */
export const staleFace: Injector = async (ctx) => {
  const out: OxiCloudFaultResource[] = [];
  const taken: string[] = [];
  for (let i = 0; i < n(ctx); i++) {
    const [f] = await rows<{
      id: string;
      label: string;
      file_id: string;
      file_hash: string;
      stale_hash: string;
    }>(
      ctx.client,
      `WITH pick AS (
         SELECT fa.id, od.label || ':' || fi.name AS label, fi.id AS file_id, fi.blob_hash AS file_hash
           FROM faces.faces fa
           JOIN storage.files fi ON fi.id = fa.file_id
           JOIN oxi_drives od ON od.id = fi.drive_id
          WHERE fa.blob_hash = fi.blob_hash AND NOT (fa.id = ANY($3::uuid[]))
          ORDER BY hashtextextended(od.label || ':' || fi.name || ':' || fa.bbox::text, $1::bigint + 19 + $2::bigint)
          LIMIT 1
       ), stale AS (
         SELECT m.file_hash AS hash FROM storage.chunk_manifests m, pick p
          WHERE m.file_hash <> p.file_hash AND m.total_size > 0 AND NOT (m.file_hash = ANY($4::text[]))
          ORDER BY hashtextextended(m.file_hash, $1::bigint + 23 + $2::bigint) LIMIT 1
       )
       UPDATE faces.faces fa SET blob_hash = s.hash FROM pick p, stale s WHERE fa.id = p.id
       RETURNING fa.id::text, p.label, p.file_id::text, p.file_hash, s.hash AS stale_hash`,
      [ctx.options.seed, i, taken, hashes(ctx)],
    );
    if (!f) notApplicable('stale_face', n(ctx), i, 'raise users or imageShare');
    taken.push(f.id);
    out.push({
      type: 'face',
      id: f.id,
      label: `${f.label}: a face of other content (${i + 1})`,
      detail: { fileId: f.file_id, fileHash: f.file_hash, faceHash: f.stale_hash },
    });
  }
  return out;
};
