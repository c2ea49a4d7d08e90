import type { StatefulAdapter } from '@oxicloud/consistency';
import type { ScanPage } from '../ports/scan-page.js';

/** A manifest whose counter or shape disagrees with the files that name it (or with itself). */
export interface ManifestAnomaly {
  /** `storage.chunk_manifests.file_hash`. */
  readonly fileHash: string;
  /** `ref_count` as recorded. */
  readonly refCount: number;
  /** `storage.files` rows (live and trashed) whose `blob_hash` is `fileHash`: what `ref_count` should be. */
  readonly fileCount: number;
  /** `total_size` as recorded. */
  readonly totalSize: number;
  /** `chunk_count` as recorded. */
  readonly chunkCount: number;
  /**
   * The codes of the shape rules it breaks (fact sheet §12 item 13), each
   * once, in the adapter's order; empty when the shape holds. The adapter
   * names the codes (`MANIFEST_SHAPE_PROBLEM_CODES` of `@oxicloud/storage`).
   */
  readonly shape: readonly string[];
  readonly createdAt: Date;
}

/** The grace boundary of a manifest scan (from the run's `startedAt`). */
export interface ManifestScanOptions {
  /** Only manifests created at or before this instant are flagged. */
  readonly createdBefore: Date;
}

/**
 * What `manifests_consistency` reads: `storage.chunk_manifests` walked in
 * `file_hash` order, each page compared in SQL with the count of
 * `storage.files` rows over the page's hashes (`idx_files_blob_hash`) and
 * with its own arrays. A state-owning port: the adapter returns
 * `manifests_consistency` from `consistencyChecks()`.
 */
export interface ManifestScan extends StatefulAdapter {
  /**
   * Up to `limit` manifests with `file_hash > afterHash` in hash order; the
   * anomalies are those whose `ref_count` differs from their file count or
   * whose shape breaks a rule, created at or before `createdBefore`.
   */
  scanManifests(
    afterHash: string | null,
    limit: number,
    options: ManifestScanOptions,
  ): Promise<ScanPage<ManifestAnomaly>>;
  /** Pass 2: re-reads these manifests and their files now; returns those still anomalous. */
  reverifyManifests(fileHashes: readonly string[], options: ManifestScanOptions): Promise<ManifestAnomaly[]>;
  /** Manifests the walk will examine, from planner statistics; `null` when unknown. */
  estimateRows(): Promise<number | null>;
}
