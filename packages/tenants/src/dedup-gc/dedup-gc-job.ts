import {
  err,
  type JobHandler,
  type JobOutcome,
  type JobRunArgs,
  type Logger,
  ok,
  silentLogger,
} from '@oxicloud/scheduler';
import type { BlobStorage } from '../ports/blob-storage.js';
import type { OrphanBlobCandidate, OrphanBlobRepository } from '../ports/orphan-blob-repository.js';
import { abortReason, errorMessage } from '../run-support.js';
import { assertDedupGcConfig, type DedupGcConfig } from './config.js';

/** Job name of the orphan blob collector. */
export const DEDUP_GC_JOB_NAME = 'dedup_gc';

/** Byte deletions in flight at once inside one locked batch. */
const DELETE_CONCURRENCY = 8;
/** Failed deletions named in the `err` message and logged one by one. */
const FAILURES_REPORTED = 5;

/** Options of {@link createDedupGcJob}. */
export interface DedupGcJobOptions {
  readonly repository: OrphanBlobRepository;
  /** Where the bytes live; only `delete` is used. */
  readonly blobs: Pick<BlobStorage, 'delete'>;
  readonly config: DedupGcConfig;
  readonly logger?: Logger;
  /** Clock for the grace cutoff. @defaultValue `() => new Date()` */
  readonly now?: () => Date;
}

/** The `dedup_gc` handler plus the interval to register it with (always `null`: on demand). */
export interface DedupGcJob extends JobHandler {
  readonly name: typeof DEDUP_GC_JOB_NAME;
  readonly intervalMs: null;
}

interface Failure {
  readonly hash: string;
  readonly message: string;
}

/** Deletes the bytes of the locked rows, a few at a time; returns the hashes whose bytes are gone. */
async function deleteAllBytes(
  blobs: Pick<BlobStorage, 'delete'>,
  locked: readonly OrphanBlobCandidate[],
  failures: Failure[],
): Promise<string[]> {
  const gone: string[] = [];
  let next = 0;
  async function worker(): Promise<void> {
    while (next < locked.length) {
      const blob = locked[next++]!;
      try {
        await blobs.delete(blob.hash);
        gone.push(blob.hash);
      } catch (error) {
        failures.push({ hash: blob.hash, message: errorMessage(error) });
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(DELETE_CONCURRENCY, locked.length) }, worker));
  return gone;
}

/**
 * Creates `dedup_gc`: deletes blobs whose `ref_count` is 0 and whose
 * `orphaned_at` is older than the grace window (`force`: grace 0) — bytes
 * first, then the row, with the row locked and `ref_count` re-checked, so a
 * blob that gained a reference meanwhile is kept. Works in batches in hash
 * order and checks the signal between them.
 *
 * `count` = blobs deleted; `extra` = `{ blobs_deleted, bytes_freed,
 * blobs_kept, grace_seconds, forced }`. If some bytes could not be deleted
 * their rows stay (retried next run) and the outcome is `err`, naming them.
 */
export function createDedupGcJob(options: DedupGcJobOptions): DedupGcJob {
  const { repository, blobs, config } = options;
  assertDedupGcConfig(config);
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? (() => new Date());

  async function run(args: JobRunArgs, signal: AbortSignal): Promise<JobOutcome> {
    const graceMs = args.force ? 0 : config.graceMs;
    const cutoff = new Date(now().getTime() - graceMs);
    let deleted = 0;
    let bytesFreed = 0;
    let kept = 0;
    const failures: Failure[] = [];
    const progress = () => `${deleted} blobs deleted (${bytesFreed} bytes freed), ${kept} kept`;
    let after: string | null = null;
    try {
      for (;;) {
        if (signal.aborted) return err(`dedup_gc aborted (${abortReason(signal)}) after ${progress()}`);
        const candidates = await repository.listOrphanCandidates(cutoff, { after, limit: config.batchSize });
        if (candidates.length === 0) break;
        const result = await repository.collectOrphans(
          candidates.map((c) => c.hash),
          cutoff,
          (locked) => deleteAllBytes(blobs, locked, failures),
        );
        const sizes = new Map(result.locked.map((b) => [b.hash, b.size]));
        for (const hash of result.deleted) {
          deleted += 1;
          bytesFreed += sizes.get(hash) ?? 0;
        }
        kept += candidates.length - result.locked.length;
        after = candidates[candidates.length - 1]!.hash;
        if (candidates.length < config.batchSize) break;
      }
    } catch (error) {
      return err(`dedup_gc failed after ${progress()}: ${errorMessage(error)}`);
    }
    for (const failure of failures.slice(0, FAILURES_REPORTED)) {
      logger.warn(
        {
          target: 'oxicloud::dedup_gc',
          event: 'dedup_gc.delete_failed',
          hash: failure.hash,
          error: failure.message,
        },
        'could not delete blob bytes; row kept for the next run',
      );
    }
    if (failures.length > 0) {
      const named = failures
        .slice(0, FAILURES_REPORTED)
        .map((f) => `${f.hash}: ${f.message}`)
        .join('; ');
      return err(
        `dedup_gc: ${progress()}, but ${failures.length} blobs' bytes could not be deleted (${named})`,
      );
    }
    return ok(deleted, {
      blobs_deleted: deleted,
      bytes_freed: bytesFreed,
      blobs_kept: kept,
      grace_seconds: graceMs / 1000,
      forced: args.force,
    });
  }

  return { name: DEDUP_GC_JOB_NAME, intervalMs: null, run };
}
