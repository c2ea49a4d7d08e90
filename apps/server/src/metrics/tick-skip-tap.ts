import type { Logger } from '@oxicloud/scheduler';

/**
 * A logger that passes every line on and calls `onTickSkipped(job)` for each
 * `job.tick_skipped` line the scheduler writes: the plan's log event is the
 * one signal of a missed slot, so the metric counts exactly what the log says.
 */
export function tickSkipTap(logger: Logger, onTickSkipped: (job: string) => void): Logger {
  const watch = (fields: object) => {
    const f = fields as { event?: unknown; job?: unknown };
    if (f.event === 'job.tick_skipped' && typeof f.job === 'string') onTickSkipped(f.job);
  };
  return {
    info: (fields, message) => logger.info(fields, message),
    warn: (fields, message) => {
      watch(fields);
      logger.warn(fields, message);
    },
    error: (fields, message) => logger.error(fields, message),
    debug: (fields, message) => logger.debug(fields, message),
  };
}
