/** What one purge batch removed. */
export interface TrashPurgeBatch {
  /** Candidates selected for the batch (trashed roots or trashed files); fewer than the limit = done. */
  readonly selected: number;
  /** Folder rows deleted (the trashed roots and every folder below them). */
  readonly folders: number;
  /** File rows deleted (trashed files, or every file inside a purged subtree). */
  readonly files: number;
}

/**
 * The storage the `trash_cleanup` tenant purges. Purging deletes rows; the
 * blob `ref_count` triggers then mark blobs orphaned and `dedup_gc` collects
 * the bytes later. Each call is one short transaction of at most `limit`
 * candidates, so a huge trash never holds one giant transaction.
 */
export interface TrashRepository {
  /**
   * Deletes up to `limit` trashed folders with `trashed_at < cutoff` (oldest
   * first) together with their whole subtree (sub-folders and files, trashed
   * or not), and reports the rows removed.
   */
  purgeFolderBatch(cutoff: Date, limit: number): Promise<TrashPurgeBatch>;
  /** Deletes up to `limit` trashed files with `trashed_at < cutoff` (oldest first). */
  purgeFileBatch(cutoff: Date, limit: number): Promise<TrashPurgeBatch>;
}
