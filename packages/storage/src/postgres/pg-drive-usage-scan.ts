import type { ConsistencyCheck } from '@oxicloud/consistency';
import type { Logger } from '@oxicloud/scheduler';
import {
  createDrivesConsistencyCheck,
  type DrivesConsistencyCheckOptions,
  type DriveUsageDrift,
  type DriveUsageScan,
  type ScanPage,
  type UserUsageDrift,
} from '@oxicloud/tenants';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { bigintToNumber, type StorageDatabase } from './database.js';
import { estimateRowsOf } from './row-estimate.js';

interface DriveJson {
  id: string;
  owner_id: string;
  recorded: string;
  actual: string;
}
interface UserJson {
  id: string;
  recorded: string;
  actual: string;
  drives: number;
}
interface PageRow<T> {
  scanned: string;
  last_id: string | null;
  anomalies: T[];
}

const toDrive = (r: DriveJson): DriveUsageDrift => ({
  driveId: r.id,
  ownerId: r.owner_id,
  recordedBytes: bigintToNumber(r.recorded),
  actualBytes: bigintToNumber(r.actual),
});
const toUser = (r: UserJson): UserUsageDrift => ({
  userId: r.id,
  recordedBytes: bigintToNumber(r.recorded),
  actualBytes: bigintToNumber(r.actual),
  driveCount: r.drives,
});

/** Options of {@link PgDriveUsageScan}. */
export interface PgDriveUsageScanOptions {
  /** The checks' batch loops log their retries, lost checkpoints and failures here. */
  readonly logger?: Logger;
  /** Each check's own options, by check name: given to that check only. */
  readonly checks?: {
    readonly drives_consistency?: Omit<DrivesConsistencyCheckOptions, 'scan' | 'logger'>;
  };
}

/**
 * {@link DriveUsageScan} on `storage.drives` / `auth.users`, and the
 * stateful adapter of the usage counters (`subsystem() === 'used_bytes'`):
 * it contributes `drives_consistency`. Each page is one statement: a keyset
 * page of the walked table, the matching sums grouped in the database, and
 * back only the drifting rows plus the page's count and last id.
 *
 * @example
 * ```ts
 * const db = new Kysely<StorageDatabase>({ dialect: new PostgresDialect({ pool }) });
 * consistencyRegistry.register(new PgDriveUsageScan(db));
 * ```
 */
export class PgDriveUsageScan implements DriveUsageScan {
  readonly #db: Kysely<StorageDatabase>;
  readonly #checks: readonly ConsistencyCheck[];

  constructor(db: Kysely<StorageDatabase>, options: PgDriveUsageScanOptions = {}) {
    this.#db = db;
    const { checks = {} } = options;
    const logger = options.logger ? { logger: options.logger } : {};
    // The adapter's checks, each with its own options.
    this.#checks = [createDrivesConsistencyCheck({ ...checks.drives_consistency, ...logger, scan: this })];
  }

  subsystem(): string {
    return 'used_bytes';
  }

  /** `drives_consistency`: drive `used_bytes` and the user envelope against their sums. */
  consistencyChecks(): readonly ConsistencyCheck[] {
    return this.#checks;
  }

  async scanDriveUsage(afterId: string | null, limit: number): Promise<ScanPage<DriveUsageDrift>> {
    const page = await this.#drivePage(
      sql`SELECT id, owner_id, used_bytes FROM storage.drives
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
      sql`SELECT id, owner_id, used_bytes FROM storage.drives WHERE id = ANY(${[...driveIds]}::uuid[])`,
    );
    return page.anomalies.map(toDrive);
  }

  async scanUserUsage(afterId: string | null, limit: number): Promise<ScanPage<UserUsageDrift>> {
    const page = await this.#userPage(
      sql`SELECT id, storage_used_bytes FROM auth.users
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
      sql`SELECT id, storage_used_bytes FROM auth.users WHERE id = ANY(${[...userIds]}::uuid[])`,
    );
    return page.anomalies.map(toUser);
  }

  estimateRows(): Promise<number | null> {
    return estimateRowsOf(this.#db, ['storage.drives', 'auth.users']);
  }

  /** Drives of `batch` whose `used_bytes` differs from `SUM(size)` of their files, trashed included. */
  async #drivePage(batch: RawBuilder<unknown>): Promise<PageRow<DriveJson>> {
    const { rows } = await sql<PageRow<DriveJson>>`
      WITH batch AS MATERIALIZED (${batch}),
      sums AS (
        SELECT f.drive_id, SUM(f.size) AS actual
          FROM storage.files f
         WHERE f.drive_id IN (SELECT id FROM batch)
         GROUP BY f.drive_id
      )
      SELECT (SELECT count(*) FROM batch) AS scanned,
             (SELECT id FROM batch ORDER BY id DESC LIMIT 1) AS last_id,
             COALESCE((
               SELECT json_agg(json_build_object(
                        'id', b.id, 'owner_id', b.owner_id,
                        'recorded', b.used_bytes::text, 'actual', COALESCE(s.actual, 0)::text) ORDER BY b.id)
                 FROM batch b LEFT JOIN sums s ON s.drive_id = b.id
                WHERE b.used_bytes <> COALESCE(s.actual, 0)
             ), '[]'::json) AS anomalies`.execute(this.#db);
    return rows[0] as PageRow<DriveJson>;
  }

  /** Users of `batch` whose `storage_used_bytes` differs from `SUM(used_bytes)` of their drives. */
  async #userPage(batch: RawBuilder<unknown>): Promise<PageRow<UserJson>> {
    const { rows } = await sql<PageRow<UserJson>>`
      WITH batch AS MATERIALIZED (${batch}),
      sums AS (
        SELECT d.owner_id, SUM(d.used_bytes) AS actual, count(*)::int AS drives
          FROM storage.drives d
         WHERE d.owner_id IN (SELECT id FROM batch)
         GROUP BY d.owner_id
      )
      SELECT (SELECT count(*) FROM batch) AS scanned,
             (SELECT id FROM batch ORDER BY id DESC LIMIT 1) AS last_id,
             COALESCE((
               SELECT json_agg(json_build_object(
                        'id', b.id, 'recorded', b.storage_used_bytes::text,
                        'actual', COALESCE(s.actual, 0)::text, 'drives', COALESCE(s.drives, 0)) ORDER BY b.id)
                 FROM batch b LEFT JOIN sums s ON s.owner_id = b.id
                WHERE b.storage_used_bytes <> COALESCE(s.actual, 0)
             ), '[]'::json) AS anomalies`.execute(this.#db);
    return rows[0] as PageRow<UserJson>;
  }
}
