import type { ConsistencyCheck } from '@oxicloud/consistency';
import type { Logger } from '@oxicloud/scheduler';
import {
  createReferencesConsistencyCheck,
  type DanglingReference,
  type ReferenceScan,
  type ReferenceScanOptions,
  type ReferenceSource,
  type ReferencesConsistencyCheckOptions,
  type ScanPage,
} from '@oxicloud/tenants';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { bigintToNumber } from '../postgres/database.js';
import { estimateRowsOf } from './content-sql.js';
import type { OxiCloudDatabase } from './database.js';

interface RowJson {
  id: string;
  user_id: string | null;
  item_type: string | null;
  item_id: string | null;
  reason: DanglingReference['reason'];
  face_hash: string | null;
  file_hash: string | null;
}

/**
 * Per source: the page of its rows (`id` as text, `user_id`, `item_type`,
 * `item_id`, `written_at`), given the key filter; and the key's SQL type.
 * A magic link without a resource is walked but never dangles. A face also
 * gives its `file_id` and `blob_hash` (its file is always there: a foreign key).
 */
const SOURCES: Readonly<Record<ReferenceSource, { table: string; select: string; keyType: string }>> = {
  favorites: {
    table: 'auth.user_favorites',
    select: 'id, id::text AS key, user_id, item_type, item_id, created_at AS written_at',
    keyType: 'bigint',
  },
  recent_items: {
    table: 'auth.user_recent_files',
    select: 'id, id::text AS key, user_id, item_type, item_id, accessed_at AS written_at',
    keyType: 'bigint',
  },
  magic_links: {
    table: 'auth.magic_link_tokens',
    select:
      'id, id::text AS key, user_id, resource_type AS item_type, resource_id::text AS item_id, issued_at AS written_at',
    keyType: 'uuid',
  },
  shares: {
    // created_at is a bigint of no documented unit: the grace does not apply (pass 2 only).
    table: 'storage.shares',
    select:
      "id, id::text AS key, created_by AS user_id, item_type, item_id, '-infinity'::timestamptz AS written_at",
    keyType: 'uuid',
  },
  nextcloud_ids: {
    // No timestamp and never deleted: the grace does not apply (pass 2 only).
    table: 'storage.nextcloud_object_ids',
    select:
      "id, id::text AS key, NULL::uuid AS user_id, object_type AS item_type, object_id::text AS item_id, '-infinity'::timestamptz AS written_at",
    keyType: 'bigint',
  },
  faces: {
    // written_at: the later of this and the file's updated_at, in the comparison (a content swap sets it).
    table: 'faces.faces',
    select:
      "id, id::text AS key, user_id, 'file' AS item_type, file_id::text AS item_id, created_at AS written_at, file_id, blob_hash",
    keyType: 'uuid',
  },
};

const UUID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/**
 * The `WHEN` arms of why a row naming an item by type and text id dangles
 * (`unknown_type`, `not_a_uuid`, `missing`; no arm holds, and a row naming
 * nothing, when its item exists): the scan's rule, and the repair store's
 * re-check under the row's lock.
 */
export const ITEM_DANGLING_ARMS = (
  type: RawBuilder<unknown>,
  id: RawBuilder<unknown>,
): RawBuilder<unknown> => sql`
  WHEN ${type} IS NULL AND ${id} IS NULL THEN NULL
  WHEN ${type} IS DISTINCT FROM 'file' AND ${type} IS DISTINCT FROM 'folder' THEN 'unknown_type'
  WHEN ${id} IS NULL OR ${id} !~ ${UUID} THEN 'not_a_uuid'
  WHEN ${type} = 'file' AND NOT EXISTS (SELECT 1 FROM storage.files f WHERE f.id = ${id}::uuid) THEN 'missing'
  WHEN ${type} = 'folder' AND NOT EXISTS (SELECT 1 FROM storage.folders f WHERE f.id = ${id}::uuid) THEN 'missing'`;

/** Options of {@link OxiReferenceScan}. */
export interface OxiReferenceScanOptions {
  /** The checks' batch loops log their retries, lost checkpoints and failures here. */
  readonly logger?: Logger;
  /** Each check's own options (grace), by check name: given to that check only. */
  readonly checks?: {
    /** `graceWindowMs` on the row's timestamp (default 1 h). */
    readonly references_consistency?: Omit<ReferencesConsistencyCheckOptions, 'scan' | 'logger'>;
  };
}

/**
 * {@link ReferenceScan} on OxiCloud's domain, and the stateful adapter of
 * the rows that name an item by id with no foreign key (`subsystem() ===
 * 'item_references'`): it contributes `references_consistency` (fact sheet
 * §10, §12 item 25).
 *
 * A row dangles when its type is neither `file` nor `folder`
 * (`unknown_type`; `user_favorites.item_type` has no CHECK), its id is no
 * uuid (`not_a_uuid`; a 2026-06 migration removed those, a later write may
 * not), or no `storage.files` / `storage.folders` row has that id
 * (`missing`, trashed items exist). A share whose item exists must have
 * exactly one token grant, a viewer on that item (§8, §12 item 21): else
 * `no_token_grant` or `token_grant_mismatch`, reported as
 * `share_grant_mismatch`. A face (`faces.faces`) whose `blob_hash` is set
 * and is not its file's current `files.blob_hash` is `stale_face_hash`:
 * `stale_hash` when a manifest or a blob still holds that content,
 * `unknown_hash` when none does; its age is the later of its `created_at`
 * and its file's `updated_at`. Each page is one statement: a keyset
 * page of the source by its primary key, the lookups by primary key, and
 * back only the dangling rows older than the grace.
 */
