import { err, type JobOutcome, ok } from '@oxicloud/scheduler';
import { completed, failed, paused, type RunOutcome } from './run-outcome.js';
import type { RunSummary } from './run-summary.js';
import { toHex } from './run-summary.js';

/**
 * The `RunOutcome` → `JobOutcome` bridge: completed → ok(count, { completed,
 * run_id }); paused → ok(count, { paused, cursor_hex, run_id }); failed →
 * err(message). `count` is the run's accumulated `stats.count`.
 */
export function toJobOutcome(outcome: RunOutcome, count: number, runId: string): JobOutcome {
  switch (outcome.kind) {
    case 'completed':
      return ok(count, { completed: true, run_id: runId });
    case 'paused':
      return ok(count, { paused: true, cursor_hex: toHex(outcome.cursor), run_id: runId });
    case 'failed':
      return err(outcome.message);
  }
}

/**
 * The bridged outcome of a run that has ended (Completed, Paused or
 * Failed), read back from its summary: what `runOrResume` returned for it.
 * `null` while the run is active. For listings that show a recoverable job's
 * last outcome beside Part 1 jobs'.
 */
export function outcomeOfRun(run: RunSummary): JobOutcome | null {
  const count = typeof run.stats['count'] === 'number' ? run.stats['count'] : 0;
  switch (run.status) {
    case 'Completed':
      return toJobOutcome(completed(), count, run.run_id);
    case 'Paused':
      return toJobOutcome(paused(Buffer.from(run.cursor_hex ?? '', 'hex')), count, run.run_id);
    case 'Failed':
      return toJobOutcome(failed(run.error_message ?? 'run failed'), count, run.run_id);
    default:
      return null;
  }
}
