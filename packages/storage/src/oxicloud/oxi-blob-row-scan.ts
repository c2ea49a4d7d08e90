import type { ConsistencyCheck } from '@oxicloud/consistency';
import type { Logger } from '@oxicloud/scheduler';
import {
  type BlobRowAnomaly,
  type BlobRowScan,
  type BlobRowScanOptions,
  type BlobsConsistencyCheckOptions,
  createBlobsConsistencyCheck,
  type ScanPage,
} from '@oxicloud/tenants';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { bigintToNumber } from '../postgres/database.js';
import { estimateRowsOf } from './content-sql.js';
import type { OxiCloudDatabase } from './database.js';

interface RowJson {
  hash: string;
  ref_count: number;
  expected: string;
  orphaned_at: string | null;
  size: string;
  created_at: string;
}

const toAnomaly = (r: RowJson): BlobRowAnomaly => ({
  hash: r.hash,
  refCount: Number(r.ref_count),
  fileCount: bigintToNumber(r.expected),
  orphanedAt: r.orphaned_at === null ? null : new Date(r.orphaned_at),
  size: bigintToNumber(r.size),
  createdAt: new Date(r.created_at),
});

/** Options of {@link OxiBlobRowScan}. */
export interface OxiBlobRowScanOptions {
  /** The checks' batch loops log their retries, lost checkpoints and failures here. */
  readonly logger?: Logger;
  /** Each check's own options (grace, thresholds), by check name: given to that check only. */
  readonly checks?: {
    /** `graceWindowMs` on the row's `created_at` (default 1 h). */
    readonly blobs_consistency?: Omit<BlobsConsistencyCheckOptions, 'scan' | 'logger'>;
  };
}

/**
 * {@link BlobRowScan} on OxiCloud's domain, and the stateful adapter of the
 * blob rows' counters (`subsystem() === 'blob_rows'`):
 * it contributes `blobs_consistency`.
 *
 * The expected `ref_count` of a `storage.blobs` row is fact sheet §12 item
 * 15, the rule `BlobRefCountExpectation.expectedFor` implements, in SQL:
 * - some manifest lists the hash (`chunk_hashes`; one-chunk files land
 *   here): the number of manifests listing it, once per manifest however
 *   often it repeats inside one (`count(DISTINCT file_hash)`);
 * - else, the hash is a (multi-chunk or empty) manifest's `file_hash`: 0;
 * - else (a legacy whole-file blob): the number of `storage.files` rows
 *   with that `blob_hash`, trashed included.
 * The finding's `file_count` carries that expected count.
 *
 * `orphaned_at` follows §12 item 16: it must be set whenever `ref_count =
 * 0` (else the GC deletes the row with no grace): `orphaned_at_mismatch`
 * with `reason: unreferenced_never_marked`. A mark on a row with
 * `ref_count > 0` is normal on OxiCloud (the pin and "undo" paths leave it):
 * this adapter never returns such a row for its mark alone, so the check's
 * `set_while_referenced` reason cannot occur on this domain.
 *
 * Each page is one statement: a keyset page of blob rows by hash; the
 * manifests listing any of them in one GIN probe (`chunk_hashes && the
 * page's hashes`), unnested and counted per hash; the files of the page's
 * hashes by `idx_files_blob_hash`; the manifests named by them by primary
 * key; the comparison in SQL, and back only the anomalous rows.
 */
export class OxiBlobRowScan implements BlobRowScan {
  readonly #db: Kysely<OxiCloudDatabase>;
  readonly #checks: readonly ConsistencyCheck[];

