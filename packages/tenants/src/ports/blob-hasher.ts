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

/** What re-hashing a sequence of stored blobs yields. */
export interface StoredSequenceDigest {
  /** The actual BLAKE3 hex of the blobs' bytes, concatenated in the order asked. */
  readonly hash: string;
  /** Number of bytes hashed (the sum of the blobs' stored plaintext sizes). */
  readonly size: number;
}

/**
 * A {@link BlobHasher} that also hashes several stored blobs as one byte
 * stream: a chunked file's whole plaintext is its manifest's chunks
 * concatenated in order (OxiCloud §5), for `manifests_consistency`'s deep
 * whole-file pass. Implementations live in `@oxicloud/storage`
 * (`createBlobHasher`): off the event loop, streaming.
 */
export interface BlobSequenceHasher extends BlobHasher {
  /**
   * Reads the blobs stored under `hashes` in this order (a hash that repeats
   * is read again each time) and returns the BLAKE3 of all their bytes as
   * one stream, and its length. Streams: holds at most a few read buffers,
   * never a whole blob or the whole sequence. The empty sequence is the
   * hash of no bytes. Rejects with an error whose `code` is `INVALID_HASH`
   * for a malformed key (before any read), `NOT_FOUND` when a blob is
   * absent, and with `signal.reason` when aborted.
   */
  hashStoredSequence(hashes: readonly string[], signal?: AbortSignal): Promise<StoredSequenceDigest>;
}
