import type { Logger } from '@oxicloud/scheduler';
import { SERVER_TARGET } from '../logger.js';

/** What asked the server to stop: a signal, or the launcher (scripts/oxijobs.mjs) going away. */
export type StopRequest = NodeJS.Signals | 'launcher gone';

/**
 * Resolves at the first SIGTERM or SIGINT (or when the IPC channel to a
 * launcher that started this process closes). A second signal while shutting
 * down forces the exit: `onForce` runs (it must be synchronous, e.g. ask the
 * embedded Postgres to stop), then the process exits 1, as common servers do
 * on a second Ctrl-C.
 */
export function nextStopRequest(logger: Logger, onForce: () => void): Promise<StopRequest> {
  return new Promise((resolve) => {
    const first = (request: StopRequest) => {
      process.off('SIGTERM', first);
      process.off('SIGINT', first);
      process.off('disconnect', onDisconnect);
      const force = (again: NodeJS.Signals) => {
        logger.error(
          { target: SERVER_TARGET, event: 'server.forced_exit', signal: again },
          `${again} again during shutdown: exiting now (runs still Running are marked Paused at the next boot)`,
        );
        onForce();
        process.exit(1);
      };
      process.once('SIGTERM', force);
      process.once('SIGINT', force);
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
