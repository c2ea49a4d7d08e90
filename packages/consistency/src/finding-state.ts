import { severityRank } from './severity.js';

/**
 * The states a finding lives through across runs:
 *
 * - `open`: reported, nobody decided anything yet.
 * - `fixed`: a `Completed` run of its check examined the resource and found it
 *   consistent (positive evidence, see `PgFindingLedger.closeRun`), or the
 *   resource is gone.
 * - `reopened`: fixed once, reported again.
 * - `accepted`: an operator lives with it (optionally until `accept_until`);
 *   open again when it gets worse or the acceptance expires.
 * - `false_positive`: an operator says the check is wrong here; never mailed,
 *   never closed or reopened by a run.
 */
export const FINDING_STATES = ['open', 'fixed', 'reopened', 'accepted', 'false_positive'] as const;
export type FindingState = (typeof FINDING_STATES)[number];

/** `true` when `value` is one of {@link FINDING_STATES}. */
export function isFindingState(value: unknown): value is FindingState {
  return typeof value === 'string' && (FINDING_STATES as readonly string[]).includes(value);
}

/** What a run's report changed about a finding (`jobs.run_findings.change`); `null` when nothing. */
export type FindingChange = 'new' | 'reopened' | 'worse' | 'expired';

/** The changes a findings mail lists. */
export const MAILED_CHANGES: readonly FindingChange[] = ['new', 'reopened', 'worse', 'expired'];

/** The part of a stored finding a new report is judged against. */
export interface FindingBefore {
  readonly state: FindingState;
  readonly lastSeenRunId: string | null;
  readonly firstSeenRunId: string | null;
  readonly highestSeverity: string;
  readonly acceptUntil: Date | null;
  readonly acceptedSeverity: string | null;
  readonly acceptedMagnitude: number | null;
}

/** The state after a report, and what changed. */
export interface FindingTransition {
  readonly state: FindingState;
  readonly change: FindingChange | null;
}

/**
 * `true` when a report is worse than the baseline: a higher severity, or a
 * magnitude (absolute) at least double the baseline's.
 */
export function isWorse(
  baseline: { readonly severity: string | null; readonly magnitude: number | null },
  now: { readonly severity: string; readonly magnitude: number | null },
): boolean {
  if (baseline.severity !== null && severityRank(now.severity) < severityRank(baseline.severity)) return true;
  if (baseline.magnitude === null || now.magnitude === null) return false;
  const before = Math.abs(baseline.magnitude);
  const after = Math.abs(now.magnitude);
  return after > 0 && after >= 2 * before;
}

/**
 * The rule for a finding reported by run `runId` (`before` = its row, `null`
 * when never seen): new → `open`; `fixed` → `reopened`; `accepted` whose
 * acceptance expired → `open` (`expired`), or that got worse than when it was
 * accepted → `open` (`worse`); `open`, `reopened`, `false_positive` stay.
 * A report from the run that already reported it changes nothing (a replayed
 * or re-recorded batch).
 */
export function transitionOnReport(
  before: FindingBefore | null,
  runId: string,
  report: { readonly severity: string; readonly magnitude: number | null },
  now: Date,
): FindingTransition {
  if (before === null) return { state: 'open', change: 'new' };
  if (before.lastSeenRunId === runId) {
    return { state: before.state, change: before.firstSeenRunId === runId ? 'new' : null };
  }
  switch (before.state) {
    case 'fixed':
      return { state: 'reopened', change: 'reopened' };
    case 'accepted':
      if (before.acceptUntil !== null && before.acceptUntil.getTime() <= now.getTime()) {
        return { state: 'open', change: 'expired' };
      }
      if (
        isWorse(
          {
            severity: before.acceptedSeverity ?? before.highestSeverity,
            magnitude: before.acceptedMagnitude,
          },
          report,
        )
      ) {
        return { state: 'open', change: 'worse' };
      }
      return { state: 'accepted', change: null };
    default:
      return { state: before.state, change: null };
  }
}

/** The worse of two severities. */
export function worstSeverity(a: string, b: string): string {
  return severityRank(a) <= severityRank(b) ? a : b;
}
