import type { Selectable } from 'kysely';
import type { RecoverableRunsTable } from './db/recoverable-runs-table.js';
import { isRunStatus, type RunStatus } from './run-status.js';

/**
 * One row of `jobs.recoverable_runs`, as the engine reads it. `stats` and
 * `params` are kept as stored (`unknown`): a row may have been edited by hand
 * or written by an older version, and the engine checks their shape before a
 * run uses them (see `describeCorruption`).
 */
export interface RunRecord {
  readonly runId: string;
  readonly jobName: string;
  readonly status: RunStatus;
  readonly startedAt: Date;
  readonly lastProgressAt: Date;
  readonly completedAt: Date | null;
  readonly cursor: Uint8Array | null;
  readonly stats: unknown;
  readonly params: unknown;
  /** The message of a Failed run (older rows may carry one on other statuses). */
  readonly errorMessage: string | null;
  /** 1 on start, +1 on every resume. */
  readonly attempt: number;
  /** When the current attempt (start or resume) began. */
  readonly attemptStartedAt: Date;
  /** Why and when the run was paused, oldest first (as stored; checked by {@link readPauses}). */
  readonly pauses: unknown;
  /** Milliseconds run in finished running segments. */
  readonly activeMs: number;
  /** Start of the current running segment, `null` when not running. */
  readonly runningSince: Date | null;
  /** The node executing the run, or the last one that did; `null` on rows older than schema version 4. */
  readonly ownerNode: string | null;
  /** When the owner's lease ends (database clock); `null` while the run is not executing. */
  readonly leaseUntil: Date | null;
}

/** One entry of a run's pause history. */
export interface RunPause {
  /** ISO 8601. */
  readonly at: string;
  readonly reason: string;
}

/** The well-formed entries of a stored pause history. */
export function readPauses(value: unknown): RunPause[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((p: unknown) =>
    isJsonObject(p) && typeof p['at'] === 'string' && typeof p['reason'] === 'string'
      ? [{ at: p['at'], reason: p['reason'] }]
      : [],
  );
}

/** Maps a selected row to a {@link RunRecord}. An unknown status string reads as `Failed`, with a note. */
export function toRunRecord(row: Selectable<RecoverableRunsTable>): RunRecord {
  const known = isRunStatus(row.status);
  return {
    runId: row.id,
    jobName: row.job_name,
    status: known ? (row.status as RunStatus) : 'Failed',
    startedAt: row.started_at,
    lastProgressAt: row.last_progress_at,
    completedAt: row.completed_at,
    cursor: row.cursor === null ? null : new Uint8Array(row.cursor),
    stats: row.stats,
    params: row.params,
    errorMessage: known
      ? row.error_message
      : (row.error_message ?? `corrupted row: unknown status ${JSON.stringify(row.status)}`),
    attempt: row.attempt ?? 1,
    attemptStartedAt: row.attempt_started_at ?? row.started_at,
    pauses: row.pauses,
    activeMs: Math.max(0, Number(row.active_ms) || 0),
    runningSince: row.running_since ?? null,
    ownerNode: row.owner_node ?? null,
    leaseUntil: row.lease_until ?? null,
  };
}

/** `true` for a JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const NUMERIC_STATS = ['count', 'scanned_count', 'total_estimate'] as const;

/**
 * Checks that a stored row has the shape a run needs: `params` and `stats`
 * JSON objects, the engine's numeric stats finite and non-negative, the
 * progress history well formed. Returns what is wrong, or `null`.
 */
export function describeCorruption(record: RunRecord): string | null {
  if (!isJsonObject(record.params)) {
    return `params must be a JSON object, found ${describeJson(record.params)}`;
  }
  if (!isJsonObject(record.stats)) {
    return `stats must be a JSON object, found ${describeJson(record.stats)}`;
  }
  for (const key of NUMERIC_STATS) {
    const value = record.stats[key];
    if (value !== undefined && value !== null && !isCount(value)) {
      return `stats.${key} must be a non-negative number, found ${describeJson(value)}`;
    }
  }
  const samples = record.stats['progress_samples'];
  if (samples !== undefined && !isSampleList(samples)) {
    return `stats.progress_samples must be a list of [epoch_ms, processed] pairs, found ${describeJson(samples)}`;
  }
  return null;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

function isSampleList(value: unknown): boolean {
  return (
    Array.isArray(value) &&
    value.every((s) => Array.isArray(s) && s.length >= 2 && isCount(s[0]) && isCount(s[1]))
  );
}

function describeJson(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
