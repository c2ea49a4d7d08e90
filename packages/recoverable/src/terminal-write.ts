import { DATABASE_UNREACHABLE, isConnectionLoss } from './connection-retry.js';
import type { JobStoreFactory } from './job-store-factory.js';
import { isLeaseLost, messageOf } from './recoverable-error.js';
import type { RunOutcome } from './run-outcome.js';
import type { RunRecord } from './run-record.js';

/** How long the terminal write is retried on errors other than a lost connection. */
const FINISH_RETRY_MS = 120_000;
const FINISH_RETRY_MAX_DELAY_MS = 5_000;

/**
 * The terminal write, retried with backoff: while the database is
 * unreachable, until it lands or `stop` fires (shutdown); on any other error
 * for up to {@link FINISH_RETRY_MS}. A run must not stay `Running` in the
 * table once Postgres is back: a trigger would answer `already_running` for
 * a run nobody drives. A fence that refuses it (`LEASE_LOST`) is thrown at once.
 */
export async function writeTerminalStatus(
  factory: JobStoreFactory,
  run: RunRecord,
  outcome: RunOutcome,
  pauseReason: string | undefined,
  stop: AbortSignal | undefined,
  onRetry: (attempt: number, thrown: unknown) => void,
): Promise<RunRecord> {
  const deadline = performance.now() + FINISH_RETRY_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      // After an outage the time since the last checkpoint was not running time.
      const outage = attempt > 1 || (outcome.kind === 'paused' && outcome.reason === DATABASE_UNREACHABLE);
      return await factory.finishRun(run, outcome, pauseReason, outage ? 'last_progress' : 'now');
    } catch (thrown) {
      const delay = Math.min(FINISH_RETRY_MAX_DELAY_MS, 250 * 2 ** Math.min(attempt - 1, 20));
      const lost = isConnectionLoss(thrown);
      if (stop?.aborted || isLeaseLost(thrown) || /vanished/.test(messageOf(thrown))) throw thrown;
      if (!lost && performance.now() + delay > deadline) throw thrown;
      onRetry(attempt, thrown);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, delay);
        function done(): void {
          clearTimeout(timer);
          stop?.removeEventListener('abort', done);
          resolve();
        }
        stop?.addEventListener('abort', done, { once: true });
      });
    }
  }
}
