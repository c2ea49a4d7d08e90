/**
 * The users and drives writer: `auth.users` (admins, users, externals),
 * `auth.subject_groups` with their members, and every drive created as
 * OxiCloud's four-write transaction does it (drive with no root, root
 * folder, the drive's `root_folder_id`, the owner grants), batch by batch.
 * Ids are the database's `gen_random_uuid()` (the columns' default, random
 * UUIDv4), drawn one statement per batch so rows can be linked before they
 * are inserted; the `oxi_*` scratch tables map plan numbers to them.
 */
import { rows, type SqlClient } from '../sql-client.js';
import type { ResolvedOxiCloudDatasetOptions } from './options.js';
import { ACCOUNT_AGE_SECONDS, type OxiCloudDatasetPlan } from './plan.js';

/** `drives.policies` of a personal drive, as OxiCloud creates it. */
export const PERSONAL_DRIVE_POLICIES = {
  include_in_photo_index: true,
  include_in_music_index: true,
} as const;

/** `n` new ids from the database's `gen_random_uuid()`. */
export async function drawIds(client: SqlClient, n: number): Promise<string[]> {
  if (n === 0) return [];
  const r = await rows<{ id: string }>(
    client,
    'SELECT gen_random_uuid()::text AS id FROM generate_series(1, $1::int)',
    [n],
  );
  return r.map((x) => x.id);
}

/** Slices of `items`, `size` at a time. */
export function* batches<T>(items: readonly T[], size: number): Generator<readonly T[]> {
  for (let at = 0; at < items.length; at += size) yield items.slice(at, at + size);
}

/** The scratch tables (dropped at commit) that map plan numbers to ids, for the writers and the faults. */
export async function createScratchTables(client: SqlClient): Promise<void> {
  await client.query(`
    CREATE TEMP TABLE oxi_users (
      user_no int PRIMARY KEY, id uuid NOT NULL, username text NOT NULL, external boolean NOT NULL
    ) ON COMMIT DROP;
    CREATE TEMP TABLE oxi_groups (group_no int PRIMARY KEY, id uuid NOT NULL, name text NOT NULL) ON COMMIT DROP;
    CREATE TEMP TABLE oxi_drives (
      drive_no int PRIMARY KEY, id uuid NOT NULL, kind text NOT NULL, user_no int NOT NULL,
      root_folder_id uuid NOT NULL, label text NOT NULL
    ) ON COMMIT DROP;
    CREATE TEMP TABLE oxi_folders (
      drive_no int NOT NULL, folder_no int NOT NULL, id uuid NOT NULL, PRIMARY KEY (drive_no, folder_no)
    ) ON COMMIT DROP;
  `);
}

/** Inserts the users, the groups and their members. Returns user ids by `userNo`. */
export async function insertUsersAndGroups(
  client: SqlClient,
  plan: OxiCloudDatasetPlan,
  perStatement: number,
): Promise<{ userIds: string[]; groupIds: string[] }> {
  const userIds: string[] = [];
  for (const part of batches(plan.users, perStatement)) {
    const ids = await drawIds(client, part.length);
    userIds.push(...ids);
    await client.query(
      `INSERT INTO auth.users (id, username, email, role, is_external, storage_used_bytes, created_at, updated_at)
       SELECT t.id, t.username, t.email, t.role::auth.userrole, t.external, 0,
              now() - make_interval(secs => $6::int), now() - make_interval(secs => $6::int)
         FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::boolean[])
              AS t(id, username, email, role, external)`,
      [
        ids,
        part.map((u) => u.username),
        part.map((u) => u.email),
        part.map((u) => u.role),
        part.map((u) => u.external),
        ACCOUNT_AGE_SECONDS,
      ],
    );
    await client.query(
      `INSERT INTO oxi_users (user_no, id, username, external)
       SELECT * FROM unnest($1::int[], $2::uuid[], $3::text[], $4::boolean[])`,
      [part.map((u) => u.userNo), ids, part.map((u) => u.username), part.map((u) => u.external)],
    );
  }
  const groupIds = await drawIds(client, plan.groups.length);
  if (plan.groups.length > 0) {
    await client.query(
      `INSERT INTO auth.subject_groups (id, name, description, created_at, updated_at)
       SELECT t.id, t.name, 'dataset group', now() - interval '100 days', now() - interval '100 days'
         FROM unnest($1::uuid[], $2::text[]) AS t(id, name)`,
      [groupIds, plan.groups.map((g) => g.name)],
    );
    await client.query(
      `INSERT INTO oxi_groups (group_no, id, name) SELECT * FROM unnest($1::int[], $2::uuid[], $3::text[])`,
      [plan.groups.map((g) => g.groupNo), groupIds, plan.groups.map((g) => g.name)],
    );
    const members = plan.groups.flatMap((g) => g.memberUserNos.map((u) => ({ g: g.groupNo, u })));
    const addedBy = userIds[0] as string;
    await client.query(
      `INSERT INTO auth.subject_group_members (group_id, member_user_id, added_by, added_at)
       SELECT t.group_id, t.user_id, $3::uuid, now() - interval '100 days'
         FROM unnest($1::uuid[], $2::uuid[]) AS t(group_id, user_id)`,
      [members.map((m) => groupIds[m.g]), members.map((m) => userIds[m.u]), addedBy],
    );
  }
  return { userIds, groupIds };
}

