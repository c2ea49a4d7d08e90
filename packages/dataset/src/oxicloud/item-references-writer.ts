import type { SqlClient } from '../sql-client.js';

/**
 * The rows that name an item by id with no foreign key (fact sheet §10), as
 * a user's clicks leave them: each internal user with a default drive among
 * this dataset's drives favors two of its live files and one live folder,
 * has three of its live files among the recent items (each of them with a
 * NextCloud id, as a NextCloud client leaves them), and shares one live
 * file by link (a `storage.shares` row and its one viewer token grant on
 * the file, the two writes of OxiCloud's share service). Every id names an
 * item that exists and every share has its grant, so `references_consistency`
 * finds nothing on a clean dataset; the `dangling_favorite`,
 * `dangling_nextcloud_id` and `share_without_grant` faults break one each. Returns the share links written.
 */
export async function insertItemReferences(client: SqlClient): Promise<number> {
  const picked = (table: string, column: string, limit: number, type: 'file' | 'folder', extra = '') => `
    INSERT INTO ${table} (user_id, item_id, item_type, ${column})
    SELECT d.default_for_user, x.id::text, '${type}', now() - interval '2 days'
      FROM storage.drives d
      JOIN oxi_drives od ON od.id = d.id
     CROSS JOIN LATERAL (
           SELECT i.id FROM storage.${type === 'file' ? 'files' : 'folders'} i
            WHERE i.drive_id = d.id AND NOT i.is_trashed ${extra}
            ORDER BY i.name, i.id LIMIT ${limit}) x
     WHERE d.default_for_user IS NOT NULL
    ON CONFLICT DO NOTHING`;
  await client.query(picked('auth.user_favorites', 'created_at', 2, 'file'));
  await client.query(picked('auth.user_favorites', 'created_at', 1, 'folder', 'AND i.parent_id IS NOT NULL'));
  await client.query(picked('auth.user_recent_files', 'accessed_at', 3, 'file'));
  // The NextCloud ids a client asked for: each default drive's live files and folders named above.
  await client.query(`
    INSERT INTO storage.nextcloud_object_ids (object_type, object_id)
    SELECT item_type, item_id::uuid FROM auth.user_favorites
    UNION SELECT item_type, item_id::uuid FROM auth.user_recent_files
    ON CONFLICT DO NOTHING`);
  const shared = await client.query(`
    WITH shared AS (
      INSERT INTO storage.shares (item_id, item_name, item_type, token, created_at, created_by)
      SELECT x.id::text, x.name, 'file', gen_random_uuid()::text,
             extract(epoch FROM now() - interval '2 days')::bigint, d.default_for_user
        FROM storage.drives d
        JOIN oxi_drives od ON od.id = d.id
       CROSS JOIN LATERAL (
             SELECT i.id, i.name FROM storage.files i
              WHERE i.drive_id = d.id AND NOT i.is_trashed ORDER BY i.name, i.id LIMIT 1) x
       WHERE d.default_for_user IS NOT NULL
      RETURNING id, item_id, created_by
    )
    INSERT INTO storage.role_grants (subject_type, subject_id, resource_type, resource_id, role, granted_by, granted_at)
    SELECT 'token', s.id, 'file', s.item_id::uuid, 'viewer', s.created_by, now() - interval '2 days' FROM shared s`);
  return shared.rowCount ?? 0;
}
