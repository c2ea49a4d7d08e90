/** One `storage.blobs` row as `storage_consistency` reads it. */
export interface BlobIndexRow {
  /** BLAKE3 hex of the bytes (64 lowercase hex characters). */
  readonly hash: string;
  readonly size: number;
  readonly refCount: number;
  /** Set when `refCount` reached 0 (dedup GC collects it after its grace); `null` otherwise. */
  readonly orphanedAt: Date | null;
  /** The content type recorded at upload, if any. */
  readonly contentType: string | null;
  readonly createdAt: Date;
}

/** One hash interval of the merge walk: `(after, upTo]`, compared against the keys the backend listed. */
export interface BlobRangeQuery {
  /** Exclusive lower bound; `null` = from the first row. */
  readonly after: string | null;
  /** Inclusive upper bound; `null` = no upper bound (the backend listing is exhausted). */
  readonly upTo: string | null;
  /** At most this many rows are examined; when reached, the interval ends at the last row examined. */
  readonly limit: number;
  /** The keys the backend listed in the interval, ascending. */
  readonly listedHashes: readonly string[];
  /**
   * Aligned with `listedHashes`: the `storage.blobs.size` each listed object
   * implies, i.e. its stored size less what the store adds to every object
   * (28 bytes of nonce and tag when it encrypts; fact sheet §12 item 17).
   * Negative for an encrypted object shorter than those 28 bytes.
   */
  readonly listedSizes: readonly number[];
}

/** What one interval of the merge walk found; anomalies only, never every row. */
export interface BlobRangeScan {
  /** Rows of `storage.blobs` examined in the interval. */
  readonly rowsScanned: number;
  /**
   * The hash of the last row examined when `rowsScanned === limit` (the
   * interval was cut short there: listed keys after it were NOT compared);
   * `null` when the interval was read to its end.
   */
  readonly cutAt: string | null;
  /**
   * Rows in the interval (up to `cutAt`) whose hash the backend did not list:
   * bytes possibly missing. Young rows included (the check applies its grace).
   */
  readonly rowsNotListed: readonly BlobIndexRow[];
  /**
   * Listed keys (up to `cutAt`) that have no row: possibly orphan bytes. (A
   * row with `ref_count = 0` that was never marked orphan is
   * `blobs_consistency`'s `orphaned_at_mismatch`, not an orphan here.)
   */
  readonly listedWithoutRow: readonly string[];
  /**
   * Rows in the interval (up to `cutAt`) whose key the backend listed with
   * another size than the row's (`listedSizes`): a truncated or grown
   * object. Young rows included (the check applies its grace).
   */
  readonly sizeMismatches: readonly BlobIndexRow[];
}

/** A blob row with the files that point at its hash (Pass 2 of `missing_blob_bytes`). */
export interface BlobFileImpact {
  readonly row: BlobIndexRow;
  /**
   * Files (live and trashed) that read this object: on OxiCloud's domain the
   * files of every manifest listing it as a chunk, plus the legacy files
   * whose `blob_hash` is the hash when no manifest has it as `file_hash`.
   */
  readonly fileCount: number;
  /** Of those, the live (not trashed) ones. */
  readonly liveFileCount: number;
  /** Their ids in id order, at most the `maxFileIds` asked for. */
  readonly fileIds: readonly string[];
}

/**
 * What `storage_consistency` reads from `storage.blobs`: hash intervals in
 * key order (so the backend listing and the table are merged over the same
 * interval, not looked up row by row), and the Pass 2 re-reads.
 * `@oxicloud/storage/oxicloud` implements it as `OxiBlobIndexScan`.
 */
export interface BlobIndexScan {
  /** The tables it reads, schema-qualified: the check's `reads`. */
  readonly reads?: readonly string[];
  /** Pass 1 of one batch: the interval `(after, upTo]` compared with the listed keys, in SQL. */
  scanRange(query: BlobRangeQuery): Promise<BlobRangeScan>;
  /** Pass 2: the rows that exist right now for these hashes (any order). */
  rowsByHash(hashes: readonly string[]): Promise<BlobIndexRow[]>;
  /** Pass 2 of the missing direction: the rows that still exist, with their referencing files. */
  fileImpact(hashes: readonly string[], maxFileIds: number): Promise<BlobFileImpact[]>;
  /** Number of blob rows (approximate is fine), for progress and ETA; `null` when unknown. */
  estimateRows(): Promise<number | null>;
  /**
   * The store canary's sample, in hash order and without duplicates: rows
   * whose objects must be in the store (`ref_count > 0`, created before
   * `createdBefore`), spread over the hash space (the first row at or after
   * each of `limit` evenly spaced points) and the first `limit` rows, so a
   * table of up to `limit` such rows is sampled whole (at most `2 × limit`).
   */
  sampleRows(limit: number, createdBefore: Date): Promise<BlobIndexRow[]>;
  /**
   * Of `hashes`, the ones that name no content: neither a manifest's
   * `file_hash` nor a `storage.blobs` row (what a thumbnail is keyed by, §12
   * item 19), nor any file's `blob_hash` (a file whose content row is lost
   * keeps its thumbnails). Needed by the thumbnails phase only.
   */
  unknownContentHashes?(hashes: readonly string[]): Promise<string[]>;
  /**
   * Of `fileIds` (lowercase UUIDs), the ones no `storage.files` row has,
   * trashed rows included (a trashed file still exists): what OxiCloud's
   * file-id keyed thumbnails and transcoded images name (§12 item 19). One
   * query per call. Needed by the thumbnails phases only.
   */
  unknownFileIds?(fileIds: readonly string[]): Promise<string[]>;
}