/**
 * Creates every drive with OxiCloud's four writes, a batch of drives per
 * statement: (1) the drives with `root_folder_id` NULL, (2) their root
 * folders (`Personal`, or the shared drive's name), (3) the drives'
 * `root_folder_id`, (4) the owner grants. Personal: `default_for_user` =
 * the user, `quota_bytes` NULL, the photo/music policies, one user owner
 * grant. Shared: no default user, the admin-set quota, `{}`, owner grants to
 * a user and/or a group. The root-folder constraint trigger checks it all at
 * commit. Returns drive ids and root folder ids by `driveNo`.
 */
export async function insertDrives(
  client: SqlClient,
  options: ResolvedOxiCloudDatasetOptions,
  plan: OxiCloudDatasetPlan,
  ids: { userIds: readonly string[]; groupIds: readonly string[] },
  perStatement: number,
): Promise<{ driveIds: string[]; rootIds: string[] }> {
  const driveIds: string[] = [];
  const rootIds: string[] = [];
  const user = (n: number) => ids.userIds[n] as string;
  for (const part of batches(plan.drives, perStatement)) {
    const dIds = await drawIds(client, part.length);
    const rIds = await drawIds(client, part.length);
    driveIds.push(...dIds);
    rootIds.push(...rIds);
    const personal = part.map((d) => d.kind === 'personal');
    await client.query(
      `INSERT INTO storage.drives (id, kind, default_for_user, quota_bytes, used_bytes, policies, created_at, updated_at)
       SELECT t.id, CASE WHEN t.personal THEN 'personal' ELSE 'shared' END,
              CASE WHEN t.personal THEN t.user_id END,
              CASE WHEN t.personal THEN NULL ELSE $4::bigint END,
              0, CASE WHEN t.personal THEN $5::jsonb ELSE '{}'::jsonb END,
              now() - make_interval(secs => $6::int), now() - make_interval(secs => $6::int)
         FROM unnest($1::uuid[], $2::boolean[], $3::uuid[]) AS t(id, personal, user_id)`,
      [
        dIds,
        personal,
        part.map((d) => user(d.userNo)),
        options.sharedDriveQuotaBytes,
        JSON.stringify(PERSONAL_DRIVE_POLICIES),
        ACCOUNT_AGE_SECONDS,
      ],
    );
    await client.query(
      `INSERT INTO storage.folders (id, name, parent_id, drive_id, created_by, updated_by, created_at, updated_at)
       SELECT t.id, t.name, NULL, t.drive_id, t.user_id, t.user_id,
              now() - make_interval(secs => $5::int), now() - make_interval(secs => $5::int)
         FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::uuid[]) AS t(id, name, drive_id, user_id)`,
      [
        rIds,
        part.map((d) => d.folders[0]?.name ?? 'Personal'),
        dIds,
        part.map((d) => user(d.kind === 'personal' ? d.userNo : d.grantedByUserNo)),
        ACCOUNT_AGE_SECONDS,
      ],
    );
    await client.query(
      `UPDATE storage.drives d SET root_folder_id = t.root_id
         FROM unnest($1::uuid[], $2::uuid[]) AS t(id, root_id) WHERE d.id = t.id`,
      [dIds, rIds],
    );
    const owners = part.flatMap((d, i) =>
      d.owners.map((o) => ({
        type: o.subjectType,
        subject: o.subjectType === 'user' ? user(o.subjectNo) : (ids.groupIds[o.subjectNo] as string),
        drive: dIds[i] as string,
        by: user(d.grantedByUserNo),
      })),
    );
    await client.query(
      `INSERT INTO storage.role_grants (subject_type, subject_id, resource_type, resource_id, role, granted_by, granted_at)
       SELECT t.type, t.subject, 'drive', t.drive, 'owner', t.by, now() - make_interval(secs => $5::int)
         FROM unnest($1::text[], $2::uuid[], $3::uuid[], $4::uuid[]) AS t(type, subject, drive, by)`,
      [
        owners.map((o) => o.type),
        owners.map((o) => o.subject),
        owners.map((o) => o.drive),
        owners.map((o) => o.by),
        ACCOUNT_AGE_SECONDS,
      ],
    );
    await client.query(
      `INSERT INTO oxi_drives (drive_no, id, kind, user_no, root_folder_id, label)
       SELECT * FROM unnest($1::int[], $2::uuid[], $3::text[], $4::int[], $5::uuid[], $6::text[])`,
      [
        part.map((d) => d.driveNo),
        dIds,
        part.map((d) => d.kind),
        part.map((d) => d.userNo),
        rIds,
        part.map((d) =>
          d.kind === 'personal'
            ? `${plan.users[d.userNo]?.username}/Personal`
            : `shared/${d.folders[0]?.name ?? ''}`,
        ),
      ],
    );
  }
  return { driveIds, rootIds };
}

