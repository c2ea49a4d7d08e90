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
import { bigintToNumber } from '../postgres/database.js';
import type { OxiCloudDatabase, OxiRoleGrantsTable } from './database.js';
import { estimateOxiRows } from './oxi-tree-support.js';

/** The id of OxiCloud's seeded virtual group `Internal` (a row in `auth.subject_groups`). */
export const OXICLOUD_INTERNAL_GROUP_ID = '00000000-0000-0000-0000-000000000001';

interface GrantJson {
  id: string;
  subject_type: OxiRoleGrantsTable['subject_type'];
  subject_id: string;
  resource_type: OxiRoleGrantsTable['resource_type'];
  resource_id: string;
  role: string;
  granted_at: string;
  expires_at: string | null;
  subject_exists: boolean;
  resource_exists: boolean;
  lingering: boolean;
}

/**
 * A {@link GrantAnomaly} with what OxiCloud's grants also carry: the
 * subject's type and whether it exists, and whether the resource itself
 * exists. `resourceType` may be any of OxiCloud's six resource types (the
 * port's union names three; see {@link OxiGrantScan}).
 */
export interface OxiGrantAnomaly extends GrantAnomaly {
  readonly subjectType: OxiRoleGrantsTable['subject_type'];
  /** The user, group or share (token) `subject_id` names exists. */
  readonly subjectExists: boolean;
  /** The resource alone exists (the port's `resourceExists` is "both ends exist"). */
  readonly resourceFound: boolean;
}

const toAnomaly = (r: GrantJson): OxiGrantAnomaly => ({
  grantId: r.id,
  subjectType: r.subject_type,
  subjectId: r.subject_id,
  // The port's union is 'drive' | 'folder' | 'file'; OxiCloud also has calendar,
  // address_book and playlist grants, which the finding's detail names as they are.
  resourceType: r.resource_type,
  resourceId: r.resource_id,
  role: r.role,
  createdAt: new Date(r.granted_at),
  expiresAt: r.expires_at === null ? null : new Date(r.expires_at),
  resourceExists: r.subject_exists && r.resource_exists,
  subjectExists: r.subject_exists,
  resourceFound: r.resource_exists,
  lingering: r.lingering,
});

/** Options of {@link OxiGrantScan}. */
export interface OxiGrantScanOptions {
  /** The checks' batch loops log their retries, lost checkpoints and failures here. */
  readonly logger?: Logger;
  /** Each check's own options (grace, thresholds), by check name: given to that check only. */
  readonly checks?: {
    /**
     * `cleanupGraceMs` (`grant_cleanup`'s grace past `expires_at`),
     * `lingerMarginMs`, `graceWindowMs` (on a grant's `granted_at` for
     * `dangling_grant`, default 1 h).
     */
    readonly grants_consistency?: Omit<GrantsConsistencyCheckOptions, 'scan' | 'logger'>;
  };
}

/**
 * {@link GrantScan} on OxiCloud's `storage.role_grants` (no foreign keys at
 * all, fact sheet §8, §12 item 20), and the stateful adapter of the grants
 * (`subsystem() === 'grants'`): it contributes `grants_consistency`.
 *
 * - Both ends are probed by primary key: the **subject** by `subject_type`
 *   (`user` → `auth.users`, `group` → `auth.subject_groups`, where the
 *   virtual `Internal` group is a row, `token` → `storage.shares`) and the
 *   **resource** by `resource_type` (`folder`, `file`, `drive`, `calendar` →
 *   `caldav.calendars`, `address_book` → `carddav.address_books`,
 *   `playlist` → `audio.playlists`). Trashed folders and files exist (their
 *   grants persist by design).
 * - `dangling_grant`: an unexpired grant, `granted_at` past the grace, whose
 *   subject or resource is gone. The port has one flag, so its
 *   `resourceExists` is "both ends exist"; {@link OxiGrantAnomaly} keeps
 *   `subjectExists` and `resourceFound` apart.
 * - Expired grants (`expires_at <= now`) are the purge's, never dangling;
 *   `expired_grant_lingering` only once past cleanup grace + margin.
 * - `createdAt` is `granted_at` (OxiCloud has no `created_at`).
 *
 * @example
 * ```ts
 * const db = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool }) });
 * consistencyRegistry.register(new OxiGrantScan(db, { checks: { grants_consistency: { cleanupGraceMs } } }));
 * ```
 */
