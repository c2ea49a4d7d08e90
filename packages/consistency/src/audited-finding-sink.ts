import type { Logger } from '@oxicloud/scheduler';
import type { FindingSink } from './finding-sink.js';
import type { Inconsistency } from './inconsistency.js';

/** Log target of the consistency layer's operational lines. */
export const CONSISTENCY_LOG_TARGET = 'oxicloud::consistency';

/** Whose findings an audited sink logs, and where. */
export interface AuditedFindingSinkContext {
  readonly runId: string;
  readonly checkName: string;
  readonly logger: Logger;
}

/**
 * Wraps a sink so every recorded finding is double-logged, as the audit
 * convention asks: one line on `target: 'audit'` with
 * `event: 'consistency.<check>.finding'` (compliance), one on
 * `target: 'oxicloud::consistency'` (operations). A replayed finding (already
 * recorded in this run) is logged again on the operational target only, with
 * `replayed: true`; a dropped finding logs `consistency.<check>.finding_dropped`.
 */
export function auditedFindingSink(sink: FindingSink, context: AuditedFindingSinkContext): FindingSink {
  const { runId, checkName, logger } = context;
  return {
    async recordFinding(finding: Inconsistency): Promise<boolean> {
      const isNew = await sink.recordFinding(finding);
      const fields = {
        run_id: runId,
        check: checkName,
        kind: finding.kind,
        severity: finding.severity,
        resource_id: finding.resourceId,
      };
      if (isNew) {
        logger.info(
          { target: 'audit', event: `consistency.${checkName}.finding`, ...fields },
          'consistency finding',
        );
      }
      logger.info(
        {
          target: CONSISTENCY_LOG_TARGET,
          event: `consistency.${checkName}.finding`,
          ...fields,
          detail: finding.detail,
          ...(isNew ? {} : { replayed: true }),
        },
        `${checkName}: ${finding.severity} ${finding.kind} on ${finding.resourceId}`,
      );
      return isNew;
    },
    async dropFinding(kind: string, resourceId: string): Promise<boolean> {
      const existed = await sink.dropFinding(kind, resourceId);
      if (existed) {
        logger.info(
          {
            target: CONSISTENCY_LOG_TARGET,
            event: `consistency.${checkName}.finding_dropped`,
            run_id: runId,
            check: checkName,
            kind,
            resource_id: resourceId,
          },
          `${checkName}: dropped ${kind} on ${resourceId}, the resource is consistent again`,
        );
      }
      return existed;
    },
  };
}
