import type {
  CheckHealth,
  DecisionInput,
  FindingDecision,
  FindingDetailView,
  LedgerListOptions,
  LedgerPage,
  RunChanges,
  TrackedFindingView,
} from '@oxicloud/consistency';

/**
 * The port `/api/admin/findings` reads and writes: findings across runs
 * (`PgFindingLedger` of `@oxicloud/consistency` satisfies it as it is).
 *
 * @example
 * ```ts
 * const app = createAdminApp({ …, ledger: new PgFindingLedger({ pool }) });
 * ```
 */
export interface FindingsLedger {
  /** One keyset page: worst severity first, then most recently seen, then id. */
  list(options: LedgerListOptions): Promise<LedgerPage>;
  /** A finding with its state changes and the runs that saw it; `null` when none. */
  get(id: string): Promise<FindingDetailView | null>;
  /** accept / false_positive / reopen, with the actor and comment (audited). */
  decide(id: string, decision: FindingDecision, input: DecisionInput): Promise<TrackedFindingView>;
  /** What a run found new (reopened, worse) and what it fixed. */
  runChanges(runId: string, options?: { readonly limit?: number }): Promise<RunChanges>;
  /** Per check: last completed run, open by severity, new and fixed, trend. */
  health(checks: readonly string[], options?: { readonly trendRuns?: number }): Promise<CheckHealth[]>;
}
