import type { ConsistencyCheck } from '@oxicloud/consistency';
import type { Logger } from '@oxicloud/scheduler';
import {
  createGrantsConsistencyCheck,
  type GrantAnomaly,
  type GrantScan,
  type GrantScanOptions,
  type GrantsConsistencyCheckOptions,
  type ScanPage,
} from '@oxicloud/tenants';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { bigintToNumber, type StorageDatabase } from './database.js';
import { estimateRowsOf } from './row-estimate.js';

interface GrantJson {
  id: string;
  subject_id: string;
  resource_type: 'drive' | 'folder' | 'file';
  resource_id: string;
  role: string;
  created_at: string;
  expires_at: string | null;
  resource_exists: boolean;
  lingering: boolean;
}

const toAnomaly = (r: GrantJson): GrantAnomaly => ({
  grantId: r.id,
  subjectId: r.subject_id,
  resourceType: r.resource_type,
  resourceId: r.resource_id,
  role: r.role,
  createdAt: new Date(r.created_at),
  expiresAt: r.expires_at === null ? null : new Date(r.expires_at),
  resourceExists: r.resource_exists,
  lingering: r.lingering,
});

/** Options of {@link PgGrantScan}. */
export interface PgGrantScanOptions {
  /** The checks' batch loops log their retries, lost checkpoints and failures here. */
  readonly logger?: Logger;
  /** Each check's own options (grace, thresholds), by check name: given to that check only. */
  readonly checks?: {
    /**
     * `cleanupGraceMs` (`grant_cleanup`'s grace past `expires_at`, default 24 h),
     * `lingerMarginMs` (how long past it an expired grant may linger, default
     * 7 days), `graceWindowMs` (on a grant's `created_at` for `dangling_grant`, default 1 h).
     */
    readonly grants_consistency?: Omit<GrantsConsistencyCheckOptions, 'scan' | 'logger'>;
  };
}

/**
 * {@link GrantScan} on `storage.role_grants`, and the stateful adapter of the
 * grants (`subsystem() === 'grants'`): it contributes `grants_consistency`.
 * Each page is one statement: a keyset page of grants by id, each resource
 * probed by primary key in the table its `resource_type` names, and back only
 * the anomalous grants plus the count and last id.
 */
export class PgGrantScan implements GrantScan {
  readonly #db: Kysely<StorageDatabase>;
  readonly #checks: readonly ConsistencyCheck[];

  constructor(db: Kysely<StorageDatabase>, options: PgGrantScanOptions = {}) {
    this.#db = db;
    const { checks = {} } = options;
    const logger = options.logger ? { logger: options.logger } : {};
    // The adapter's checks, each with its own options.
    this.#checks = [createGrantsConsistencyCheck({ ...checks.grants_consistency, ...logger, scan: this })];
  }

  subsystem(): string {
    return 'grants';
  }

  /** `grants_consistency`: dangling grants and expired grants `grant_cleanup` left behind. */
  consistencyChecks(): readonly ConsistencyCheck[] {
    return this.#checks;
  }

  async scanGrants(
    afterId: string | null,
    limit: number,
    options: GrantScanOptions,
  ): Promise<ScanPage<GrantAnomaly>> {
    const row = await this.#compare(
      sql`SELECT * FROM storage.role_grants
          ${afterId === null ? sql`` : sql`WHERE id > ${afterId}::uuid`}
          ORDER BY id LIMIT ${limit}`,
      options,
    );
    return {
      scanned: bigintToNumber(row.scanned),
      lastKey: row.last_id,
      anomalies: row.anomalies.map(toAnomaly),
    };
  }

  async reverifyGrants(grantIds: readonly string[], options: GrantScanOptions): Promise<GrantAnomaly[]> {
    if (grantIds.length === 0) return [];
    const row = await this.#compare(
      sql`SELECT * FROM storage.role_grants WHERE id = ANY(${[...grantIds]}::uuid[])`,
      options,
    );
    return row.anomalies.map(toAnomaly);
  }

  estimateRows(): Promise<number | null> {
    return estimateRowsOf(this.#db, ['storage.role_grants']);
  }

  async #compare(
    batch: RawBuilder<unknown>,
    options: GrantScanOptions,
  ): Promise<{ scanned: string; last_id: string | null; anomalies: GrantJson[] }> {
    const { rows } = await sql<{ scanned: string; last_id: string | null; anomalies: GrantJson[] }>`
      WITH batch AS MATERIALIZED (${batch}),
      checked AS (
        SELECT b.id, b.subject_id, b.resource_type, b.resource_id, b.role, b.created_at, b.expires_at,
               CASE b.resource_type
                 WHEN 'drive' THEN EXISTS (SELECT 1 FROM storage.drives d WHERE d.id = b.resource_id)
                 WHEN 'folder' THEN EXISTS (SELECT 1 FROM storage.folders d WHERE d.id = b.resource_id)
                 WHEN 'file' THEN EXISTS (SELECT 1 FROM storage.files d WHERE d.id = b.resource_id)
                 ELSE false
               END AS resource_exists,
               COALESCE(b.expires_at <= ${options.lingerBefore}, false) AS lingering,
               COALESCE(b.expires_at <= ${options.now}, false) AS expired
          FROM batch b
      )
      SELECT (SELECT count(*) FROM batch) AS scanned,
             (SELECT id FROM batch ORDER BY id DESC LIMIT 1) AS last_id,
             COALESCE((
               SELECT json_agg(json_build_object(
                        'id', c.id, 'subject_id', c.subject_id, 'resource_type', c.resource_type,
                        'resource_id', c.resource_id, 'role', c.role, 'created_at', c.created_at,
                        'expires_at', c.expires_at, 'resource_exists', c.resource_exists,
                        'lingering', c.lingering) ORDER BY c.id)
                 FROM checked c
                WHERE c.lingering
                   OR (NOT c.resource_exists AND NOT c.expired AND c.created_at <= ${options.createdBefore})
             ), '[]'::json) AS anomalies`.execute(this.#db);
    return rows[0] ?? { scanned: '0', last_id: null, anomalies: [] };
  }
}
