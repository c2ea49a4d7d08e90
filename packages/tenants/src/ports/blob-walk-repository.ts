/** One row of `storage.blobs` as the blob walks need it. */
export interface BlobRow {
  /** BLAKE3 hex of the bytes (64 lowercase hex characters). */
  readonly hash: string;
  /** Size in bytes, as recorded in the database. */
  readonly size: number;
}

/**
 * Reads `storage.blobs` in hash order, for walks that resume from a hash
 * cursor (`storage_migration`). Keyset pagination: a page holds the rows
 * with `hash > afterHash` (all rows when `afterHash` is `null`), ascending.
 */
export interface BlobWalkRepository {
  /** Up to `limit` blob rows with `hash > afterHash`, ascending by hash. */
  listBlobsAfter(afterHash: string | null, limit: number): Promise<BlobRow[]>;
  /**
   * Like {@link listBlobsAfter}, restricted to rows with `created_at >= since`:
   * the catch-up pass over blobs written while a walk was running.
   */
  listBlobsCreatedSince(since: Date, afterHash: string | null, limit: number): Promise<BlobRow[]>;
  /** Number of blob rows: the total a full walk examines. */
  countBlobs(): Promise<number>;
}
