import type { Logger } from '@oxicloud/scheduler';
import { pino } from 'pino';
import pinoPretty, { prettyFactory } from 'pino-pretty';
import type { LogFormat, LogLevel } from './config/server-config.js';

/** The `target` of the server's own lines (boot, shutdown, database). */
export const SERVER_TARGET = 'oxicloud::server';

/**
 * The format to write: the configured one (`OXICLOUD_LOG_FORMAT`), else
 * readable lines when the destination is a terminal and JSON lines when it
 * is a file or a pipe.
 */
export function resolveLogFormat(configured: LogFormat | undefined, fd: 1 | 2): LogFormat {
  if (configured !== undefined) return configured;
  return (fd === 1 ? process.stdout : process.stderr).isTTY ? 'pretty' : 'json';
}

/**
 * The process logger: pino, to stdout for `serve` and to stderr for the
 * other commands (their stdout is for results, e.g. the token). JSON lines
 * with an ISO `time` and every field for files and pipes; at a terminal one
 * readable, coloured line per event: time, level and the message only (the
 * fields, an error's stack included, stay for JSON mode; a line without a
 * message shows its `event`), written synchronously by pino-pretty so the
 * last line before an exit is never lost. A pino logger satisfies the
 * packages' `Logger` interface.
 */
export function createLogger(options: {
  level: LogLevel;
  destination: 'stdout' | 'stderr';
  /** @defaultValue auto: pretty at a terminal, JSON otherwise */
  format?: LogFormat | undefined;
  /**
   * Where each formatted line goes instead of the destination itself (which
   * still decides the format and colours): `oxijobs seed` prints the lines
   * above its progress bar this way. Called synchronously, one line a call.
   */
  sink?: ((line: string) => void) | undefined;
}): Logger & {
  flush(): void;
} {
  const fd = options.destination === 'stdout' ? 1 : 2;
  const format = resolveLogFormat(options.format, fd);
  const prettyOptions = {
    colorize: (fd === 1 ? process.stdout : process.stderr).isTTY === true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service,target',
    // The message only: the fields (and an error's stack) are the JSON mode's detail.
    hideObject: true,
    messageFormat: (log: Record<string, unknown>, messageKey: string) => {
      const message = log[messageKey];
      if (typeof message === 'string' && message !== '') return message;
      return typeof log['event'] === 'string' ? log['event'] : '';
    },
  };
  const sink = options.sink;
  let stream: pino.DestinationStream;
  if (sink !== undefined) {
    const pretty = format === 'pretty' ? prettyFactory(prettyOptions) : undefined;
    stream = {
      write: (line: string) => {
        const text = pretty ? pretty(line) : line;
        sink(text.endsWith('\n') ? text : `${text}\n`);
      },
    };
  } else {
    stream =
      format === 'pretty'
        ? pinoPretty({ destination: fd, sync: true, ...prettyOptions })
        : pino.destination({ dest: fd, sync: true });
  }
  return pino(
    {
      level: options.level,
      base: { service: 'oxicloud-jobs', pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    stream as pino.DestinationStream,
  );
}
