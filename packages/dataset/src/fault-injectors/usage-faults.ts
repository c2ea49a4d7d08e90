/**
 * The usage faults (found by `drives_consistency`): a drive's and a user's
 * stored used bytes drift from what their files add up to.
 */
import type { FaultResource } from '../report.js';
import { rows, toInt } from '../sql-client.js';
import { excluded, type Injector, n, notApplicable } from './fault-context.js';

export const driveDrift: Injector = async (ctx) => {
  const picks = await rows<{
    a_id: string;
    b_id: string;
    username: string;
    a_name: string;
    b_name: string;
    a_used: string;
    b_used: string;
  }>(
    ctx.client,
    `SELECT d0.id AS a_id, d1.id AS b_id, d0.username, d0.name AS a_name, d1.name AS b_name,
            a.used_bytes AS a_used, b.used_bytes AS b_used
       FROM ds_drives d0
       JOIN ds_drives d1 ON d1.user_no = d0.user_no AND d1.drive_idx = 1
       JOIN storage.drives a ON a.id = d0.id
       JOIN storage.drives b ON b.id = d1.id
      WHERE d0.drive_idx = 0 AND b.used_bytes > 0
        AND NOT (d0.id = ANY($1::uuid[])) AND NOT (d1.id = ANY($1::uuid[]))
      ORDER BY hashint8extended(d0.user_no, $2::bigint)
      LIMIT $3::int`,
    [excluded(ctx), ctx.options.seed, n(ctx)],
  );
  if (picks.length < n(ctx)) {
    notApplicable(
      'drive_used_bytes_drift',
      n(ctx),
      picks.length,
      'it needs users with two non-empty drives: raise users or secondDriveShare',
    );
  }
  const out: FaultResource[] = [];
  for (const p of picks) {
    const aUsed = toInt(p.a_used);
    const bUsed = toInt(p.b_used);
    const delta = Math.max(1, Math.floor(bUsed / 3));
    await ctx.client.query('UPDATE storage.drives SET used_bytes = used_bytes + $2::bigint WHERE id = $1', [
      p.a_id,
      delta,
    ]);
    await ctx.client.query('UPDATE storage.drives SET used_bytes = used_bytes - $2::bigint WHERE id = $1', [
      p.b_id,
      delta,
    ]);
    ctx.usedDrives.add(p.a_id).add(p.b_id);
    out.push(
      {
        type: 'drive',
        id: p.a_id,
        label: `${p.username}/${p.a_name}`,
        detail: { storedBytes: aUsed + delta, expectedBytes: aUsed },
      },
      {
        type: 'drive',
        id: p.b_id,
        label: `${p.username}/${p.b_name}`,
        detail: { storedBytes: bUsed - delta, expectedBytes: bUsed },
      },
    );
  }
  return out;
};

export const userDrift: Injector = async (ctx) => {
  const picks = await rows<{ id: string; username: string; used: string; drive_ids: string[] }>(
    ctx.client,
    `SELECT u.id, u.username, au.storage_used_bytes AS used, array_agg(d.id::text) AS drive_ids
       FROM ds_users u
       JOIN auth.users au ON au.id = u.id
       JOIN ds_drives d ON d.user_no = u.user_no
      GROUP BY u.user_no, u.id, u.username, au.storage_used_bytes
     HAVING NOT bool_or(d.id = ANY($1::uuid[]))
      ORDER BY hashint8extended(u.user_no, $2::bigint + 1)
      LIMIT $3::int`,
    [excluded(ctx), ctx.options.seed, n(ctx)],
  );
  if (picks.length < n(ctx)) notApplicable('user_used_bytes_drift', n(ctx), picks.length, 'raise users');
  // One client runs one statement at a time (pg 9 refuses queued queries): one UPDATE after another.
  const resources: FaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    const delta = 1_048_576 + i * 4096;
    await ctx.client.query(
      'UPDATE auth.users SET storage_used_bytes = storage_used_bytes + $2::bigint WHERE id = $1',
      [p.id, delta],
    );
    for (const d of p.drive_ids) ctx.usedDrives.add(d);
    const used = toInt(p.used);
    resources.push({
      type: 'user',
      id: p.id,
      label: p.username,
      detail: { storedBytes: used + delta, expectedBytes: used },
    });
  }
  return resources;
};
