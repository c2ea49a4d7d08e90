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
import { bigintToNumber, type StorageDatabase } from './database.js';
import { estimateRowsOf } from './row-estimate.js';

interface RowJson {
  hash: string;
  ref_count: number;
  file_count: string;
  orphaned_at: string | null;
  size: string;
  created_at: string;
}

const toAnomaly = (r: RowJson): BlobRowAnomaly => ({
  hash: r.hash,
  refCount: Number(r.ref_count),
  fileCount: bigintToNumber(r.file_count),
  orphanedAt: r.orphaned_at === null ? null : new Date(r.orphaned_at),
  size: bigintToNumber(r.size),
  createdAt: new Date(r.created_at),
});

/** Options of {@link PgBlobRowScan}. */
export interface PgBlobRowScanOptions {
  /** The checks' batch loops log their retries, lost checkpoints and failures here. */
  readonly logger?: Logger;
  /** Each check's own options (grace, thresholds), by check name: given to that check only. */
  readonly checks?: {
    /** `graceWindowMs` on the row's `created_at` (default 1 h). */
    readonly blobs_consistency?: Omit<BlobsConsistencyCheckOptions, 'scan' | 'logger'>;
  };
}

/**
 * {@link BlobRowScan} on `storage.blobs` / `storage.files`, and the stateful
 * adapter of the blob rows' counters (`subsystem() === 'blob_rows'`): it
 * contributes `blobs_consistency`. Each page is one statement: a keyset page
 * of blob rows by hash, the files over the same hash range counted per hash
 * on the covering index `files (blob_hash, id)`, the comparison in SQL, and
 * back only the anomalous rows plus the count and last hash.
 */
export class PgBlobRowScan implements BlobRowScan {
  readonly #db: Kysely<StorageDatabase>;
  readonly #checks: readonly ConsistencyCheck[];

  constructor(db: Kysely<StorageDatabase>, options: PgBlobRowScanOptions = {}) {
    this.#db = db;
    const { checks = {} } = options;
    const logger = options.logger ? { logger: options.logger } : {};
    // The adapter's checks, each with its own options.
    this.#checks = [createBlobsConsistencyCheck({ ...checks.blobs_consistency, ...logger, scan: this })];
  }

  subsystem(): string {
    return 'blob_rows';
  }

  /** `blobs_consistency`: `ref_count` against the files, `orphaned_at` against `ref_count`. */
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
      bounds AS (SELECT min(hash) AS lo, max(hash) AS hi FROM batch),
      -- The files over the page's hash range, counted per hash on the covering index
      -- (blob_hash, id): a range read in key order, merged with the page.
      counts AS MATERIALIZED (
        SELECT f.blob_hash, count(*) AS n
          FROM storage.files f, bounds
         WHERE f.blob_hash >= bounds.lo AND f.blob_hash <= bounds.hi
         GROUP BY f.blob_hash
      ),
      checked AS (
        SELECT b.hash, b.size, b.ref_count, b.orphaned_at, b.created_at, COALESCE(c.n, 0) AS file_count
          FROM batch b LEFT JOIN counts c ON c.blob_hash = b.hash
      )
      SELECT (SELECT count(*) FROM batch) AS scanned,
             (SELECT max(hash) FROM batch) AS last_hash,
             COALESCE((
               SELECT json_agg(json_build_object(
                        'hash', x.hash, 'ref_count', x.ref_count, 'file_count', x.file_count::text,
                        'orphaned_at', x.orphaned_at, 'size', x.size::text, 'created_at', x.created_at)
                        ORDER BY x.hash)
                 FROM checked x
                WHERE (x.ref_count <> x.file_count OR (x.ref_count > 0) = (x.orphaned_at IS NOT NULL))
                  AND x.created_at <= ${options.createdBefore}
             ), '[]'::json) AS anomalies`.execute(this.#db);
    return rows[0] ?? { scanned: '0', last_hash: null, anomalies: [] };
  }
}