/** Recomputes `drives.used_bytes` and the users' envelopes exactly as OxiCloud's usage sweep does (§6). */
export async function recomputeUsage(client: SqlClient): Promise<void> {
  await client.query(
    `UPDATE storage.drives d
        SET used_bytes = COALESCE((SELECT sum(f.size) FROM storage.files f
                                    WHERE f.drive_id = d.id AND NOT f.is_trashed), 0)
       FROM oxi_drives od WHERE od.id = d.id`,
  );
  await client.query(
    `UPDATE auth.users u
        SET storage_used_bytes = COALESCE((
              SELECT sum(d.used_bytes) FROM storage.drives d
               WHERE d.kind = 'personal' AND EXISTS (
                     SELECT 1 FROM storage.role_grants g
                      WHERE g.resource_type = 'drive' AND g.resource_id = d.id AND g.role = 'owner'
                        AND g.subject_type = 'user' AND g.subject_id = u.id)), 0)
       FROM oxi_users ou WHERE ou.id = u.id AND NOT ou.external`,
  );
}

/**
 * The grants that are not drive ownership: each external user's viewer or
 * editor grant, on a shared drive, or (personal drives cannot gain members)
 * on a live top-level folder of a personal drive.
 */
export async function insertMemberGrants(
  client: SqlClient,
  plan: OxiCloudDatasetPlan,
  userIds: readonly string[],
  driveIds: readonly string[],
  folderId: (driveNo: number, folderNo: number) => string,
): Promise<number> {
  if (plan.grants.length === 0) return 0;
  await client.query(
    `INSERT INTO storage.role_grants (subject_type, subject_id, resource_type, resource_id, role, granted_by, granted_at)
     SELECT 'user', t.subject, t.rtype, t.resource, t.role::storage.grant_role, t.by, now() - interval '20 days'
       FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::text[], $5::uuid[]) AS t(subject, rtype, resource, role, by)`,
    [
      plan.grants.map((g) => userIds[g.userNo]),
      plan.grants.map((g) => g.resourceType),
      plan.grants.map((g) =>
        g.resourceType === 'drive' ? driveIds[g.driveNo] : folderId(g.driveNo, g.folderNo),
      ),
      plan.grants.map((g) => g.role),
      plan.grants.map((g) => userIds[g.grantedByUserNo]),
    ],
  );
  return plan.grants.length;
}
