import type { JobAlerts } from '@oxicloud/alerts';
import { CONSISTENCY_FINDINGS_ALERT, type PgFindingLedger } from '@oxicloud/consistency';
import type { RunFinishedEvent } from '@oxicloud/recoverable';
import type { Logger } from '@oxicloud/scheduler';

/** How many changed findings a mail lists (the counts say the rest). */
const MAILED_FINDINGS = 20;

/**
 * After a run's terminal write: a `Completed` run is closed (its check's
 * findings it examined and found consistent become `fixed`: the closing step
 * of `@oxicloud/consistency`, idempotent), then, for a job that declares the
 * `consistency_findings` alert, the run's changes are mailed: new, reopened,
 * worse and expired findings with the counts of what is still open and what
 * was fixed; nothing when nothing changed. Paused and failed runs close
 * nothing and mail nothing here (failures have their own alert). Never
 * rejects: a failure is logged.
 */
export async function closeAndMailFindings(
  event: RunFinishedEvent,
  deps: {
    readonly ledger: PgFindingLedger;
    readonly alerts: JobAlerts;
    /** The alerts the job declared (`capabilities.alerts`). */
    readonly raises: readonly string[];
    readonly logger: Logger;
  },
): Promise<void> {
  if (event.status !== 'Completed') return;
  try {
    const closed = await deps.ledger.closeRun(event.run_id);
    if (closed?.outcome === 'closed') {
      deps.logger.info(
        {
          target: 'oxicloud::consistency',
          event: 'consistency.findings_closed',
          job: event.job,
          run_id: event.run_id,
          fixed: closed.fixed,
          expired: closed.expired,
        },
        `${event.job}: ${closed.fixed} finding(s) fixed by run ${event.run_id}`,
      );
    }
    if (!deps.raises.includes(CONSISTENCY_FINDINGS_ALERT)) return;
    const changes = await deps.ledger.runChanges(event.run_id, { limit: MAILED_FINDINGS });
    await deps.alerts.findingChanges({
      job: event.job,
      runId: event.run_id,
      changed: changes.changed.map((f) => ({
        id: f.id,
        kind: f.kind,
        severity: f.severity,
        resourceId: f.resourceId,
        change: f.change,
        magnitude: f.magnitude,
      })),
      counts: changes.counts,
    });
  } catch (error) {
    deps.logger.error(
      {
        target: 'oxicloud::consistency',
        event: 'consistency.findings_close_failed',
        job: event.job,
        run_id: event.run_id,
        error: error instanceof Error ? error.message : String(error),
      },
      `${event.job}: could not close or mail the findings of run ${event.run_id}; the next start closes it`,
    );
  }
}
