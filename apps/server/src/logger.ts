import type { Logger } from '@oxicloud/scheduler';
import { pino } from 'pino';
import type { LogLevel } from './config/server-config.js';

/** The `target` of the server's own lines (boot, shutdown, database). */
export const SERVER_TARGET = 'oxicloud::server';

/**
 * The process logger: pino, JSON lines with an ISO `time`, to stdout for
 * `serve` and to stderr for the other commands (their stdout is for results,
 * e.g. the token). A pino logger satisfies the packages' `Logger` interface.
 */
export function createLogger(options: { level: LogLevel; destination: 'stdout' | 'stderr' }): Logger & {
  flush(): void;
} {
  return pino(
    {
      level: options.level,
      base: { service: 'oxicloud-jobs', pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    pino.destination({ dest: options.destination === 'stdout' ? 1 : 2, sync: true }),
  );
}
