/**
 * One page of a keyset walk that a consistency scan port returns: how many
 * rows it examined, the last key it reached, and ONLY the anomalies among
 * them. Comparing in SQL and sending the anomalies plus the last key, instead
 * of every row, is what makes a million-row scan cheap (PERFORMANCE.md).
 */
export interface ScanPage<Anomaly, Key = string> {
  /** Rows examined (0 when the walk is past its last row). */
  readonly scanned: number;
  /** The key of the last row examined; `null` when the page was empty. */
  readonly lastKey: Key | null;
  /** Rows of this page that look inconsistent (Pass 1, young rows already excluded). */
  readonly anomalies: readonly Anomaly[];
}
