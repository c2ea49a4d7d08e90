/** What one purge batch removed. */
export interface TrashPurgeBatch {
  /** Candidates selected for the batch (trashed roots or trashed files); fewer than the limit = done. */
  readonly selected: number;
  /** Folder rows deleted (the trashed roots and every folder below them). */
  readonly folders: number;
  /** File rows deleted (trashed files, or every file inside a purged subtree). */
  readonly files: number;
}

/** Where a folder purge walk stands: the last trashed root it selected, in `(trashed_at, id)` order. */
export interface TrashFolderCursor {
  /** `trashed_at` as the database prints it (a `Date` would drop its microseconds and repeat the row). */
  readonly trashedAt: string;
  readonly id: string;
}

/** What one folder purge batch did, and where the next one starts. */
export interface TrashFolderBatch extends TrashPurgeBatch {
  /**
   * Trashed roots left in place because a folder or file below them is not
   * trashed (live): purging them would delete live data.
   */
  readonly skippedLiveDescendants: readonly string[];
  /** Pass to the next call; `null` when nothing was selected. */
  readonly next: TrashFolderCursor | null;
}

/**
 * The storage the `trash_cleanup` tenant purges. Purging deletes rows; the
 * blob `ref_count` triggers then mark blobs orphaned and `dedup_gc` collects
 * the bytes later. Each call is one short transaction of at most `limit`
 * candidates, so a huge trash never holds one giant transaction.
 *
 * The rule: a live (not trashed) file or folder is never deleted, whatever
 * its ancestors are.
 */
export interface TrashRepository {
  /**
   * Selects up to `limit` trashed folders with `trashed_at < cutoff` in
   * `(trashed_at, id)` order, strictly after `after`, and deletes each
   * together with its whole subtree, unless something in that subtree is
   * not trashed: such a root is left whole and named in
   * `skippedLiveDescendants`. The subtree is locked before it is checked,
   * so no live row can move in (or be restored) between check and delete.
   */
  purgeFolderBatch(cutoff: Date, limit: number, after: TrashFolderCursor | null): Promise<TrashFolderBatch>;
  /** Deletes up to `limit` trashed files with `trashed_at < cutoff` (oldest first). */
  purgeFileBatch(cutoff: Date, limit: number): Promise<TrashPurgeBatch>;
}
