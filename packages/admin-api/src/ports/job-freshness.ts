/** A job held to a cadence that has no success within 1.5 times it. */
export interface OverdueJob {
  readonly job: string;
  /** `true` for a deep cadence (deep `storage_consistency` runs). */
  readonly deep: boolean;
  /** The expected cadence, ms. */
  readonly max_age_ms: number;
  /** ISO 8601 of the last success counted for this cadence; `null` = never. */
  readonly last_success_at: string | null;
  /** ISO 8601: last success (else first registration) + 1.5 × the cadence. */
  readonly overdue_since: string;
}

/**
 * The port the jobs listing asks for freshness: the jobs overdue now. The
 * server's freshness monitor answers from the database (shared by every node).
 */
export interface JobFreshness {
  overdue(): Promise<readonly OverdueJob[]>;
}
