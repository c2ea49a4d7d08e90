/** What re-hashing a stored blob yields. */
export interface StoredBlobDigest {
  /** The actual BLAKE3 hex of the stored bytes (compare it with the key to detect corruption). */
  readonly hash: string;
  /** Number of bytes stored. */
  readonly size: number;
  /** The first bytes (up to 4 KiB), for mime sniffing. */
  readonly head: Uint8Array;
}

/**
 * Re-hashes blobs as they are stored, off the event loop (worker threads),
 * for deep consistency checks (`storage_consistency?deep=true`) and storage
 * migration. Implementations live in `@oxicloud/storage`
 * (`LocalFsBlobHasher`, `StreamingBlobHasher`).
 */
export interface BlobHasher {
  /**
   * Reads the blob stored under `hash` and returns the BLAKE3 of its bytes,
   * its size and its first bytes. Rejects with an error whose `code` is
   * `INVALID_HASH` for a malformed key, `NOT_FOUND` when the blob is absent,
   * and with `signal.reason` when aborted.
   */
  hashStoredBlob(hash: string, signal?: AbortSignal): Promise<StoredBlobDigest>;
}
