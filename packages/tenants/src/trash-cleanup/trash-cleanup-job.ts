import {
  err,
  type JobHandler,
  type JobOutcome,
  type JobRunArgs,
  type Logger,
  ok,
  silentLogger,
} from '@oxicloud/scheduler';
import { TRASH_CLEANUP_JOB_NAME } from '../job-names.js';
import type { TrashFolderCursor, TrashPurgeBatch, TrashRepository } from '../ports/trash-repository.js';
import { abortReason, errorMessage } from '../run-support.js';
import { assertTrashCleanupConfig, retentionMs, type TrashCleanupConfig } from './config.js';

/** Options of {@link createTrashCleanupJob}. */
export interface TrashCleanupJobOptions {
  readonly repository: TrashRepository;
  readonly config: TrashCleanupConfig;
  readonly logger?: Logger;
  /** Clock for the retention cutoff. @defaultValue `() => new Date()` */
  readonly now?: () => Date;
}

/** The `trash_cleanup` handler plus the interval to register it with. */
export interface TrashCleanupJob extends JobHandler {
  readonly name: typeof TRASH_CLEANUP_JOB_NAME;
  /** Register with this interval; `null` = on demand only. */
  readonly intervalMs: number | null;
}

/** Skipped roots named in the warn line. */
const SKIPPED_NAMED = 10;

/**
 * Creates `trash_cleanup`: purges trashed folders (with their subtree) and
 * trashed files whose `trashed_at` is older than the retention, in batches,
 * checking the signal between batches.
 *
 * The rule: **it never deletes a live (not trashed) file or folder.** A
 * trashed folder past retention whose subtree still holds a live folder or
 * file is not purged at all (its trashed sub-folders past retention are
 * purged on their own); it is counted in `skipped_live_descendants` and
 * named in a `trash_cleanup.skipped_live_descendants` warn line, since that
 * state is what `files_consistency` / `folders_consistency` report.
 *
 * `count` = rows purged (folders + files); `extra` = `{ folders, files,
 * batches, skipped_live_descendants, retention_days, cutoff }`.
 * `force` is ignored (retention is a promise to users, not a grace window).
 *
 * @example
 * ```ts
 * const job = createTrashCleanupJob({ repository, config: trashCleanupConfigFromEnv(process.env), logger });
 * registry.register(job, job.intervalMs, null);
 * ```
 */
export function createTrashCleanupJob(options: TrashCleanupJobOptions): TrashCleanupJob {
  const { repository, config } = options;
  assertTrashCleanupConfig(config);
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? (() => new Date());

  async function run(_args: JobRunArgs, signal: AbortSignal): Promise<JobOutcome> {
    const cutoff = new Date(now().getTime() - retentionMs(config));
    let folders = 0;
    let files = 0;
    let batches = 0;
    const skipped: string[] = [];
    const progress = () => `${folders + files} items (${folders} folders, ${files} files)`;
    let after: TrashFolderCursor | null = null;
    const phases: [string, (cutoff: Date, limit: number) => Promise<TrashPurgeBatch>][] = [
      [
        'folders',
        async (c, l) => {
          const batch = await repository.purgeFolderBatch(c, l, after);
          after = batch.next;
          skipped.push(...batch.skippedLiveDescendants);
          return batch;
        },
      ],
      ['files', (c, l) => repository.purgeFileBatch(c, l)],
    ];
    try {
      for (const [phase, purge] of phases) {
        for (;;) {
          if (signal.aborted) {
            return err(`trash_cleanup aborted (${abortReason(signal)}) after purging ${progress()}`);
          }
          const batch = await purge(cutoff, config.batchSize);
          batches += 1;
          folders += batch.folders;
          files += batch.files;
          logger.debug(
            { target: 'oxicloud::trash_cleanup', phase, selected: batch.selected, folders, files },
            'trash purge batch',
          );
          if (batch.selected < config.batchSize) break;
        }
      }
    } catch (error) {
      return err(`trash_cleanup failed after purging ${progress()}: ${errorMessage(error)}`);
    }
    if (skipped.length > 0) {
      logger.warn(
        {
          target: 'oxicloud::trash_cleanup',
          event: 'trash_cleanup.skipped_live_descendants',
          count: skipped.length,
          folder_ids: skipped.slice(0, SKIPPED_NAMED),
        },
        `${skipped.length} trashed folders past retention still hold live files or folders: not purged`,
      );
    }
    return ok(folders + files, {
      folders,
      files,
      batches,
      skipped_live_descendants: skipped.length,
      retention_days: config.retentionDays,
      cutoff: cutoff.toISOString(),
    });
  }

  return { name: TRASH_CLEANUP_JOB_NAME, intervalMs: config.intervalMs, run };
}

export { TRASH_CLEANUP_JOB_NAME };
