import { type JobOutcome, type Logger, logJobRun } from '@oxicloud/scheduler';
import type { AcquiredRun } from './acquire-run.js';

/** Log target of the engine's own lines (run start, boot sweep, hook failures). */
export const RECOVERABLE_TARGET = 'oxicloud::recoverable';

/**
 * The `job.run` line, in the scheduler's schema: `target`, `event`, `job`,
 * `outcome` (`ok` | `err`), `count`, `cause` + `error` on err, `elapsed_ms`,
 * `source`, then the outcome's `extra` flattened (`completed`, `paused`,
 * `cursor_hex`, `skipped`, `run_id`).
 */
export function logRunLine(
  log: Logger,
  job: string,
  runId: string,
  outcome: JobOutcome,
  elapsedMs: number,
  source: 'tick' | 'trigger' = 'trigger',
): void {
  logJobRun(log, { job, outcome, elapsedMs, source, runId });
}

/** The engine's info line when a run starts or resumes. */
export function logRunStart(log: Logger, job: string, acquired: AcquiredRun): void {
  log.info(
    {
      target: RECOVERABLE_TARGET,
      event: acquired.kind === 'resumed' ? 'run.resumed' : 'run.started',
      job,
      run_id: acquired.record.runId,
    },
    `${job} run ${acquired.record.runId} ${acquired.kind}`,
  );
}
