/** One corrected usage counter. */
export interface UsageCorrection {
  /** Drive id or user id. */
  readonly id: string;
  readonly kind: 'drive' | 'user';
  /** Stored value before the correction, in bytes. */
  readonly before: number;
  /** Recomputed value written, in bytes. */
  readonly after: number;
  /** `after - before`. */
  readonly delta: number;
}

/** Result of one set-based reconcile statement. */
export interface UsageReconcileResult {
  /** Rows whose stored value differed and was rewritten. */
  readonly corrected: number;
  /** Up to `top` corrections with the largest `|delta|`, largest first. */
  readonly largest: readonly UsageCorrection[];
}

/**
 * The usage counters the `storage_reconcile` tenant recomputes. Each call is
 * one set-based statement that rewrites only the rows that differ.
 */
export interface UsageRepository {
  /**
   * `drives.used_bytes := SUM(files.size)` over the files the domain counts
   * (OxiCloud's: live files only, trashed not counted; the deprecated engine
   * model: trashed included).
   */
  reconcileDriveUsage(top: number): Promise<UsageReconcileResult>;
  /**
   * `users.storage_used_bytes := SUM(drives.used_bytes)` over the user's
   * drives (OxiCloud's: the personal drives it owns; run after drives).
   */
  reconcileUserUsage(top: number): Promise<UsageReconcileResult>;
}
