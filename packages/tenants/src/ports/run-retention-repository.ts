/**
 * The port `run_retention` prunes through (`PgRunRetention` of
 * `@oxicloud/consistency` satisfies it). Each call is one transaction: a
 * kill -9 between two calls leaves whole batches only.
 */
export interface RunRetentionRepository {
  /**
   * Deletes up to `limit` terminal runs that ended before `cutoff` with
   * their per-run findings, keeping each job's latest completed run and
   * every run a non-fixed finding still names.
   */
  pruneRuns(
    cutoff: Date,
    limit: number,
  ): Promise<{ readonly runs: readonly { readonly runId: string; readonly job: string }[] }>;
  /** Deletes up to `limit` fixed findings fixed before `cutoff`; resolves with how many. */
  pruneFixedFindings(cutoff: Date, limit: number): Promise<number>;
}
