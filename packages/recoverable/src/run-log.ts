import { type JobOutcome, type Logger, logJobRun } from '@oxicloud/scheduler';
import type { AcquiredRun } from './acquire-run.js';
import { paramsText } from './params-not-applied.js';
import { isJsonObject } from './run-record.js';

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

/**
 * The engine's info line when a run starts or resumes. A resumed run says
 * which params it uses (its stored ones) and, when the trigger asked for
 * others, that those were not applied.
 */
export function logRunStart(
  log: Logger,
  job: string,
  acquired: AcquiredRun,
  notApplied: Readonly<Record<string, unknown>> = {},
): void {
  const runId = acquired.record.runId;
  if (acquired.kind !== 'resumed') {
    log.info(
      { target: RECOVERABLE_TARGET, event: 'run.started', job, run_id: runId },
      `${job} run ${runId} started`,
    );
    return;
  }
  const params = isJsonObject(acquired.record.params) ? acquired.record.params : {};
  const ignored = Object.keys(notApplied).length > 0;
  log.info(
    {
      target: RECOVERABLE_TARGET,
      event: 'run.resumed',
      job,
      run_id: runId,
      params,
      ...(ignored ? { params_not_applied: notApplied } : {}),
    },
    `${job} run ${runId} resumed with its stored params ${paramsText(params)}${
      ignored ? `; not applied: ${paramsText(notApplied)} (a resume keeps the stored params)` : ''
    }`,
  );
}
