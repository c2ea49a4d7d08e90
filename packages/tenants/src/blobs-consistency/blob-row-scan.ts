import type { StatefulAdapter } from '@oxicloud/consistency';
import type { ScanPage } from '../ports/scan-page.js';

/** A blob row whose counter or orphan mark disagrees with the files (or with itself). */
export interface BlobRowAnomaly {
  readonly hash: string;
  /** `storage.blobs.ref_count` as recorded. */
  readonly refCount: number;
  /** Files (live and trashed) whose `blob_hash` is this hash: what `ref_count` should be. */
  readonly fileCount: number;
  /** `storage.blobs.orphaned_at` as recorded. */
  readonly orphanedAt: Date | null;
  readonly size: number;
  readonly createdAt: Date;
}

/** The grace boundary of a blob-row scan (from the run's `startedAt`). */
export interface BlobRowScanOptions {
  /** Only rows created at or before this instant are flagged. */
  readonly createdBefore: Date;
}

/**
 * What `blobs_consistency` reads: `storage.blobs` walked in hash order, each
 * page's rows compared in SQL with the count of `storage.files` rows over the
 * same hash range (the covering index `files (blob_hash, id)`), so both sides
 * are read in key order. A state-owning port: the adapter returns
 * `blobs_consistency` from `consistencyChecks()`.
 */
export interface BlobRowScan extends StatefulAdapter {
  /**
   * Up to `limit` blob rows with hash > `afterHash` in hash order; the
   * anomalies are the rows whose `ref_count` differs from the file count, or
   * whose `orphaned_at` is set while `ref_count > 0` or unset while it is 0.
   */
  scanBlobRows(
    afterHash: string | null,
    limit: number,
    options: BlobRowScanOptions,
  ): Promise<ScanPage<BlobRowAnomaly>>;
  /** Pass 2: re-reads these rows and their files now; returns those still anomalous. */
  reverifyBlobRows(hashes: readonly string[], options: BlobRowScanOptions): Promise<BlobRowAnomaly[]>;
  /** Rows the walk will examine, from planner statistics; `null` when unknown. */
  estimateRows(): Promise<number | null>;
}
