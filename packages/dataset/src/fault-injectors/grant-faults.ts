/**
 * The grant faults: expired grants for `grant_cleanup` to remove, and a
 * grant on a resource nobody has and an expired grant left behind (found by
 * `grants_consistency`).
 */
import type { FaultName } from '../faults.js';
import type { FaultResource } from '../report.js';
import { rows } from '../sql-client.js';
import { type FaultContext, type Injector, n, notApplicable } from './fault-context.js';

export const expiredGrants: Injector = async (ctx) => {
  if (ctx.options.users < 2)
    notApplicable('expired_grants', 2, ctx.options.users, 'it needs at least 2 users');
  const inserted = await rows<{ id: string; subject: string; owner: string; expires_at: Date }>(
    ctx.client,
    `WITH picks AS (
       SELECT i, s.id AS subject_id, s.username AS subject, o.id AS owner_id, o.username AS owner, d.id AS drive_id
         FROM generate_series(0, $1::int - 1) i
         JOIN ds_users s ON s.user_no = (i * 7) % $2::int
         JOIN ds_users o ON o.user_no = ((i * 7) % $2::int + 1) % $2::int
         JOIN ds_drives d ON d.user_no = o.user_no AND d.drive_idx = 0
     ), ins AS (
       INSERT INTO storage.role_grants (subject_id, resource_type, resource_id, role, granted_by, created_at, expires_at)
       SELECT subject_id, 'drive', drive_id, 'viewer', owner_id, now() - interval '10 days',
              now() - interval '2 days' - make_interval(hours => i)
         FROM picks ORDER BY i
       RETURNING id, subject_id, granted_by, expires_at
     )
     SELECT ins.id, p.subject, p.owner, ins.expires_at
       FROM ins JOIN picks p
         ON p.subject_id = ins.subject_id AND p.owner_id = ins.granted_by
        AND ins.expires_at = now() - interval '2 days' - make_interval(hours => p.i)
      ORDER BY p.i`,
    [n(ctx), ctx.options.users],
  );
  return inserted.map((g) => ({
    type: 'grant',
    id: g.id,
    label: `${g.subject} → drive of ${g.owner}`,
    detail: { expiresAt: g.expires_at },
  }));
};

async function insertFaultGrants(
  ctx: FaultContext,
  fault: FaultName,
  values: (i: number) => { type: string; resourceId: string | null; expiresAgo: string | null },
): Promise<FaultResource[]> {
  if (ctx.options.users < 2) notApplicable(fault, 2, ctx.options.users, 'it needs at least 2 users');
  const out: FaultResource[] = [];
  for (let i = 0; i < n(ctx); i++) {
    const v = values(i);
    const [g] = await rows<{ id: string; resource_id: string; subject: string }>(
      ctx.client,
      `WITH s AS (SELECT id, username FROM ds_users WHERE user_no = $1::int)
       INSERT INTO storage.role_grants (subject_id, resource_type, resource_id, role, created_at, expires_at)
       SELECT s.id, $2, COALESCE($3::uuid, md5($5::text)::uuid), 'viewer', now() - interval '40 days',
              CASE WHEN $4::interval IS NULL THEN NULL ELSE now() - $4::interval END
         FROM s
       RETURNING id, resource_id, (SELECT username FROM s) AS subject`,
      [
        (i * 5 + 3) % ctx.options.users,
        v.type,
        v.resourceId,
        v.expiresAgo,
        `${ctx.options.seed}:${fault}:${i}`,
      ],
    );
    if (!g) throw new Error('internal: grant insert returned nothing');
    out.push({
      type: 'grant',
      id: g.id,
      label: `${g.subject} → ${v.type} ${i + 1}`,
      detail: { resourceType: v.type, resourceId: g.resource_id, expiresAgo: v.expiresAgo },
    });
  }
  return out;
}

// A file id nobody has: an md5 of (seed, fault, i) as a UUID (deterministic per seed; the schema's ids are v7).
export const danglingGrant: Injector = (ctx) =>
  insertFaultGrants(ctx, 'dangling_grant', () => ({ type: 'file', resourceId: null, expiresAgo: null }));

export const lingeringExpiredGrant: Injector = async (ctx) => {
  const drives = await rows<{ id: string }>(
    ctx.client,
    'SELECT id FROM ds_drives ORDER BY drive_no LIMIT $1::int',
    [n(ctx)],
  );
  return insertFaultGrants(ctx, 'lingering_expired_grant', (i) => ({
    type: 'drive',
    resourceId: drives[i % Math.max(1, drives.length)]?.id ?? null,
    expiresAgo: `${30 + i} days`,
  }));
};
