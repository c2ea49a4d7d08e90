import type { JobOutcome } from './job-handler.js';
import type { Logger } from './logger.js';

/** The log target of both engines' `job.run` and `job.tick_skipped` lines. */
export const SCHEDULER_TARGET = 'oxicloud::scheduler';

/** Field names of the `job.run` line an `extra` key may not overwrite (it is logged as `extra_<key>`). */
const RESERVED_LOG_KEYS = new Set([
  'target',
  'event',
  'job',
  'outcome',
  'cause',
  'count',
  'elapsed_ms',
  'error',
  'source',
  'msg',
  'level',
  'time',
]);

/** What one `job.run` line says. */
export interface JobRunLine {
  readonly job: string;
  readonly outcome: JobOutcome;
  /** Why an err outcome failed (`handler`, `timeout`, `panicked`); ignored on ok. */
  readonly cause?: string | undefined;
  readonly elapsedMs: number;
  readonly source: 'tick' | 'trigger';
  /** The recoverable run, for Part 2 jobs. */
  readonly runId?: string | undefined;
}

/**
 * Logs the one line per run of the plan's logging schema, for Part 1 and
 * Part 2 alike: target `oxicloud::scheduler`, event `job.run`, outcome,
 * cause (err only), count, elapsed_ms, and the outcome's `extra` flattened.
 */
export function logJobRun(logger: Logger, line: JobRunLine): void {
  const { job, outcome } = line;
  const fields: Record<string, unknown> = {
    target: SCHEDULER_TARGET,
    event: 'job.run',
    job,
    outcome: outcome.kind,
  };
  if (outcome.kind === 'ok') {
    fields['count'] = outcome.count;
  } else {
    fields['cause'] = line.cause ?? 'handler';
    fields['count'] = 0;
    fields['error'] = outcome.message;
  }
  fields['elapsed_ms'] = line.elapsedMs;
  fields['source'] = line.source;
  if (line.runId !== undefined) fields['run_id'] = line.runId;
  if (outcome.kind === 'ok') {
    for (const [key, value] of Object.entries(outcome.extra)) {
      fields[RESERVED_LOG_KEYS.has(key) ? `extra_${key}` : key] = value;
    }
  }
  logger.info(fields, jobRunMessage(line));
}

/**
 * The `job.run` line's message, the whole of it in a readable log: `job X: ok,
 * count 7 (25 ms)`, `… paused at 0000001e`, `… skipped: already_running`, or
 * `job X failed (handler): <message> (120 ms)`.
 */
function jobRunMessage(line: JobRunLine): string {
  const { job, outcome, elapsedMs } = line;
  if (outcome.kind === 'err')
    return `job ${job} failed (${line.cause ?? 'handler'}): ${outcome.message} (${elapsedMs} ms)`;
  const extra = outcome.extra;
  if (typeof extra['skipped'] === 'string') return `job ${job}: skipped: ${extra['skipped']}`;
  const state =
    extra['paused'] === true
      ? `paused${typeof extra['cursor_hex'] === 'string' ? ` at ${extra['cursor_hex']}` : ''}, `
      : '';
  return `job ${job}: ok, ${state}count ${outcome.count} (${elapsedMs} ms)`;
}
