/** A blob row with `ref_count = 0` whose `orphaned_at` is older than the cutoff. */
export interface OrphanBlobCandidate {
  readonly hash: string;
  readonly size: number;
  readonly orphanedAt: Date;
}

/** What {@link OrphanBlobRepository.collectOrphans} did with the hashes it was given. */
export interface OrphanCollectResult {
  /** Rows that were still orphans past the cutoff and were locked (current size). */
  readonly locked: readonly OrphanBlobCandidate[];
  /** Hashes whose row was deleted (their bytes were reported gone by the callback). */
  readonly deleted: readonly string[];
}

/**
 * The blob index the `dedup_gc` tenant collects from.
 *
 * The race that matters: a file insert references a blob while GC is
 * deciding. Candidates are only a hint; {@link collectOrphans} re-checks
 * `ref_count = 0 AND orphaned_at < cutoff` under a row lock, so a file
 * insert whose trigger bumps `ref_count` either committed first (the blob is
 * not locked, so kept) or waits on the lock until the row is gone.
 */
export interface OrphanBlobRepository {
  /** Up to `limit` candidates in ascending hash order, strictly after `after` when given. */
  listOrphanCandidates(
    cutoff: Date,
    options: { readonly after: string | null; readonly limit: number },
  ): Promise<OrphanBlobCandidate[]>;
  /**
   * In one transaction: locks those of `hashes` that are still orphans older
   * than `cutoff` (`SELECT … FOR UPDATE`), calls `deleteBytes` with them while
   * the locks are held, deletes the rows of the hashes it returns (those
   * whose bytes are gone), commits. A hash not locked gained a reference (or
   * is already gone) and is left alone. If `deleteBytes` rejects, the
   * transaction rolls back and the rejection propagates.
   */
  collectOrphans(
    hashes: readonly string[],
    cutoff: Date,
    deleteBytes: (locked: readonly OrphanBlobCandidate[]) => Promise<readonly string[]>,
  ): Promise<OrphanCollectResult>;
}
