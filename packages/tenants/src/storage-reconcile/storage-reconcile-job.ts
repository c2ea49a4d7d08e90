import {
  err,
  type JobHandler,
  type JobOutcome,
  type JobRunArgs,
  type Logger,
  ok,
  silentLogger,
} from '@oxicloud/scheduler';
import { STORAGE_RECONCILE_JOB_NAME } from '../job-names.js';
import type { UsageCorrection, UsageRepository } from '../ports/usage-repository.js';
import { abortReason, errorMessage } from '../run-support.js';
import { assertStorageReconcileConfig, type StorageReconcileConfig } from './config.js';

/** How many corrections `extra.largest` lists. */
export const STORAGE_RECONCILE_TOP = 10;

/** Options of {@link createStorageReconcileJob}. */
export interface StorageReconcileJobOptions {
  readonly repository: UsageRepository;
  readonly config: StorageReconcileConfig;
  readonly logger?: Logger;
}

/** The `storage_reconcile` handler plus the interval to register it with. */
export interface StorageReconcileJob extends JobHandler {
  readonly name: typeof STORAGE_RECONCILE_JOB_NAME;
  /** Register with this interval; `null` = on demand only. */
  readonly intervalMs: number | null;
}

/** Largest `|delta|` first, then by kind and id so the order is stable. */
function byMagnitude(a: UsageCorrection, b: UsageCorrection): number {
  return Math.abs(b.delta) - Math.abs(a.delta) || a.kind.localeCompare(b.kind) || a.id.localeCompare(b.id);
}

/**
 * Creates `storage_reconcile`: recomputes every drive's `used_bytes` from
 * its files (trashed included), then every user's `storage_used_bytes` from
 * their drives, each in one set-based statement that rewrites only the rows
 * that differ. `count` = rows corrected (drives + users); `extra` =
 * `{ drives_corrected, users_corrected, largest: [{ id, kind, before, after, delta }] }`
 * with the 10 largest corrections. `force` is ignored.
 */
export function createStorageReconcileJob(options: StorageReconcileJobOptions): StorageReconcileJob {
  const { repository, config } = options;
  assertStorageReconcileConfig(config);
  const logger = options.logger ?? silentLogger;

  async function run(_args: JobRunArgs, signal: AbortSignal): Promise<JobOutcome> {
    if (signal.aborted) return err(`storage_reconcile aborted (${abortReason(signal)}) before it started`);
    let drivesCorrected = 0;
    try {
      const drives = await repository.reconcileDriveUsage(STORAGE_RECONCILE_TOP);
      drivesCorrected = drives.corrected;
      if (signal.aborted) {
        return err(
          `storage_reconcile aborted (${abortReason(signal)}) after correcting ${drives.corrected} drives; users not reconciled`,
        );
      }
      const users = await repository.reconcileUserUsage(STORAGE_RECONCILE_TOP);
      const largest = [...drives.largest, ...users.largest].sort(byMagnitude).slice(0, STORAGE_RECONCILE_TOP);
      const count = drives.corrected + users.corrected;
      if (count > 0) {
        logger.info(
          {
            target: 'oxicloud::storage_reconcile',
            event: 'storage_reconcile.corrected',
            drives_corrected: drives.corrected,
            users_corrected: users.corrected,
          },
          `storage_reconcile corrected ${count} usage counters`,
        );
      }
      return ok(count, { drives_corrected: drives.corrected, users_corrected: users.corrected, largest });
    } catch (error) {
      return err(
        `storage_reconcile failed (after ${drivesCorrected} drives corrected): ${errorMessage(error)}`,
      );
    }
  }

  return { name: STORAGE_RECONCILE_JOB_NAME, intervalMs: config.intervalMs, run };
}

export { STORAGE_RECONCILE_JOB_NAME };
