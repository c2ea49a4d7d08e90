/** A blob row with `ref_count = 0` whose `orphaned_at` is older than the cutoff (or a row already marked). */
export interface OrphanBlobCandidate {
  readonly hash: string;
  readonly size: number;
  readonly orphanedAt: Date | null;
}

/** What {@link OrphanBlobRepository.markForDeletion} decided for the hashes it was given. */
export interface OrphanMarkResult {
  /** Rows now marked as being deleted (committed): no file can reference them any more. */
  readonly marked: readonly OrphanBlobCandidate[];
  /**
   * Rows whose `ref_count` said 0 (and grace passed) but which rows of
   * `storage.files` still reference: the counter is wrong. Not marked, nothing deleted.
   */
  readonly referenced: readonly string[];
}

/** What {@link OrphanBlobRepository.finishDeletion} did with the marked hashes it was given. */
export interface OrphanFinishResult {
  /** Marked rows that were locked (a hash missing here was revived, or is already gone). */
  readonly locked: readonly OrphanBlobCandidate[];
  /** Hashes whose row was deleted (their bytes were reported gone by the callback). */
  readonly deleted: readonly string[];
  /** Marked rows that files reference after all: unmarked, nothing deleted. */
  readonly referenced: readonly string[];
}

/**
 * The blob index the `dedup_gc` tenant collects from, with the deletion
 * protocol of migration `0007_blob_deletion_protocol.sql`:
 *
 * 1. {@link markForDeletion}: under the row lock, confirm `ref_count = 0`,
 *    the grace, and that no file references the hash; mark the row
 *    (`deleting_at`); commit. From then on the database refuses any new file
 *    reference to it (SQLSTATE `OXB01`).
 * 2. {@link finishDeletion}: with the marked rows locked, delete the bytes,
 *    then the rows.
 *
 * A crash between the steps leaves rows marked; {@link listMarked} finds
 * them and the next run finishes them. Never a live file without bytes.
 */
export interface OrphanBlobRepository {
  /** Up to `limit` unmarked candidates in ascending hash order, strictly after `after` when given. */
  listOrphanCandidates(
    cutoff: Date,
    options: { readonly after: string | null; readonly limit: number },
  ): Promise<OrphanBlobCandidate[]>;
  /** Up to `limit` rows left marked as being deleted, in hash order, strictly after `after`. */
  listMarked(options: {
    readonly after: string | null;
    readonly limit: number;
  }): Promise<OrphanBlobCandidate[]>;
  /**
   * Step 1, one transaction: locks those of `hashes` that are still
   * unmarked orphans older than `cutoff` (`SELECT … FOR UPDATE`, hash
   * order), looks each up in the files index (a separate statement, so it
   * sees every file committed before the lock), marks the unreferenced ones,
   * commits. A hash that gained a reference meanwhile is not locked and is
   * left alone.
   */
  markForDeletion(hashes: readonly string[], cutoff: Date): Promise<OrphanMarkResult>;
  /**
   * Steps 2 and 3, one transaction: locks those of `hashes` that are still
   * marked, unmarks any that files reference after all, calls `deleteBytes`
   * with the rest while the locks are held, deletes the rows of the hashes
   * it returns (bytes gone), commits. If `deleteBytes` rejects, the
   * transaction rolls back (rows stay marked) and the rejection propagates.
   */
  finishDeletion(
    hashes: readonly string[],
    deleteBytes: (locked: readonly OrphanBlobCandidate[]) => Promise<readonly string[]>,
  ): Promise<OrphanFinishResult>;
}
