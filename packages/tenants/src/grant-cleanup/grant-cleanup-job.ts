import {
  err,
  type JobHandler,
  type JobOutcome,
  type JobRunArgs,
  type Logger,
  ok,
  silentLogger,
} from '@oxicloud/scheduler';
import { GRANT_CLEANUP_JOB_NAME } from '../job-names.js';
import type { GrantRepository } from '../ports/grant-repository.js';
import { abortReason, errorMessage } from '../run-support.js';
import { assertGrantCleanupConfig, type GrantCleanupConfig } from './config.js';

/** At most this many grant ids are named in the audit line (`grant_ids_truncated` says when more). */
export const GRANT_CLEANUP_AUDIT_ID_CAP = 100;

/** Options of {@link createGrantCleanupJob}. */
export interface GrantCleanupJobOptions {
  readonly repository: GrantRepository;
  readonly config: GrantCleanupConfig;
  /** Receives the `audit` line; use the server's root logger. */
  readonly logger?: Logger;
  /** Clock for the grace cutoff. @defaultValue `() => new Date()` */
  readonly now?: () => Date;
}

/** The `grant_cleanup` handler plus the interval to register it with. */
export interface GrantCleanupJob extends JobHandler {
  readonly name: typeof GRANT_CLEANUP_JOB_NAME;
  /** Register with this interval; `null` = on demand only. */
  readonly intervalMs: number | null;
}

/**
 * Creates `grant_cleanup`: deletes role grants whose `expires_at` is older
 * than the grace window (`force`: grace 0), in batches, checking the signal
 * between them. Every run writes one audit line — `target: 'audit'`,
 * `event: 'grant_cleanup.deleted'`, `count`, `grant_ids` (the first
 * {@link GRANT_CLEANUP_AUDIT_ID_CAP}), `grant_ids_truncated` — also when it
 * was aborted or failed halfway, so every deletion is on the audit stream.
 *
 * `count` = grants deleted; `extra` = `{ grace_seconds, forced, cutoff }`.
 */
export function createGrantCleanupJob(options: GrantCleanupJobOptions): GrantCleanupJob {
  const { repository, config } = options;
  assertGrantCleanupConfig(config);
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? (() => new Date());

  async function run(args: JobRunArgs, signal: AbortSignal): Promise<JobOutcome> {
    const graceMs = args.force ? 0 : config.graceMs;
    const cutoff = new Date(now().getTime() - graceMs);
    let count = 0;
    const ids: string[] = [];
    let failure: string | null = null;
    try {
      for (;;) {
        if (signal.aborted) {
          failure = `grant_cleanup aborted (${abortReason(signal)}) after deleting ${count} grants`;
          break;
        }
        const deleted = await repository.deleteExpiredGrants(cutoff, config.batchSize);
        count += deleted.length;
        for (const grant of deleted) {
          if (ids.length < GRANT_CLEANUP_AUDIT_ID_CAP) ids.push(grant.id);
        }
        if (deleted.length < config.batchSize) break;
      }
    } catch (error) {
      failure = `grant_cleanup failed after deleting ${count} grants: ${errorMessage(error)}`;
    }
    logger.info(
      {
        target: 'audit',
        event: 'grant_cleanup.deleted',
        job: GRANT_CLEANUP_JOB_NAME,
        count,
        grant_ids: ids,
        grant_ids_truncated: count > ids.length,
        forced: args.force,
        cutoff: cutoff.toISOString(),
        ...(failure === null ? {} : { error: failure }),
      },
      `grant_cleanup deleted ${count} expired role grants`,
    );
    if (failure !== null) return err(failure);
    return ok(count, { grace_seconds: graceMs / 1000, forced: args.force, cutoff: cutoff.toISOString() });
  }

  return { name: GRANT_CLEANUP_JOB_NAME, intervalMs: config.intervalMs, run };
}

export { GRANT_CLEANUP_JOB_NAME };
