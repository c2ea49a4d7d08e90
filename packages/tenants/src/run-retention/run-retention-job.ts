import {
  err,
  type JobHandler,
  type JobOutcome,
  type JobRunArgs,
  type Logger,
  ok,
  silentLogger,
} from '@oxicloud/scheduler';
import type { RunRetentionRepository } from '../ports/run-retention-repository.js';
import { abortReason, errorMessage } from '../run-support.js';
import { assertRunRetentionConfig, type RunRetentionConfig } from './config.js';

/** Job name of the run retention. */
export const RUN_RETENTION_JOB_NAME = 'run_retention';

/** At most this many run ids are named in the audit line. */
export const RUN_RETENTION_AUDIT_ID_CAP = 100;

/** Options of {@link createRunRetentionJob}. */
export interface RunRetentionJobOptions {
  readonly repository: RunRetentionRepository;
  readonly config: RunRetentionConfig;
  /** Receives the `audit` and batch lines; use the server's root logger. */
  readonly logger?: Logger;
  /** @defaultValue `() => new Date()` */
  readonly now?: () => Date;
}

/** The `run_retention` handler plus the interval to register it with. */
export interface RunRetentionJob extends JobHandler {
  readonly name: typeof RUN_RETENTION_JOB_NAME;
  readonly intervalMs: number | null;
}

/**
 * Creates `run_retention`: deletes terminal runs older than the retention
 * (`OXICLOUD_JOB_RUN_RETENTION_DAYS`), with their per-run findings, in
 * batches of one transaction each (a kill -9 leaves whole batches only),
 * keeping each job's latest completed run and every run a non-fixed finding
 * still names; then the fixed findings fixed before the same cutoff. Checks
 * the signal between batches. Each batch logs a line
 * (`run_retention.batch`); every run writes one audit line
 * (`run_retention.deleted`: runs and findings deleted, per job, the first
 * {@link RUN_RETENTION_AUDIT_ID_CAP} run ids), also when aborted or failed.
 *
 * `count` = runs deleted; `extra` = `{ fixed_findings_deleted, cutoff, retention_days }`.
 */
export function createRunRetentionJob(options: RunRetentionJobOptions): RunRetentionJob {
  const { repository, config } = options;
  assertRunRetentionConfig(config);
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? (() => new Date());

  async function run(_args: JobRunArgs, signal: AbortSignal): Promise<JobOutcome> {
    const cutoff = new Date(now().getTime() - config.retentionMs);
    const perJob: Record<string, number> = {};
    const ids: string[] = [];
    let runs = 0;
    let findings = 0;
    let failure: string | null = null;
    try {
      for (let phase = 0; phase < 2 && failure === null; ) {
        if (signal.aborted) {
          failure = `run_retention aborted (${abortReason(signal)}) after deleting ${runs} runs and ${findings} fixed findings`;
          break;
        }
        let deleted: number;
        if (phase === 0) {
          const batch = await repository.pruneRuns(cutoff, config.batchSize);
          deleted = batch.runs.length;
          runs += deleted;
          for (const r of batch.runs) {
            perJob[r.job] = (perJob[r.job] ?? 0) + 1;
            if (ids.length < RUN_RETENTION_AUDIT_ID_CAP) ids.push(r.runId);
          }
        } else {
          deleted = await repository.pruneFixedFindings(cutoff, config.batchSize);
          findings += deleted;
        }
        if (deleted > 0) {
          logger.info(
            {
              target: 'oxicloud::jobs',
              event: 'run_retention.batch',
              job: RUN_RETENTION_JOB_NAME,
              what: phase === 0 ? 'runs' : 'fixed_findings',
              deleted,
            },
            `run_retention deleted ${deleted} ${phase === 0 ? 'runs' : 'fixed findings'}`,
          );
        }
        if (deleted < config.batchSize) phase++;
      }
    } catch (error) {
      failure = `run_retention failed after deleting ${runs} runs and ${findings} fixed findings: ${errorMessage(error)}`;
    }
    logger.info(
      {
        target: 'audit',
        event: 'run_retention.deleted',
        job: RUN_RETENTION_JOB_NAME,
        count: runs,
        runs_per_job: perJob,
        run_ids: ids,
        run_ids_truncated: runs > ids.length,
        fixed_findings_deleted: findings,
        cutoff: cutoff.toISOString(),
        ...(failure === null ? {} : { error: failure }),
      },
      `run_retention deleted ${runs} runs and ${findings} fixed findings older than ${cutoff.toISOString()}`,
    );
    if (failure !== null) return err(failure);
    return ok(runs, {
      fixed_findings_deleted: findings,
      cutoff: cutoff.toISOString(),
      retention_days: config.retentionMs / 86_400_000,
    });
  }

  return { name: RUN_RETENTION_JOB_NAME, intervalMs: config.intervalMs, run };
}
