import { StorageError } from '../storage-error.js';

/** What {@link BlobRefCountExpectation} needs of a `storage.chunk_manifests` row. */
export interface ManifestChunkList {
  /** `file_hash`. */
  readonly fileHash: string;
  /** `chunk_hashes` (repeats allowed: a manifest counts once per distinct hash). */
  readonly chunkHashes: readonly string[];
}

/** What {@link BlobRefCountExpectation} needs of a `storage.files` row (trashed rows included). */
export interface FileBlobRef {
  /** `blob_hash`. */
  readonly blobHash: string;
}

/**
 * Which rule of OxiCloud §12 item 15 gives a hash its expected
 * `storage.blobs.ref_count`:
 *
 * - `manifests`: some manifest lists the hash as a chunk; expected = the
 *   number of manifests listing it, once per manifest (however often it
 *   repeats inside one). One-chunk files land here: their `file_hash` is
 *   their only chunk.
 * - `files`: no manifest lists it and it is no manifest's `file_hash` (a
 *   legacy whole-file blob); expected = the number of files rows whose
 *   `blob_hash` is the hash.
 * - `manifest_file_hash`: no manifest lists it, but it is a multi-chunk (or
 *   the empty) manifest's `file_hash`. Files with that `blob_hash` read
 *   through the manifest (§5 "How a file maps to bytes") and hold no
 *   reference to a blob object of that name (the legacy rechunk moves their
 *   count off the old blob), so expected = 0: a `blobs` row under this hash
 *   with a count > 0 is a leak.
 */
export const BLOB_REF_COUNT_BASES = ['manifests', 'files', 'manifest_file_hash'] as const;

/** One of {@link BLOB_REF_COUNT_BASES}. */
export type BlobRefCountBasis = (typeof BLOB_REF_COUNT_BASES)[number];

/** The expected `storage.blobs.ref_count` of one hash, and the counts behind it. */
export interface ExpectedBlobRefCount {
  readonly hash: string;
  /** What `ref_count` should be. */
  readonly expected: number;
  readonly basis: BlobRefCountBasis;
  /** Manifests listing the hash among their chunks (each counted once). */
  readonly manifestsListing: number;
  /** Files rows whose `blob_hash` is the hash (trashed included, as fed). */
  readonly filesReferencing: number;
  /**
   * The hash is also a manifest's `file_hash`. With `basis` `manifests` this
   * is a one-chunk file's hash, whose count drifts in both directions in
   * OxiCloud (the delete trigger and `copy_folder_tree` move it as if it
   * were legacy).
   */
  readonly isManifestFileHash: boolean;
}

/**
 * OxiCloud §12 item 15's expected blob reference counts, accumulated from
 * batches of manifests and files in any order (a scan feeds pages as it
 * reads them), then queried per hash. Pure: no database call, memory in
 * proportion to the distinct hashes fed. Feed every manifest once (a
 * `file_hash` fed twice is refused) and every files row once.
 *
 * @example
 * ```ts
 * import { BlobRefCountExpectation } from '@oxicloud/storage';
 * const expectation = new BlobRefCountExpectation();
 * expectation.addManifests([{ fileHash: h, chunkHashes: [h] }]); // a one-chunk file…
 * expectation.addFiles([{ blobHash: h }, { blobHash: h }]); // …in two files rows
 * expectation.expectedFor(h).expected; // 1: one manifest lists it
 * ```
 */
export class BlobRefCountExpectation {
  readonly #listing = new Map<string, number>();
  readonly #files = new Map<string, number>();
  readonly #manifestFileHashes = new Set<string>();

  /**
   * Adds manifests.
   * @throws {StorageError} `INVALID_ARGUMENT` when a `fileHash` was fed
   *   already (it is the table's primary key: a repeat is a paging bug).
   */
  addManifests(manifests: Iterable<ManifestChunkList>): this {
    for (const { fileHash, chunkHashes } of manifests) {
      if (this.#manifestFileHashes.has(fileHash)) {
        throw new StorageError(
          'INVALID_ARGUMENT',
          `manifest ${fileHash} was fed twice; feed each chunk_manifests row once (file_hash is its primary key)`,
        );
      }
      this.#manifestFileHashes.add(fileHash);
      for (const hash of new Set(chunkHashes)) this.#listing.set(hash, (this.#listing.get(hash) ?? 0) + 1);
    }
    return this;
  }

  /** Adds files rows (each one a reference to its `blob_hash`). */
  addFiles(files: Iterable<FileBlobRef>): this {
    for (const { blobHash } of files) this.#files.set(blobHash, (this.#files.get(blobHash) ?? 0) + 1);
    return this;
  }

  /** The expectation for `hash`; `expected` 0 with basis `files` for a hash nothing mentions. */
  expectedFor(hash: string): ExpectedBlobRefCount {
    const manifestsListing = this.#listing.get(hash) ?? 0;
    const filesReferencing = this.#files.get(hash) ?? 0;
    const isManifestFileHash = this.#manifestFileHashes.has(hash);
    const basis: BlobRefCountBasis =
      manifestsListing > 0 ? 'manifests' : isManifestFileHash ? 'manifest_file_hash' : 'files';
    const expected = basis === 'manifests' ? manifestsListing : basis === 'files' ? filesReferencing : 0;
    return { hash, expected, basis, manifestsListing, filesReferencing, isManifestFileHash };
  }

  /** Every hash fed (chunk, file or manifest hash), once each, in no particular order. */
  *entries(): IterableIterator<ExpectedBlobRefCount> {
    for (const hash of this.#listing.keys()) yield this.expectedFor(hash);
    for (const hash of this.#files.keys()) if (!this.#listing.has(hash)) yield this.expectedFor(hash);
    for (const hash of this.#manifestFileHashes) {
      if (!this.#listing.has(hash) && !this.#files.has(hash)) yield this.expectedFor(hash);
    }
  }
}

/**
 * {@link BlobRefCountExpectation} in one call: the expectation of every
 * hash the manifests and files mention.
 *
 * @example
 * ```ts
 * import { expectedBlobRefCounts } from '@oxicloud/storage';
 * const expected = expectedBlobRefCounts({ manifests: [], files: [{ blobHash: h }, { blobHash: h }] });
 * expected.get(h)?.expected; // 2: a legacy blob in two files rows
 * ```
 */
export function expectedBlobRefCounts(input: {
  readonly manifests: Iterable<ManifestChunkList>;
  readonly files: Iterable<FileBlobRef>;
}): ReadonlyMap<string, ExpectedBlobRefCount> {
  const expectation = new BlobRefCountExpectation().addManifests(input.manifests).addFiles(input.files);
  return new Map(Array.from(expectation.entries(), (entry) => [entry.hash, entry]));
}
