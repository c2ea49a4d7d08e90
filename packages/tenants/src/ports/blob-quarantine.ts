import type { ChunkManifestRecord } from './chunk-manifest-record.js';

/** An object in the quarantine, and when it was put there. */
export interface QuarantinedEntry {
  /** The blob's hash, or a saved manifest's `file_hash`. */
  readonly hash: string;
  /** When it was quarantined (local: the file's mtime, stamped at the move; S3: the copy's LastModified). */
  readonly quarantinedAt: Date;
}

/** One page of a quarantine listing, in ascending hash order. */
export interface QuarantineListOptions {
  /** Only hashes strictly greater than this. */
  readonly startAfter?: string | null;
  readonly limit: number;
}

/**
 * The quarantine of a blob store: a place of the engine's, outside OxiCloud's
 * blob area, where `dedup_gc` moves the bytes of a collected blob instead of
 * deleting them, and where it saves the manifests it deletes. OxiCloud's
 * upload treats an object that "already exists" as its own, so bytes whose
 * row was just deleted can be adopted at any moment: a quarantined object is
 * moved back when a row wants it again, and purged only after a second,
 * longer grace. Used by the GC only; a store that has it implements this
 * port beside `BlobStorage`, so the store's other users are not concerned.
 *
 * Every hash is 64 lowercase hex characters (refused otherwise, before any
 * file or network call). Moves are "atomic enough" for the GC's protocol: a
 * local move is one rename on one filesystem; on S3 a copy then a delete, so
 * a crash between the two leaves the object in both places, which every
 * method here tolerates (a restore or a quarantine over an existing copy
 * replaces it: the objects are content-addressed).
 */
export interface BlobQuarantine {
  /**
   * Moves the object `hash` from the blob area into the quarantine (replacing
   * a quarantined copy) and stamps the time. `false` when the blob area has
   * no such object (nothing moved).
   */
  quarantineBlob(hash: string): Promise<boolean>;
  /**
   * Moves the quarantined object `hash` back into the blob area, replacing
   * an object there (same content, or a truncated write). `false` when the
   * quarantine has no such object.
   */
  restoreBlob(hash: string): Promise<boolean>;
  /** The quarantined blobs, in ascending hash order. */
  listQuarantinedBlobs(options: QuarantineListOptions): Promise<QuarantinedEntry[]>;
  /** Deletes a quarantined object for good; `false` when it was not there. */
  purgeQuarantinedBlob(hash: string): Promise<boolean>;
  /** Saves a manifest before its row is deleted (replacing a saved copy); atomic. */
  saveManifest(record: ChunkManifestRecord): Promise<void>;
  /** The saved manifests, in ascending `fileHash` order. */
  listQuarantinedManifests(options: QuarantineListOptions): Promise<QuarantinedEntry[]>;
  /** A saved manifest, or `null` when there is none under `fileHash`. */
  readQuarantinedManifest(fileHash: string): Promise<ChunkManifestRecord | null>;
  /** Deletes a saved manifest; `false` when it was not there. */
  purgeQuarantinedManifest(fileHash: string): Promise<boolean>;
}
