import { SCHEDULER_TARGET } from './job-run-line.js';
import type { Logger } from './logger.js';
import { messageOf } from './scheduler-error.js';
import type { PeriodicRunRecord, TickCoordinator } from './tick-coordinator.js';

/**
 * Renews the lease on a job's run every `renewEveryMs` of the coordinator
 * while it runs; a renewal that finds the run no longer held, or that fails,
 * is logged (the run goes on). Returns the function that stops the renewals.
 */
export function renewWhileRunning(coordinator: TickCoordinator, job: string, logger: Logger): () => void {
  const renewal = setInterval(() => {
    coordinator.renew(job).then(
      (held) => {
        if (held) return;
        logger.warn(
          { target: SCHEDULER_TARGET, event: 'job.lease_lost', job },
          `${job}: this node no longer holds the job's run (its lease expired) — the run goes on`,
        );
      },
      (error: unknown) =>
        logger.warn(
          { target: SCHEDULER_TARGET, event: 'job.renew_failed', job, error: messageOf(error) },
          `${job}: could not renew the lease on the job's run`,
        ),
    );
  }, coordinator.renewEveryMs);
  renewal.unref?.();
  return () => clearInterval(renewal);
}

/** Writes the run's history row, then gives the job's run back; failures are logged, never thrown. */
export async function recordAndRelease(
  coordinator: TickCoordinator,
  record: PeriodicRunRecord,
  logger: Logger,
): Promise<void> {
  try {
    await coordinator.record(record);
  } catch (error) {
    logger.warn(
      { target: SCHEDULER_TARGET, event: 'job.record_failed', job: record.job, error: messageOf(error) },
      `${record.job}: could not record the run's outcome`,
    );
  }
  try {
    await coordinator.release(record.job);
  } catch (error) {
    logger.warn(
      { target: SCHEDULER_TARGET, event: 'job.release_failed', job: record.job, error: messageOf(error) },
      `${record.job}: could not release the job's run (its lease will expire)`,
    );
  }
}
