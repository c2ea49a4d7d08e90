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
 * Creates `dedup_gc`: deletes blobs nobody references, bytes first, then the
 * row, after a grace window (`force`: grace 0). It never deletes live data;
 * the rules, with the deletion protocol of `0007_blob_deletion_protocol.sql`:
 *
 * 1. **Mark.** Under the blob row lock, a candidate must still have
 *    `ref_count = 0`, be past the grace, **and** have no row of
 *    `storage.files` referencing it (an index lookup: `ref_count` alone is
 *    never trusted). Only then is it marked as being deleted, and the mark
 *    is committed. When `ref_count` and the files disagree, nothing is
 *    deleted for that blob and it is counted in `skipped_referenced` (and
 *    logged), so the operator learns the counter is wrong.
 * 2. **Refuse.** From the mark on, the database refuses any new file
 *    reference to the blob (SQLSTATE `OXB01`; `OXB02` for a missing row):
 *    the upload fails and can re-create the blob with `reserveBlob`,
 *    instead of committing a file without bytes.
 * 3. **Delete.** With the marked rows locked: bytes, then rows. A crash
 *    between any two steps leaves rows marked, which the next run finishes
 *    first (deleting bytes is idempotent), counted in `resumed`.
 *
 * Works in batches in hash order and checks the signal between them.
 * `count` = blobs deleted; `extra` = `{ blobs_deleted, bytes_freed,
 * blobs_kept, skipped_referenced, resumed, grace_seconds, forced }`. If some
 * bytes could not be deleted their rows stay marked (retried next run) and
 * the outcome is `err`, naming them.
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
    let resumed = 0;
    const referenced: string[] = [];
    const failures: Failure[] = [];
    const progress = () =>
      `${deleted} blobs deleted (${bytesFreed} bytes freed), ${kept} kept, ${referenced.length} skipped as referenced`;

    /** Steps 2 and 3 for marked hashes; returns how many rows were deleted. */
    async function finish(hashes: readonly string[]): Promise<number> {
      const result = await repository.finishDeletion(hashes, (locked) =>
        deleteAllBytes(blobs, locked, failures),
      );
      const sizes = new Map(result.locked.map((b) => [b.hash, b.size]));
      for (const hash of result.deleted) bytesFreed += sizes.get(hash) ?? 0;
      deleted += result.deleted.length;
      referenced.push(...result.referenced);
      return result.deleted.length;
    }

    try {
      // Rows a previous run marked but did not finish (a crash, a failed byte delete).
      let after: string | null = null;
      for (;;) {
        if (signal.aborted) return err(`dedup_gc aborted (${abortReason(signal)}) after ${progress()}`);
        const marked = await repository.listMarked({ after, limit: config.batchSize });
        if (marked.length === 0) break;
        resumed += await finish(marked.map((b) => b.hash));
        after = marked[marked.length - 1]!.hash;
        if (marked.length < config.batchSize) break;
      }
      after = null;
      for (;;) {
        if (signal.aborted) return err(`dedup_gc aborted (${abortReason(signal)}) after ${progress()}`);
        const candidates = await repository.listOrphanCandidates(cutoff, { after, limit: config.batchSize });
        if (candidates.length === 0) break;
        const mark = await repository.markForDeletion(
          candidates.map((c) => c.hash),
          cutoff,
        );
        referenced.push(...mark.referenced);
        kept += candidates.length - mark.marked.length - mark.referenced.length;
        if (mark.marked.length > 0) await finish(mark.marked.map((b) => b.hash));
        after = candidates[candidates.length - 1]!.hash;
        if (candidates.length < config.batchSize) break;
      }
    } catch (error) {
      return err(`dedup_gc failed after ${progress()}: ${errorMessage(error)}`);
    }
    if (referenced.length > 0) {
      logger.warn(
        {
          target: 'oxicloud::dedup_gc',
          event: 'dedup_gc.skipped_referenced',
          count: referenced.length,
          hashes: referenced.slice(0, FAILURES_REPORTED),
        },
        'blobs whose ref_count is 0 are still referenced by files: bytes kept, the ref_count is wrong',
      );
    }
    for (const failure of failures.slice(0, FAILURES_REPORTED)) {
      logger.warn(
        {
          target: 'oxicloud::dedup_gc',
          event: 'dedup_gc.delete_failed',
          hash: failure.hash,
          error: failure.message,
        },
        'could not delete blob bytes; row stays marked for the next run',
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
      skipped_referenced: referenced.length,
      resumed,
      grace_seconds: graceMs / 1000,
      forced: args.force,
    });
  }

  return { name: DEDUP_GC_JOB_NAME, intervalMs: null, run };
}