  constructor(db: Kysely<OxiCloudDatabase>, options: OxiBlobRowScanOptions = {}) {
    this.#db = db;
    const { checks = {} } = options;
    const logger = options.logger ? { logger: options.logger } : {};
    this.#checks = [
      {
        ...createBlobsConsistencyCheck({ ...checks.blobs_consistency, ...logger, scan: this }),
        reads: ['storage.blobs', 'storage.chunk_manifests', 'storage.files'],
      },
    ];
  }

  subsystem(): string {
    return 'blob_rows';
  }

  /** `blobs_consistency`: `ref_count` against §12 item 15, `orphaned_at` against `ref_count = 0`. */
  consistencyChecks(): readonly ConsistencyCheck[] {
    return this.#checks;
  }

  async scanBlobRows(
    afterHash: string | null,
    limit: number,
    options: BlobRowScanOptions,
  ): Promise<ScanPage<BlobRowAnomaly>> {
    const row = await this.#compare(
      sql`SELECT hash, size, ref_count, orphaned_at, created_at FROM storage.blobs
          ${afterHash === null ? sql`` : sql`WHERE hash > ${afterHash}::text`}
          ORDER BY hash LIMIT ${limit}`,
      options,
    );
    return {
      scanned: bigintToNumber(row.scanned),
      lastKey: row.last_hash,
      anomalies: row.anomalies.map(toAnomaly),
    };
  }

  async reverifyBlobRows(hashes: readonly string[], options: BlobRowScanOptions): Promise<BlobRowAnomaly[]> {
    if (hashes.length === 0) return [];
    const row = await this.#compare(
      sql`SELECT hash, size, ref_count, orphaned_at, created_at FROM storage.blobs
           WHERE hash = ANY(${[...hashes]}::text[])`,
      options,
    );
    return row.anomalies.map(toAnomaly);
  }

  estimateRows(): Promise<number | null> {
    return estimateRowsOf(this.#db, ['storage.blobs']);
  }

  async #compare(
    batch: RawBuilder<unknown>,
    options: BlobRowScanOptions,
  ): Promise<{ scanned: string; last_hash: string | null; anomalies: RowJson[] }> {
    const { rows } = await sql<{ scanned: string; last_hash: string | null; anomalies: RowJson[] }>`
      WITH batch AS MATERIALIZED (${batch}),
      page AS MATERIALIZED (SELECT ARRAY(SELECT hash::text FROM batch) AS hashes),
      -- Manifests listing a hash of the page: one GIN probe for the page, then per hash the
      -- distinct manifests (a chunk repeated inside one manifest counts once).
      listing AS MATERIALIZED (
        SELECT c.h AS hash, count(DISTINCT m.file_hash) AS n
          FROM storage.chunk_manifests m, page
          CROSS JOIN LATERAL unnest(m.chunk_hashes) c(h)
         WHERE m.chunk_hashes && page.hashes
           AND c.h = ANY (page.hashes)
         GROUP BY c.h
      ),
      files AS MATERIALIZED (
        SELECT f.blob_hash AS hash, count(*) AS n
          FROM storage.files f, page
         WHERE f.blob_hash = ANY (page.hashes)
         GROUP BY f.blob_hash
      ),
      named AS MATERIALIZED (
        SELECT m.file_hash AS hash FROM storage.chunk_manifests m, page WHERE m.file_hash = ANY (page.hashes)
      ),
      checked AS (
        SELECT b.hash, b.size, b.ref_count, b.orphaned_at, b.created_at,
               CASE WHEN l.n > 0 THEN l.n
                    WHEN nm.hash IS NOT NULL THEN 0
                    ELSE COALESCE(f.n, 0) END AS expected
          FROM batch b
          LEFT JOIN listing l ON l.hash = b.hash
          LEFT JOIN files f ON f.hash = b.hash
          LEFT JOIN named nm ON nm.hash = b.hash
      )
      SELECT (SELECT count(*) FROM batch) AS scanned,
             (SELECT max(hash) FROM batch) AS last_hash,
             COALESCE((
               SELECT json_agg(json_build_object(
                        'hash', x.hash, 'ref_count', x.ref_count, 'expected', x.expected::text,
                        'orphaned_at', x.orphaned_at, 'size', x.size::text, 'created_at', x.created_at)
                        ORDER BY x.hash)
                 FROM checked x
                WHERE (x.ref_count <> x.expected OR (x.ref_count = 0 AND x.orphaned_at IS NULL))
                  AND x.created_at <= ${options.createdBefore}
             ), '[]'::json) AS anomalies`.execute(this.#db);
    return rows[0] ?? { scanned: '0', last_hash: null, anomalies: [] };
  }
}
