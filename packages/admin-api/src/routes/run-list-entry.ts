import type { z } from '@hono/zod-openapi';
import type { RunSummary } from '@oxicloud/recoverable';
import { boundedJsonObject, fitString } from './bounded-json.js';
import type { RunListEntrySchema } from './schemas.js';

/** One run as listings show it (`GET /api/admin/jobs` `latest_run`, `GET …/runs`). */
export type RunListEntryJson = z.infer<typeof RunListEntrySchema>;

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
} as const;

/**
 * The listing entry of a run: its fields, with `params` replaced by a bounded
 * `params_summary`, `stats`, `error_message`, `pause_reason` and `cursor_hex`
 * bounded, the pause history left to the run detail, and `truncated` =
 * whether anything was cut.
 */
export function runListEntry(run: RunSummary): RunListEntryJson {
  const budget = RUN_LIST_ENTRY_BUDGET;
  const params = boundedJsonObject(run.params, budget.paramsBytes);
  const stats = boundedJsonObject(run.stats, budget.statsBytes);
  const error =
    run.error_message === null ? null : fitString(run.error_message, 200, budget.errorMessageBytes);
  const pauseReason =
    run.pause_reason === null ? null : fitString(run.pause_reason, 200, budget.errorMessageBytes);
  const cursorCut = run.cursor_hex !== null && run.cursor_hex.length > budget.cursorHexChars;
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
    active_ms: run.active_ms,
    wall_ms: run.wall_ms,
    progress: { ...run.progress },
    truncated:
      params.truncated ||
      stats.truncated ||
      (error?.cut ?? false) ||
      (pauseReason?.cut ?? false) ||
      cursorCut,
  };
}
