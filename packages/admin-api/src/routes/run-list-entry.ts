import type { RunSummary } from '@oxicloud/recoverable';
import { boundedJsonObject, fitString } from './bounded-json.js';
import type { RunListEntryJson } from './wire-types.js';

export type { RunListEntryJson };

/**
 * How much of a run a listing entry carries, in bytes of JSON: with these a
 * page of 500 runs (the most `GET …/runs` answers) stays under 1 MiB whatever
 * the stored rows hold. The run detail (`GET …/runs/{id}`) has everything.
 */
export const RUN_LIST_ENTRY_BUDGET = {
  /** `params_summary`. */
  paramsBytes: 256,
  /** `stats`. */
  statsBytes: 512,
  /** `error_message`. */
  errorMessageBytes: 300,
  /** `cursor_hex`, in characters (80 cursor bytes; real cursors are at most 33). */
  cursorHexChars: 160,
  /** How many of the newest `pauses` a listing shows. */
  pauses: 1,
  /** `pause_reason` and each listed pause's `reason`, in bytes of JSON (at most 80 characters). */
  pauseReasonBytes: 100,
} as const;

/**
 * The listing entry of a run: its fields, with `params` replaced by a bounded
 * `params_summary`, `stats`, `error_message` and `cursor_hex` bounded, and
 * `truncated` = whether anything was cut.
 */
export function runListEntry(run: RunSummary): RunListEntryJson {
  const budget = RUN_LIST_ENTRY_BUDGET;
  const params = boundedJsonObject(run.params, budget.paramsBytes);
  const stats = boundedJsonObject(run.stats, budget.statsBytes);
  const error =
    run.error_message === null ? null : fitString(run.error_message, 200, budget.errorMessageBytes);
  const cursorCut = run.cursor_hex !== null && run.cursor_hex.length > budget.cursorHexChars;
  const reason = (text: string) => fitString(text, 80, budget.pauseReasonBytes);
  const pauseReason = run.pause_reason === null ? null : reason(run.pause_reason);
  const pauses = run.pauses.slice(-budget.pauses).map((p) => ({ at: p.at, reason: reason(p.reason) }));
  const pausesCut =
    run.pauses.length > budget.pauses || pauses.some((p) => p.reason.cut) || (pauseReason?.cut ?? false);
  return {
    run_id: run.run_id,
    job_name: run.job_name,
    status: run.status,
    started_at: run.started_at,
    last_progress_at: run.last_progress_at,
    completed_at: run.completed_at,
    cursor_hex: cursorCut ? `${run.cursor_hex?.slice(0, budget.cursorHexChars)}…` : run.cursor_hex,
    stats: stats.value,
    params_summary: params.value,
    error_message: error === null ? null : error.text,
    pause_reason: pauseReason === null ? null : pauseReason.text,
    pauses: pauses.map((p) => ({ at: p.at, reason: p.reason.text })),
    active_ms: run.active_ms,
    wall_ms: run.wall_ms,
    owner_node: run.owner_node,
    attempt: run.attempt,
    lease_until: run.lease_until,
    progress: { ...run.progress },
    truncated: params.truncated || stats.truncated || (error?.cut ?? false) || cursorCut || pausesCut,
  };
}
