import type { ConsistencyCheck } from '@oxicloud/consistency';
import type { Logger } from '@oxicloud/scheduler';
import {
  createDrivesConsistencyCheck,
  type DriveShapeAnomaly,
  type DrivesConsistencyCheckOptions,
  type DriveUsageDrift,
  type DriveUsageScan,
  type ScanPage,
  type UserUsageDrift,
} from '@oxicloud/tenants';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { bigintToNumber } from '../postgres/database.js';
import type { OxiCloudDatabase } from './database.js';
import { estimateOxiRows } from './oxi-tree-support.js';

interface DriveJson {
  id: string;
  owner_id: string | null;
  recorded: string;
  actual: string;
}
interface UserJson {
  id: string;
  recorded: string;
  actual: string;
  drives: number;
}
interface ShapeJson {
  id: string;
  kind: string;
  default_for_user: string | null;
  root_folder_id: string | null;
  owner_grants: number;
  user_owner_grants: number;
  root_problems: string[];
  owner_problems: string[];
}
interface PageRow<T> {
  scanned: string;
  last_id: string | null;
  anomalies: T[];
}

const toDrive = (r: DriveJson): DriveUsageDrift => ({
  driveId: r.id,
  // The port's ownerId is a string: a drive with no owner grant at all (§8) reports ''.
  ownerId: r.owner_id ?? '',
  recordedBytes: bigintToNumber(r.recorded),
  actualBytes: bigintToNumber(r.actual),
});
const toUser = (r: UserJson): UserUsageDrift => ({
  userId: r.id,
  recordedBytes: bigintToNumber(r.recorded),
  actualBytes: bigintToNumber(r.actual),
  driveCount: r.drives,
});

const toShape = (r: ShapeJson): DriveShapeAnomaly => ({
  driveId: r.id,
  driveKind: r.kind,
  ownerGrants: r.owner_grants,
  userOwnerGrants: r.user_owner_grants,
  defaultForUser: r.default_for_user,
  rootFolderId: r.root_folder_id,
  rootProblems: r.root_problems,
  ownerProblems: r.owner_problems,
});

/** Options of {@link OxiDriveUsageScan}. */
export interface OxiDriveUsageScanOptions {
  /** The checks' batch loops log their retries, lost checkpoints and failures here. */
  readonly logger?: Logger;
  /** Each check's own options, by check name: given to that check only. */
  readonly checks?: {
    readonly drives_consistency?: Omit<DrivesConsistencyCheckOptions, 'scan' | 'logger'>;
  };
}

/**
 * The SQL of a drive's owner on OxiCloud's domain, for the drive row `b`:
 * `default_for_user` when set, else the strongest owner grant on it
 * (`role_grants` resource `('drive', id)`, role `owner`; a user before a
 * group, then the oldest). There is no owner column (fact sheet §3).
 */
const DRIVE_OWNER = sql`COALESCE(b.default_for_user, (
  SELECT g.subject_id FROM storage.role_grants g
   WHERE g.resource_type = 'drive' AND g.resource_id = b.id AND g.role = 'owner'
   ORDER BY (g.subject_type = 'user') DESC, g.granted_at, g.id
   LIMIT 1))`;

/**
 * {@link DriveUsageScan} on OxiCloud's `storage.drives` / `auth.users`, and
 * the stateful adapter of the usage counters (`subsystem() === 'used_bytes'`):
 * it contributes `drives_consistency`, with OxiCloud's two formulas (fact
 * sheet §6, §12 items 9 and 10):
 *
 * - drive: `used_bytes = Σ files.size` over the drive's **live** files
 *   (`NOT is_trashed`; trashed files are not counted, as OxiCloud's own
 *   reconciliation does);
 * - user envelope: `storage_used_bytes = Σ drives.used_bytes` over the
 *   **personal** drives the user owns by a user owner grant (`expires_at`
 *   ignored, default and secondary drives alike, shared drives never);
 *   external users are never anomalies (a CHECK pins them to 0 and
 *   OxiCloud's sweep skips them).
 *
 * - drive shape (items 5 and 8): the root folder is set, exists, is a root,
 *   is this drive's and no other drive's; an owner grant in force (no expiry,
 *   or a later one) exists; a personal drive has exactly one user owner
 *   grant, and `default_for_user`, when set, is that user.
 *
 * A drift's `ownerId` comes from grants (there is no owner column):
 * `default_for_user` when set, else the owner grant (a user before a group);
 * `''` for a drive with no owner grant at all. Each page is one statement:
 * a keyset page of the walked table, the matching sums grouped in the
 * database, and back only the drifting rows plus the count and last id.
 *
 * @example
 * ```ts
 * const db = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool }) });
 * consistencyRegistry.register(new OxiDriveUsageScan(db));
 * ```
 */
export class OxiDriveUsageScan implements DriveUsageScan {
  readonly #db: Kysely<OxiCloudDatabase>;
  readonly #checks: readonly ConsistencyCheck[];

