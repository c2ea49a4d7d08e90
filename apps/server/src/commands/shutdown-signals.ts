import type { Logger } from '@oxicloud/scheduler';
import { SERVER_TARGET } from '../logger.js';

/** What asked the server to stop: a signal, or the launcher (scripts/oxijobs.mjs) going away. */
export type StopRequest = NodeJS.Signals | 'launcher gone';

/**
 * A SIGTERM or SIGINT this soon after the first stop request is a copy of it,
 * not a second request: a process manager signalling every process of a
 * service (systemd's `KillMode=control-group`, `kill -- -<pgid>`) reaches the
 * server directly and through pnpm and the wrapper within milliseconds. A
 * person's second Ctrl-C comes later.
 */
export const DUPLICATE_SIGNAL_WINDOW_MS = 1_000;

/**
 * Resolves at the first SIGTERM or SIGINT (or when the IPC channel to a
 * launcher that started this process closes). A second signal while shutting
 * down, more than {@link DUPLICATE_SIGNAL_WINDOW_MS} after the first request,
 * forces the exit: `onForce` runs (it must be synchronous, e.g. ask the
 * embedded Postgres to stop), then the process exits 1, as common servers do
 * on a second Ctrl-C. Signals inside the window are copies of the first and
 * change nothing.
 */
export function nextStopRequest(logger: Logger, onForce: () => void): Promise<StopRequest> {
  return new Promise((resolve) => {
    const first = (request: StopRequest) => {
      const at = Date.now();
      process.off('SIGTERM', first);
      process.off('SIGINT', first);
      process.off('disconnect', onDisconnect);
      const again = (signal: NodeJS.Signals) => {
        if (Date.now() - at < DUPLICATE_SIGNAL_WINDOW_MS) {
          logger.debug(
            { target: SERVER_TARGET, event: 'server.duplicate_signal', signal, first: request },
            `${signal} within ${DUPLICATE_SIGNAL_WINDOW_MS} ms of ${request}: the same stop request, still shutting down gracefully`,
          );
          return;
        }
        process.off('SIGTERM', again);
        process.off('SIGINT', again);
        logger.error(
          { target: SERVER_TARGET, event: 'server.forced_exit', signal },
          `${signal} again during shutdown: exiting now (runs still Running are marked Paused at the next boot)`,
        );
        onForce();
        process.exit(1);
      };
      process.on('SIGTERM', again);
      process.on('SIGINT', again);
      resolve(request);
    };
    const onDisconnect = () => first('launcher gone');
    process.on('SIGTERM', first);
    process.on('SIGINT', first);
    if (process.channel) {
      // The launcher holds the other end; it never keeps this process alive by itself.
      process.channel.unref();
      process.on('disconnect', onDisconnect);
    }
  });
}
