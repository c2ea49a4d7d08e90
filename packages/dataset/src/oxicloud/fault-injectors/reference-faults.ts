/**
 * The reference faults: a favorite left behind by a file deleted since
 * (OxiCloud deletes no favorite with its item, fact sheet §10).
 */
import { rows } from '../../sql-client.js';
import { type Injector, n, notApplicable, type OxiCloudFaultResource } from './fault-context.js';

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
