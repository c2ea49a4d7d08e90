/**
 * The grant faults: a grant on a file nobody has, grants expired inside and
 * past OxiCloud's cleanup grace.
 */
import { rows } from '../../sql-client.js';
import type { OxiCloudFaultName } from '../faults.js';
import {
  type FaultContext,
  type Injector,
  n,
  notApplicable,
  type OxiCloudFaultResource,
} from './fault-context.js';

/** Inserts one user grant on a folder (or a file id nobody has) and returns its id. */
async function insertGrant(
  ctx: FaultContext,
  fault: OxiCloudFaultName,
  i: number,
  resource: 'folder' | 'missing_file',
  expiresAgo: string | null,
): Promise<OxiCloudFaultResource> {
  const [g] = await rows<{ id: string; username: string; resource_id: string }>(
    ctx.client,
    `WITH pick AS (
       SELECT u.id AS subject, u.username, fo.id AS folder_id, o.id AS owner
         FROM oxi_users u
         JOIN oxi_drives d ON d.kind = 'shared' OR d.user_no <> u.user_no
         JOIN oxi_folders fo ON fo.drive_no = d.drive_no AND fo.folder_no = 0
         JOIN oxi_users o ON o.user_no = d.user_no
        WHERE u.user_no < 100 AND d.drive_no < 100
          AND NOT EXISTS (SELECT 1 FROM storage.role_grants g
                           WHERE g.subject_type = 'user' AND g.subject_id = u.id AND g.resource_id = fo.id)
        ORDER BY hashtextextended(u.username || ':' || d.label, $1::bigint + $2::bigint) LIMIT 1
     )
     INSERT INTO storage.role_grants (subject_type, subject_id, resource_type, resource_id, role, granted_by, granted_at, expires_at)
     SELECT 'user', p.subject, CASE WHEN $3 = 'folder' THEN 'folder' ELSE 'file' END,
            CASE WHEN $3 = 'folder' THEN p.folder_id ELSE gen_random_uuid() END,
            'viewer', p.owner, now() - interval '40 days',
            CASE WHEN $4::interval IS NULL THEN NULL ELSE now() - $4::interval END
       FROM pick p
     RETURNING id, (SELECT username FROM pick) AS username, resource_id`,
    [ctx.options.seed, fault.length * 1000 + i, resource, expiresAgo],
  );
  if (!g) notApplicable(fault, n(ctx), i, 'raise users');
  return {
    type: 'grant',
    id: g.id,
    label: `${g.username} → ${resource === 'folder' ? 'a root folder' : 'a missing file'} (${fault} ${i + 1})`,
    detail: { resourceId: g.resource_id, expiresAgo },
  };
}

export const danglingGrant: Injector = async (ctx) => {
  const out: OxiCloudFaultResource[] = [];
  for (let i = 0; i < n(ctx); i++)
    out.push(await insertGrant(ctx, 'dangling_grant', i, 'missing_file', null));
  return out;
};

export const expiredGrants: Injector = async (ctx) => {
  const out: OxiCloudFaultResource[] = [];
  for (let i = 0; i < n(ctx); i++) {
    out.push(await insertGrant(ctx, 'expired_grants', i, 'folder', `${48 + i} hours`));
  }
  return out;
};

export const lingeringExpiredGrant: Injector = async (ctx) => {
  const out: OxiCloudFaultResource[] = [];
  for (let i = 0; i < n(ctx); i++) {
    out.push(await insertGrant(ctx, 'lingering_expired_grant', i, 'folder', `${30 + i} days`));
  }
  return out;
};

/**
 * A viewer grant on a drive's root folder whose subject is gone: a user or a
 * share row deleted with the triggers off (or a grant inserted with an id
 * nobody has: the table has no foreign keys), a group deleted outside the
 * app (no trigger cleans group grants).
 */
async function insertOrphanSubjectGrant(
  ctx: FaultContext,
  fault: OxiCloudFaultName,
  i: number,
  subjectType: 'user' | 'group' | 'token',
): Promise<OxiCloudFaultResource> {
  const [g] = await rows<{ id: string; label: string }>(
    ctx.client,
    `WITH pick AS (
       SELECT fo.id AS folder_id, o.id AS owner, d.label
         FROM oxi_drives d
         JOIN oxi_folders fo ON fo.drive_no = d.drive_no AND fo.folder_no = 0
         JOIN oxi_users o ON o.user_no = d.user_no
        WHERE d.drive_no < 100
        ORDER BY hashtextextended(d.label, $1::bigint + $2::bigint) LIMIT 1
     )
     INSERT INTO storage.role_grants (subject_type, subject_id, resource_type, resource_id, role, granted_by, granted_at)
     SELECT $3, gen_random_uuid(), 'folder', p.folder_id, 'viewer', p.owner, now() - interval '40 days'
       FROM pick p
     RETURNING id, (SELECT label FROM pick) AS label`,
    [ctx.options.seed, fault.length * 1000 + i, subjectType],
  );
  if (!g) notApplicable(fault, n(ctx), i, 'raise users');
  return {
    type: 'grant',
    id: g.id,
    label: `a ${subjectType} that no longer exists → ${g.label}'s root (${fault} ${i + 1})`,
    detail: { subjectType },
  };
}

export const danglingGroupGrant: Injector = async (ctx) => {
  const out: OxiCloudFaultResource[] = [];
  for (let i = 0; i < n(ctx); i++)
    out.push(await insertOrphanSubjectGrant(ctx, 'dangling_group_grant', i, 'group'));
  return out;
};

export const danglingTokenGrant: Injector = async (ctx) => {
  const out: OxiCloudFaultResource[] = [];
  for (let i = 0; i < n(ctx); i++)
    out.push(await insertOrphanSubjectGrant(ctx, 'dangling_token_grant', i, 'token'));
  return out;
};

export const danglingUserGrant: Injector = async (ctx) => {
  const out: OxiCloudFaultResource[] = [];
  for (let i = 0; i < n(ctx); i++)
    out.push(await insertOrphanSubjectGrant(ctx, 'dangling_user_grant', i, 'user'));
  return out;
};
