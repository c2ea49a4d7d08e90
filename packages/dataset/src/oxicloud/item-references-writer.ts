import type { SqlClient } from '../sql-client.js';

/**
 * The rows that name an item by id with no foreign key (fact sheet §10), as
 * a user's clicks leave them: each internal user with a default drive among
 * this dataset's drives favors two of its live files and one live folder,
 * and has three of its live files among the recent items. Every id names an
 * item that exists, so `references_consistency` finds nothing on a clean
 * dataset; the `dangling_favorite` fault breaks one.
 */
export async function insertItemReferences(client: SqlClient): Promise<void> {
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
}