  constructor(db: Kysely<OxiCloudDatabase>, options: OxiDriveUsageScanOptions = {}) {
    this.#db = db;
    const { checks = {} } = options;
    const logger = options.logger ? { logger: options.logger } : {};
    this.#checks = [
      {
        ...createDrivesConsistencyCheck({ ...checks.drives_consistency, ...logger, scan: this }),
        reads: ['auth.users', 'storage.drives', 'storage.files', 'storage.folders', 'storage.role_grants'],
      },
    ];
  }

  subsystem(): string {
    return 'used_bytes';
  }

  /** `drives_consistency`: drive `used_bytes` and the user envelope against OxiCloud's sums, and each drive's shape. */
  consistencyChecks(): readonly ConsistencyCheck[] {
    return this.#checks;
  }

  async scanDriveUsage(afterId: string | null, limit: number): Promise<ScanPage<DriveUsageDrift>> {
    const page = await this.#drivePage(
      sql`SELECT id, default_for_user, used_bytes FROM storage.drives
          ${afterId === null ? sql`` : sql`WHERE id > ${afterId}::uuid`}
          ORDER BY id LIMIT ${limit}`,
    );
    return {
      scanned: bigintToNumber(page.scanned),
      lastKey: page.last_id,
      anomalies: page.anomalies.map(toDrive),
    };
  }

  async reverifyDriveUsage(driveIds: readonly string[]): Promise<DriveUsageDrift[]> {
    if (driveIds.length === 0) return [];
    const page = await this.#drivePage(
      sql`SELECT id, default_for_user, used_bytes FROM storage.drives WHERE id = ANY(${[...driveIds]}::uuid[])`,
    );
    return page.anomalies.map(toDrive);
  }

  async scanUserUsage(afterId: string | null, limit: number): Promise<ScanPage<UserUsageDrift>> {
    const page = await this.#userPage(
      sql`SELECT id, storage_used_bytes, is_external FROM auth.users
          ${afterId === null ? sql`` : sql`WHERE id > ${afterId}::uuid`}
          ORDER BY id LIMIT ${limit}`,
    );
    return {
      scanned: bigintToNumber(page.scanned),
      lastKey: page.last_id,
      anomalies: page.anomalies.map(toUser),
    };
  }

  async reverifyUserUsage(userIds: readonly string[]): Promise<UserUsageDrift[]> {
    if (userIds.length === 0) return [];
    const page = await this.#userPage(
      sql`SELECT id, storage_used_bytes, is_external FROM auth.users WHERE id = ANY(${[...userIds]}::uuid[])`,
    );
    return page.anomalies.map(toUser);
  }

  async estimateRows(): Promise<number | null> {
    // The drives are walked twice: their usage (phase 1) and their shape (phase 3).
    const [both, drives] = await Promise.all([
      estimateOxiRows(this.#db, ['storage.drives', 'auth.users']),
      estimateOxiRows(this.#db, ['storage.drives']),
    ]);
    return both === null || drives === null ? null : both + drives;
  }

  async scanDriveShape(afterId: string | null, limit: number): Promise<ScanPage<DriveShapeAnomaly>> {
    const page = await this.#shapePage(
      sql`SELECT id, kind, default_for_user, root_folder_id FROM storage.drives
          ${afterId === null ? sql`` : sql`WHERE id > ${afterId}::uuid`}
          ORDER BY id LIMIT ${limit}`,
    );
    return {
      scanned: bigintToNumber(page.scanned),
      lastKey: page.last_id,
      anomalies: page.anomalies.map(toShape),
    };
  }

  async reverifyDriveShape(driveIds: readonly string[]): Promise<DriveShapeAnomaly[]> {
    if (driveIds.length === 0) return [];
    const page = await this.#shapePage(
      sql`SELECT id, kind, default_for_user, root_folder_id FROM storage.drives
           WHERE id = ANY(${[...driveIds]}::uuid[])`,
    );
    return page.anomalies.map(toShape);
  }

  /** Drives of `batch` whose root or owner grants break §12 items 5 and 8. */
  async #shapePage(batch: RawBuilder<unknown>): Promise<PageRow<ShapeJson>> {
    const { rows } = await sql<PageRow<ShapeJson>>`
      WITH batch AS MATERIALIZED (${batch}),
      owners AS (
        SELECT g.resource_id AS drive_id, count(*)::int AS n,
               (count(*) FILTER (WHERE g.subject_type = 'user'))::int AS users,
               min(g.subject_id::text) FILTER (WHERE g.subject_type = 'user') AS user_owner
          FROM storage.role_grants g
         WHERE g.resource_type = 'drive' AND g.role = 'owner'
           AND g.resource_id IN (SELECT id FROM batch)
           AND (g.expires_at IS NULL OR g.expires_at > now())
         GROUP BY g.resource_id
      ),
      -- No unique index on root_folder_id: the page's roots that more than one drive names, in one pass.
      shared_roots AS (
        SELECT d.root_folder_id FROM storage.drives d
         WHERE d.root_folder_id IN (SELECT root_folder_id FROM batch)
         GROUP BY d.root_folder_id HAVING count(*) > 1
      ),
      checked AS (
        SELECT b.id, b.kind, b.default_for_user, b.root_folder_id,
               COALESCE(o.n, 0) AS owner_grants, COALESCE(o.users, 0) AS user_owner_grants,
               array_remove(ARRAY[
                 CASE WHEN b.root_folder_id IS NULL THEN 'root_unset' END,
                 CASE WHEN b.root_folder_id IS NOT NULL AND r.id IS NULL THEN 'root_missing' END,
                 CASE WHEN r.parent_id IS NOT NULL THEN 'root_has_parent' END,
                 CASE WHEN r.id IS NOT NULL AND r.drive_id IS DISTINCT FROM b.id THEN 'root_in_other_drive' END,
                 CASE WHEN sr.root_folder_id IS NOT NULL THEN 'root_shared' END
               ], NULL) AS root_problems,
               array_remove(ARRAY[
                 CASE WHEN b.kind = 'personal' AND COALESCE(o.n, 0) > 0 AND COALESCE(o.users, 0) <> 1
                      THEN 'user_owner_count' END,
                 CASE WHEN b.kind = 'personal' AND b.default_for_user IS NOT NULL AND COALESCE(o.users, 0) = 1
                       AND o.user_owner <> b.default_for_user::text THEN 'default_not_owner' END
               ], NULL) AS owner_problems
          FROM batch b
          LEFT JOIN owners o ON o.drive_id = b.id
          LEFT JOIN storage.folders r ON r.id = b.root_folder_id
          LEFT JOIN shared_roots sr ON sr.root_folder_id = b.root_folder_id
      )
      SELECT (SELECT count(*) FROM batch) AS scanned,
             (SELECT id FROM batch ORDER BY id DESC LIMIT 1) AS last_id,
             COALESCE((
               SELECT json_agg(json_build_object(
                        'id', c.id, 'kind', c.kind, 'default_for_user', c.default_for_user,
                        'root_folder_id', c.root_folder_id, 'owner_grants', c.owner_grants,
                        'user_owner_grants', c.user_owner_grants, 'root_problems', c.root_problems,
                        'owner_problems', c.owner_problems) ORDER BY c.id)
                 FROM checked c
                WHERE c.owner_grants = 0 OR cardinality(c.root_problems) > 0 OR cardinality(c.owner_problems) > 0
             ), '[]'::json) AS anomalies`.execute(this.#db);
    return rows[0] as PageRow<ShapeJson>;
  }

  /** Drives of `batch` whose `used_bytes` differs from `Σ size` of their live files. */
  async #drivePage(batch: RawBuilder<unknown>): Promise<PageRow<DriveJson>> {
    const { rows } = await sql<PageRow<DriveJson>>`
      WITH batch AS MATERIALIZED (${batch}),
      sums AS (
        SELECT f.drive_id, SUM(f.size) AS actual
          FROM storage.files f
         WHERE f.drive_id IN (SELECT id FROM batch) AND NOT f.is_trashed
         GROUP BY f.drive_id
      )
      SELECT (SELECT count(*) FROM batch) AS scanned,
             (SELECT id FROM batch ORDER BY id DESC LIMIT 1) AS last_id,
             COALESCE((
               SELECT json_agg(json_build_object(
                        'id', b.id, 'owner_id', ${DRIVE_OWNER},
                        'recorded', b.used_bytes::text, 'actual', COALESCE(s.actual, 0)::text) ORDER BY b.id)
                 FROM batch b LEFT JOIN sums s ON s.drive_id = b.id
                WHERE b.used_bytes IS DISTINCT FROM COALESCE(s.actual, 0)
             ), '[]'::json) AS anomalies`.execute(this.#db);
    return rows[0] as PageRow<DriveJson>;
  }

  /** Internal users of `batch` whose envelope differs from `Σ used_bytes` of the personal drives they own. */
  async #userPage(batch: RawBuilder<unknown>): Promise<PageRow<UserJson>> {
    const { rows } = await sql<PageRow<UserJson>>`
      WITH batch AS MATERIALIZED (${batch}),
      sums AS (
        SELECT g.subject_id AS user_id, SUM(d.used_bytes) AS actual, count(*)::int AS drives
          FROM storage.role_grants g
          JOIN storage.drives d ON d.id = g.resource_id AND d.kind = 'personal'
         WHERE g.subject_type = 'user' AND g.resource_type = 'drive' AND g.role = 'owner'
           AND g.subject_id IN (SELECT id FROM batch)
         GROUP BY g.subject_id
      )
      SELECT (SELECT count(*) FROM batch) AS scanned,
             (SELECT id FROM batch ORDER BY id DESC LIMIT 1) AS last_id,
             COALESCE((
               SELECT json_agg(json_build_object(
                        'id', b.id, 'recorded', b.storage_used_bytes::text,
                        'actual', COALESCE(s.actual, 0)::text, 'drives', COALESCE(s.drives, 0)) ORDER BY b.id)
                 FROM batch b LEFT JOIN sums s ON s.user_id = b.id
                WHERE NOT b.is_external
                  AND b.storage_used_bytes IS DISTINCT FROM COALESCE(s.actual, 0)
             ), '[]'::json) AS anomalies`.execute(this.#db);
    return rows[0] as PageRow<UserJson>;
  }
}
