import { computeProgress, type RunProgress } from './progress.js';
import { isJsonObject, type RunPause, type RunRecord, readPauses } from './run-record.js';
import type { RunStatus } from './run-status.js';

/** Keys of `stats` that only feed {@link RunProgress}; left out of {@link RunSummary.stats}. */
const PROGRESS_KEYS = new Set(['progress_samples', 'progress_resumed_at_ms']);

/**
 * One run as the admin surface shows it (`GET /api/admin/jobs/{name}/runs`
 * and `…/runs/{id}`). JSON-ready: times are ISO 8601 strings.
 */
export interface RunSummary {
  readonly run_id: string;
  readonly job_name: string;
  readonly status: RunStatus;
  readonly started_at: string;
  readonly last_progress_at: string;
  readonly completed_at: string | null;
  /** The stored cursor as lowercase hex, or `null` on a fresh run. */
  readonly cursor_hex: string | null;
  /** Job-specific counters; `count` mirrors `JobOutcome.ok.count`, `scanned_count` the items examined. */
  readonly stats: Readonly<Record<string, unknown>>;
  /** The run's params as stored: the job's own params and the run's options `force` and `deep`. */
  readonly params: Readonly<Record<string, unknown>>;
  /** The message of a Failed run; `null` otherwise (a pause is history, see {@link RunSummary.pauses}). */
  readonly error_message: string | null;
  /** Why the run is paused (the newest pause's reason) while it is Paused; `null` otherwise. */
  readonly pause_reason: string | null;
  /** Every pause of the run (the last 32), oldest first: when and why. */
  readonly pauses: readonly RunPause[];
  /** Milliseconds the run actually ran (paused time and server downtime left out). */
  readonly active_ms: number;
  /** Milliseconds from start to completion (or to now while not finished), everything included. */
  readonly wall_ms: number;
  /** The node executing the run, or the last one that did (`<host>:<pid>:<6 hex>`); `null` on rows older than the leases. */
  readonly owner_node: string | null;
  /** 1 on the run's start, +1 on every resume: the fence of its writes. */
  readonly attempt: number;
  /** When the owner's lease ends (database clock, ISO 8601); `null` while the run is not executing. */
  readonly lease_until: string | null;
  readonly progress: RunProgress;
}

/** Hex of a cursor. */
export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** Builds the {@link RunSummary} of a stored run. Never throws, whatever the row holds. */
export function toRunSummary(record: RunRecord, nowMs: number = Date.now()): RunSummary {
  const stats: Record<string, unknown> = {};
  if (isJsonObject(record.stats)) {
    for (const [key, value] of Object.entries(record.stats)) {
      if (!PROGRESS_KEYS.has(key)) stats[key] = value;
    }
  } else {
    stats['corrupted'] = record.stats;
  }
  const params = isJsonObject(record.params) ? record.params : { corrupted: record.params };
  const pauses = readPauses(record.pauses);
  return {
    run_id: record.runId,
    job_name: record.jobName,
    status: record.status,
    started_at: record.startedAt.toISOString(),
    last_progress_at: record.lastProgressAt.toISOString(),
    completed_at: record.completedAt?.toISOString() ?? null,
    cursor_hex: record.cursor === null ? null : toHex(record.cursor),
    stats,
    params,
    error_message: record.errorMessage,
    pause_reason: record.status === 'Paused' ? (pauses.at(-1)?.reason ?? null) : null,
    pauses,
    active_ms:
      record.activeMs +
      (record.runningSince === null ? 0 : Math.max(0, nowMs - record.runningSince.getTime())),
    wall_ms: Math.max(0, (record.completedAt?.getTime() ?? nowMs) - record.startedAt.getTime()),
    owner_node: record.ownerNode,
    attempt: record.attempt,
    lease_until: record.leaseUntil?.toISOString() ?? null,
    progress: computeProgress(record.stats, record.status),
  };
}