export class OxiGrantScan implements GrantScan {
  readonly #db: Kysely<OxiCloudDatabase>;
  readonly #checks: readonly ConsistencyCheck[];

  constructor(db: Kysely<OxiCloudDatabase>, options: OxiGrantScanOptions = {}) {
    this.#db = db;
    const { checks = {} } = options;
    const logger = options.logger ? { logger: options.logger } : {};
    this.#checks = [
      {
        ...createGrantsConsistencyCheck({ ...checks.grants_consistency, ...logger, scan: this }),
        reads: [
          'audio.playlists',
          'auth.subject_groups',
          'auth.users',
          'caldav.calendars',
          'carddav.address_books',
          'storage.drives',
          'storage.files',
          'storage.folders',
          'storage.role_grants',
          'storage.shares',
        ],
      },
    ];
  }

  subsystem(): string {
    return 'grants';
  }

  /** `grants_consistency`: grants whose subject or resource is gone, and expired grants left behind. */
  consistencyChecks(): readonly ConsistencyCheck[] {
    return this.#checks;
  }

  async scanGrants(
    afterId: string | null,
    limit: number,
    options: GrantScanOptions,
  ): Promise<ScanPage<OxiGrantAnomaly>> {
    const row = await this.#compare(
      sql`SELECT id, subject_type, subject_id, resource_type, resource_id, role, granted_at, expires_at
            FROM storage.role_grants
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

  async reverifyGrants(grantIds: readonly string[], options: GrantScanOptions): Promise<OxiGrantAnomaly[]> {
    if (grantIds.length === 0) return [];
    const row = await this.#compare(
      sql`SELECT id, subject_type, subject_id, resource_type, resource_id, role, granted_at, expires_at
            FROM storage.role_grants WHERE id = ANY(${[...grantIds]}::uuid[])`,
      options,
    );
    return row.anomalies.map(toAnomaly);
  }

  estimateRows(): Promise<number | null> {
    return estimateOxiRows(this.#db, ['storage.role_grants']);
  }

  async #compare(
    batch: RawBuilder<unknown>,
    options: GrantScanOptions,
  ): Promise<{ scanned: string; last_id: string | null; anomalies: GrantJson[] }> {
    const { rows } = await sql<{ scanned: string; last_id: string | null; anomalies: GrantJson[] }>`
      WITH batch AS MATERIALIZED (${batch}),
      checked AS (
        SELECT b.*,
               CASE b.subject_type
                 WHEN 'user' THEN EXISTS (SELECT 1 FROM auth.users x WHERE x.id = b.subject_id)
                 WHEN 'group' THEN EXISTS (SELECT 1 FROM auth.subject_groups x WHERE x.id = b.subject_id)
                 WHEN 'token' THEN EXISTS (SELECT 1 FROM storage.shares x WHERE x.id = b.subject_id)
                 ELSE false
               END AS subject_exists,
               CASE b.resource_type
                 WHEN 'folder' THEN EXISTS (SELECT 1 FROM storage.folders x WHERE x.id = b.resource_id)
                 WHEN 'file' THEN EXISTS (SELECT 1 FROM storage.files x WHERE x.id = b.resource_id)
                 WHEN 'drive' THEN EXISTS (SELECT 1 FROM storage.drives x WHERE x.id = b.resource_id)
                 WHEN 'calendar' THEN EXISTS (SELECT 1 FROM caldav.calendars x WHERE x.id = b.resource_id)
                 WHEN 'address_book' THEN
                   EXISTS (SELECT 1 FROM carddav.address_books x WHERE x.id = b.resource_id)
                 WHEN 'playlist' THEN EXISTS (SELECT 1 FROM audio.playlists x WHERE x.id = b.resource_id)
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
                        'id', c.id, 'subject_type', c.subject_type, 'subject_id', c.subject_id,
                        'resource_type', c.resource_type, 'resource_id', c.resource_id, 'role', c.role,
                        'granted_at', c.granted_at, 'expires_at', c.expires_at,
                        'subject_exists', c.subject_exists, 'resource_exists', c.resource_exists,
                        'lingering', c.lingering) ORDER BY c.id)
                 FROM checked c
                WHERE c.lingering
                   OR (NOT (c.subject_exists AND c.resource_exists) AND NOT c.expired
                       AND c.granted_at <= ${options.createdBefore})
             ), '[]'::json) AS anomalies`.execute(this.#db);
    return rows[0] ?? { scanned: '0', last_id: null, anomalies: [] };
  }
}
