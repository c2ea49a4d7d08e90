import type { JobAlerts } from '@oxicloud/alerts';
import { CONSISTENCY_FINDINGS_ALERT, type PgFindingLedger } from '@oxicloud/consistency';
import type { RunFinishedEvent } from '@oxicloud/recoverable';
import type { Logger } from '@oxicloud/scheduler';

/** How many changed findings a mail lists (the counts say the rest). */
const MAILED_FINDINGS = 20;

/**
 * After a `Completed` run of a job that declares the `consistency_findings`
 * alert, mails what the run changed: new, reopened, worse and expired
 * findings with the counts of what is still open and what was fixed;
 * nothing when nothing changed. The run is closed already (the check's own
 * `afterTerminal` step runs before the engine's `onRunFinished`), so the
 * fixed count is the closed state. Paused and failed runs mail nothing here
 * (failures have their own alert). Never rejects: a failure is logged.
 */
export async function mailFindingChanges(
  event: RunFinishedEvent,
  deps: {
    readonly ledger: PgFindingLedger;
    readonly alerts: JobAlerts;
    /** The alerts the job declared (`capabilities.alerts`). */
    readonly raises: readonly string[];
    readonly logger: Logger;
  },
): Promise<void> {
  if (event.status !== 'Completed' || !deps.raises.includes(CONSISTENCY_FINDINGS_ALERT)) return;
  try {
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
        event: 'consistency.findings_mail_failed',
        job: event.job,
        run_id: event.run_id,
        error: error instanceof Error ? error.message : String(error),
      },
      `${event.job}: could not mail the findings run ${event.run_id} changed`,
    );
  }
}
