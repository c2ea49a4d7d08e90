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

/**
 * A manifest of two chunks or more, as the deep whole-file pass reads it: the
 * file's bytes are the blob objects `chunkHashes` concatenated in order.
 */
export interface MultiChunkManifest {
  /** `storage.chunk_manifests.file_hash`: what the BLAKE3 of those bytes must be. */
  readonly fileHash: string;
  /** `chunk_hashes` in file order (a hash may repeat); each is 64 lowercase hex. */
  readonly chunkHashes: readonly string[];
  /** `total_size` as recorded. */
  readonly totalSize: number;
  /** `chunk_count` as recorded. */
  readonly chunkCount: number;
  readonly createdAt: Date;
}

/** A manifest of a {@link MultiChunkManifestPage}, with where it lies in the page. */
export interface PagedMultiChunkManifest extends MultiChunkManifest {
  /** Rows of the page examined up to and including this one (1-based): the page's `scanned` if it ended here. */
  readonly position: number;
}

/**
 * A page of the deep pass's walk: a keyset page of every manifest in hash
 * order, of which only those to hash are sent (see `scanMultiChunkManifests`).
 */
export interface MultiChunkManifestPage {
  /** Rows examined (any manifest), up to and including `lastKey`. */
  readonly scanned: number;
  /** The key of the last row examined; `null` when the page was empty. */
  readonly lastKey: string | null;
  /** The manifests to hash among them, in hash order. */
  readonly manifests: readonly PagedMultiChunkManifest[];
  /** `true` when no manifest follows `lastKey`: the walk is over. */
  readonly last: boolean;
}

/** A multi-chunk manifest as Pass 2 re-reads it, with the files that name it now. */
export interface MultiChunkManifestNow extends MultiChunkManifest {
  /** `storage.files` rows (live and trashed) whose `blob_hash` is `fileHash`. */
  readonly fileCount: number;
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
 * with its own arrays. A deep run walks the table a second time for the
 * multi-chunk manifests' chunk lists (`scanMultiChunkManifests`), whose
 * bytes the check hashes through a `BlobSequenceHasher`. A state-owning
 * port: the adapter returns `manifests_consistency` from `consistencyChecks()`.
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
  /**
   * The deep whole-file pass's walk: the next `limit` manifests with
   * `file_hash > afterHash` in hash order, of which it sends the ones to
   * hash: two chunks or more, every chunk a 64-hex key (a malformed one
   * cannot be read; the shape finding says so), created at or before
   * `createdBefore`. To bound the chunk lists it sends, the adapter may end
   * the page early, at a manifest it sends (`scanned` and `lastKey` then
   * stop there and `last` is `false`).
   */
  scanMultiChunkManifests(
    afterHash: string | null,
    limit: number,
    options: ManifestScanOptions,
  ): Promise<MultiChunkManifestPage>;
  /**
   * Pass 2 of the deep pass: these manifests as they are now, those that
   * are still multi-chunk and created at or before `createdBefore`, each
   * with its file count; a manifest deleted since is not returned.
   */
  rereadMultiChunkManifests(
    fileHashes: readonly string[],
    options: ManifestScanOptions,
  ): Promise<MultiChunkManifestNow[]>;
  /** Manifests the walk will examine, from planner statistics; `null` when unknown. */
  estimateRows(): Promise<number | null>;
}