export class OxiReferenceScan implements ReferenceScan {
  readonly #db: Kysely<OxiCloudDatabase>;
  readonly #checks: readonly ConsistencyCheck[];

  constructor(db: Kysely<OxiCloudDatabase>, options: OxiReferenceScanOptions = {}) {
    this.#db = db;
    const { checks = {} } = options;
    const logger = options.logger ? { logger: options.logger } : {};
    this.#checks = [
      {
        ...createReferencesConsistencyCheck({ ...checks.references_consistency, ...logger, scan: this }),
        reads: [
          ...Object.values(SOURCES).map((s) => s.table),
          'storage.files',
          'storage.folders',
          'storage.role_grants',
          'storage.chunk_manifests',
          'storage.blobs',
        ],
      },
    ];
  }

  subsystem(): string {
    return 'item_references';
  }

  /** `references_consistency`: favorites, recent items, magic links, shares and NextCloud ids against the items they name; faces against their file's hash. */
  consistencyChecks(): readonly ConsistencyCheck[] {
    return this.#checks;
  }

  async scanReferences(
    source: ReferenceSource,
    afterId: string | null,
    limit: number,
    options: ReferenceScanOptions,
  ): Promise<ScanPage<DanglingReference>> {
    const s = SOURCES[source];
    const row = await this.#compare(
      source,
      sql`SELECT ${sql.raw(s.select)} FROM ${sql.raw(s.table)}
          ${afterId === null ? sql`` : sql`WHERE id > ${afterId}::${sql.raw(s.keyType)}`}
          ORDER BY id LIMIT ${limit}`,
      options,
    );
    return { scanned: bigintToNumber(row.scanned), lastKey: row.last_key, anomalies: row.anomalies };
  }

  async reverifyReferences(
    source: ReferenceSource,
    ids: readonly string[],
    options: ReferenceScanOptions,
  ): Promise<DanglingReference[]> {
    if (ids.length === 0) return [];
    const s = SOURCES[source];
    const row = await this.#compare(
      source,
      sql`SELECT ${sql.raw(s.select)} FROM ${sql.raw(s.table)}
           WHERE id = ANY(${[...ids]}::${sql.raw(s.keyType)}[])`,
      options,
    );
    return row.anomalies;
  }

  estimateRows(): Promise<number | null> {
    return estimateRowsOf(
      this.#db,
      Object.values(SOURCES).map((s) => s.table),
    );
  }

  async #compare(
    source: ReferenceSource,
    batch: RawBuilder<unknown>,
    options: ReferenceScanOptions,
  ): Promise<{ scanned: string; last_key: string | null; anomalies: DanglingReference[] }> {
    const faces = source === 'faces';
    const { rows } = await sql<{ scanned: string; last_key: string | null; anomalies: RowJson[] | null }>`
      WITH batch AS MATERIALIZED (${batch}),
      checked AS (
        SELECT b.key, b.user_id, b.item_type, b.item_id,
               ${faces ? sql`GREATEST(b.written_at, ff.updated_at)` : sql`b.written_at`} AS written_at,
               ${faces ? sql`b.blob_hash::text` : sql`NULL::text`} AS face_hash,
               ${faces ? sql`ff.blob_hash::text` : sql`NULL::text`} AS file_hash,
               CASE
                 ${ITEM_DANGLING_ARMS(sql`b.item_type`, sql`b.item_id`)}
                 ${
                   source === 'shares'
                     ? sql`ELSE (SELECT CASE WHEN count(*) = 0 THEN 'no_token_grant'
                                             WHEN count(*) > 1 OR bool_or(g.role <> 'viewer'
                                                  OR g.resource_type <> b.item_type
                                                  OR g.resource_id <> b.item_id::uuid) THEN 'token_grant_mismatch'
                                        END
                                   FROM storage.role_grants g
                                  WHERE g.subject_type = 'token' AND g.subject_id = b.id)`
                     : faces
                       ? sql`WHEN b.blob_hash IS NULL OR b.blob_hash = ff.blob_hash THEN NULL
                             WHEN EXISTS (SELECT 1 FROM storage.chunk_manifests m WHERE m.file_hash = b.blob_hash)
                               OR EXISTS (SELECT 1 FROM storage.blobs x WHERE x.hash = b.blob_hash) THEN 'stale_hash'
                             ELSE 'unknown_hash'`
                       : sql``
                 }
               END AS reason
          FROM batch b
          ${faces ? sql`LEFT JOIN storage.files ff ON ff.id = b.file_id` : sql``}
      )
      SELECT (SELECT count(*) FROM batch) AS scanned,
             (SELECT key FROM batch ORDER BY id DESC LIMIT 1) AS last_key,
             (SELECT json_agg(json_build_object(
                       'id', c.key, 'user_id', c.user_id, 'item_type', c.item_type, 'item_id', c.item_id,
                       'reason', c.reason, 'face_hash', c.face_hash, 'file_hash', c.file_hash) ORDER BY c.key)
                FROM checked c
               WHERE c.reason IS NOT NULL AND c.written_at <= ${options.createdBefore}) AS anomalies`.execute(
      this.#db,
    );
    const row = rows[0];
    return {
      scanned: row?.scanned ?? '0',
      last_key: row?.last_key ?? null,
      anomalies: (row?.anomalies ?? []).map((r) => ({
        source,
        id: r.id,
        userId: r.user_id,
        itemType: r.item_type,
        itemId: r.item_id,
        reason: r.reason,
        ...(faces && r.face_hash !== null ? { hashes: { face: r.face_hash, file: r.file_hash } } : {}),
      })),
    };
  }
}
