import type { FindingCount, ListFindingsOptions, StoredFinding } from '@oxicloud/consistency';

/**
 * The port `GET /api/admin/jobs/{name}/runs/{id}/findings` reads: one page of
 * a run's findings in triage order (severity DataLoss, Reclaimable,
 * Regenerable, Drift; then impact: a `missing_blob` referenced by more files /
 * bytes first; then discovery order), and the counts per `(kind, severity)`.
 * `PgFindingStore` from `@oxicloud/consistency` satisfies it as it is.
 *
 * @example
 * ```ts
 * const app = createAdminApp({ …, runs: engine, findings: new PgFindingStore({ pool }) });
 * ```
 */
export interface FindingsReader {
  /** One page of the run's findings, filtered by `severity` / `kind`, in triage order. */
  list(runId: string, options?: ListFindingsOptions): Promise<StoredFinding[]>;
  /** Counts per `(kind, severity)` of the whole run, worst severity first. */
  summarize(runId: string): Promise<FindingCount[]>;
}
