import type { ChunkManifestRecord } from './chunk-manifest-record.js';

/** A page of candidates: ascending hash order, strictly after `after` when given. */
export interface ContentGcPage {
  readonly after: string | null;
  readonly limit: number;
}

/** What {@link ContentGcRepository.collectManifests} did with the manifests it was given. */
export interface ManifestCollectResult {
  /** Manifests deleted (committed), their chunks' counts lowered by 1 each (distinct chunks). */
  readonly deleted: readonly ChunkManifestRecord[];
  /**
   * Manifests that were candidates but that a `storage.files` row (trashed or
   * not) names under the lock: kept. Those whose `ref_count` is ≤ 0 have a
   * wrong count (OxiCloud's own GC would have deleted them).
   */
  readonly referenced: readonly { readonly fileHash: string; readonly refCount: number }[];
}

/** A blob row the GC collected (or is about to). */
export interface CollectedBlob {
  readonly hash: string;
  /** Plaintext bytes (`storage.blobs.size`). */
  readonly size: number;
}

/** What {@link ContentGcRepository.collectBlobs} did with the hashes it was given. */
export interface BlobCollectResult {
  /** Rows deleted (committed); their bytes were handed to `moveBytes` first. */
  readonly deleted: readonly CollectedBlob[];
  /** Rows with `ref_count = 0` that a manifest lists or a file names under the lock: kept (the count is wrong). */
  readonly referenced: readonly string[];
}

/** What {@link ContentGcRepository.restoreManifest} found for a saved manifest. */
export type ManifestRestoreStatus =
  /** A manifest row exists (re-created by an upload, or never deleted): nothing written. */
  | 'present'
  /** No file names it: nothing written. */
  | 'unreferenced'
  /** Files name it and no row existed: the row and its chunks' counts were put back. */
  | 'restored';

/**
 * The content tables `dedup_gc` collects from on OxiCloud's storage domain
 * (`storage.chunk_manifests`, `storage.blobs`, cross-checked against
 * `storage.files`), with the locking the job's protocol relies on. Counts are
 * never trusted alone: every deletion re-checks the file table (and, for a
 * blob, the manifests) under a row lock.
 */
export interface ContentGcRepository {
  /**
   * Manifests that look collectible: created before `cutoff` and with no
   * file row naming them, or with `ref_count ≤ 0` (to be reported when files
   * name them). No lock; {@link collectManifests} decides.
   */
  listManifestCandidates(cutoff: Date, page: ContentGcPage): Promise<string[]>;
  /**
   * One transaction: locks those of `fileHashes` still created before
   * `cutoff` (`FOR UPDATE`, hash order), asks the file table in a separate
   * statement which of them files name, calls `beforeDelete` with the others
   * (the job saves them to the quarantine), deletes them and lowers each
   * distinct chunk of each by 1 (clamped at 0, `orphaned_at = now()` at 0),
   * commits. If `beforeDelete` rejects, nothing is written and the rejection
   * propagates.
   */
  collectManifests(
    fileHashes: readonly string[],
    cutoff: Date,
    beforeDelete: (doomed: readonly ChunkManifestRecord[]) => Promise<void>,
  ): Promise<ManifestCollectResult>;
  /** Blob rows with `ref_count = 0` and `orphaned_at` NULL or before `cutoff`. No lock. */
  listBlobCandidates(cutoff: Date, page: ContentGcPage): Promise<string[]>;
  /**
   * One transaction: locks those of `hashes` still at `ref_count = 0` and past
   * the cutoff (`FOR UPDATE`, hash order), drops those a manifest lists or a
   * file names (separate statements), calls `moveBytes` with the rest while
   * the locks are held, deletes their rows, commits. If `moveBytes` rejects,
   * the transaction rolls back (rows kept) and the rejection propagates.
   */
  collectBlobs(
    hashes: readonly string[],
    cutoff: Date,
    moveBytes: (doomed: readonly CollectedBlob[]) => Promise<void>,
  ): Promise<BlobCollectResult>;
  /**
   * Those of `hashes` whose bytes someone still wants: a `storage.blobs` row
   * exists, a manifest lists the hash, or a file names it. No lock.
   */
  wantedHashes(hashes: readonly string[]): Promise<Set<string>>;
  /**
   * One transaction: when files name `record.fileHash` and no manifest row
   * has it, inserts the row (`ref_count` = the number of those files) and
   * adds 1 to each distinct chunk's blob row (inserting a missing one with
   * the record's size, clearing `orphaned_at`).
   */
  restoreManifest(record: ChunkManifestRecord): Promise<ManifestRestoreStatus>;
}
