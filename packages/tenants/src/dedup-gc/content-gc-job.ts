import {
  err,
  type JobHandler,
  type JobOutcome,
  type JobRunArgs,
  type Logger,
  ok,
  silentLogger,
} from '@oxicloud/scheduler';
import { DEDUP_GC_JOB_NAME } from '../job-names.js';
import type { BlobQuarantine, QuarantinedEntry } from '../ports/blob-quarantine.js';
import type { CollectedBlob, ContentGcRepository } from '../ports/content-gc-repository.js';
import { abortReason, errorMessage } from '../run-support.js';
import type { ThumbnailStore } from '../storage-consistency/thumbnail-store.js';
import { assertDedupGcConfig, type DedupGcConfig, quarantineGraceMsOf } from './config.js';

/** The `dedup_gc` handler plus the interval to register it with (always `null`: on demand). */
export interface DedupGcJob extends JobHandler {
  readonly name: typeof DEDUP_GC_JOB_NAME;
  readonly intervalMs: null;
}

/** Objects moved into (or out of) the quarantine at once. */
const MOVE_CONCURRENCY = 8;
/** Hashes named in a warning. */
const HASHES_REPORTED = 5;

/** Options of {@link createContentGcJob}. */
export interface ContentGcJobOptions {
  /** OxiCloud's content tables (`OxiContentGcRepository`). */
  readonly repository: ContentGcRepository;
  /** The blob store's quarantine: collected bytes are moved there, never deleted outright. */
  readonly quarantine: BlobQuarantine;
  /** `graceMs` and `batchSize` as for the engine's GC, plus `quarantineGraceMs`. */
  readonly config: DedupGcConfig;
  readonly logger?: Logger;
  /** Clock for the grace cutoffs. @defaultValue `() => new Date()` */
  readonly now?: () => Date;
  /**
   * OxiCloud's thumbnails (`LocalThumbnailStore`): after the rows and bytes,
   * the thumbnails of the contents collected that nothing wants any more are
   * removed (OxiCloud's GC does the same through its blob-deleted hook).
   * Without it, or without `remove`, they are left to `storage_consistency`.
   */
  readonly thumbnails?: ThumbnailStore;
}

/** Runs `work` over `items`, at most `limit` at a time. */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Creates `dedup_gc` for OxiCloud's storage domain: OxiCloud's own two-phase
 * GC (`DedupService::garbage_collect`, fact sheet §6), with its races closed
 * and no byte ever unlinked while something may still want it.
 *
 * Each run, in this order (the signal is checked between batches):
 *
 * 0. **Sweep the quarantine.** A saved manifest that files name but that has
 *    no row any more (collected while an upload was attaching to it) is put
 *    back, with its chunks' counts. A quarantined blob that is wanted again
 *    (a `storage.blobs` row, a manifest listing it, or a file naming it) is
 *    moved back into `.blobs`. What nothing wants and has been quarantined
 *    longer than `quarantineGraceMs` (never shortened by `force`) is purged.
 *    This is also how a run finishes what a killed run left.
 * 1. **Manifests** created before the grace cutoff that no file row names
 *    (trashed included), checked under `FOR UPDATE` against `storage.files`
 *    (never on `ref_count` alone): saved to the quarantine, deleted, and
 *    each distinct chunk's count lowered by 1, in one transaction.
 *    Candidates whose count says ≤ 0 but that files name are kept and
 *    reported (`manifests_referenced`).
 * 2. **Blob rows** with `ref_count = 0`, past the grace, that no manifest
 *    lists and no file names (re-checked under `FOR UPDATE`): their bytes
 *    are moved to the quarantine while the rows are locked, then the rows
 *    are deleted and the transaction commits; then the moved hashes are
 *    looked up again and any that a row wants already is moved back.
 *
 * `force` uses grace 0 for phases 1 and 2 (phase 2's cutoff is taken when it starts, so the chunks phase 1 released are collected in the same forced run, as OxiCloud's). `count` = blob rows collected;
 * `extra` = `{ blobs_deleted, bytes_freed, blobs_kept, skipped_referenced,
 * manifests_deleted, manifests_referenced, manifests_restored,
 * manifests_purged, quarantined, restored, resumed, purged, grace_seconds,
 * quarantine_grace_seconds, forced, thumbnails_removed }` (`resumed`:
 * restores the sweep made, work an earlier run left).
 * 3. **Thumbnails after** (with `thumbnails`): the contents phases 1 and 2
 *    collected (a manifest's file hash, a blob's hash) that nothing wants
 *    when they are looked up again lose their `.thumbnails` files, as
 *    OxiCloud's GC does through its blob-deleted hook. A content restored
 *    from the quarantine later gets them again on demand (they are a cache).
 *
 * @example
 * ```ts
 * import { OxiContentGcRepository } from '@oxicloud/storage/oxicloud';
 * const job = createContentGcJob({
 *   repository: new OxiContentGcRepository(db),
 *   quarantine: blobs, // a LocalFsBlobStorage, S3BlobStorage or EncryptedBlobStorage
 *   config: dedupGcConfigFromEnv(process.env),
 * });
 * registry.register(job, job.intervalMs, null);
 * ```
 */
export function createContentGcJob(options: ContentGcJobOptions): DedupGcJob {
  const { repository, quarantine, config } = options;
  assertDedupGcConfig(config);
  const quarantineGraceMs = quarantineGraceMsOf(config);
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? (() => new Date());

  async function run(args: JobRunArgs, signal: AbortSignal): Promise<JobOutcome> {
    const graceMs = args.force ? 0 : config.graceMs;
    const startedAt = now().getTime();
    const cutoff = new Date(startedAt - graceMs);
    const purgeBefore = new Date(startedAt - quarantineGraceMs);
    const limit = config.batchSize;
    const stats = {
      blobs_deleted: 0,
      bytes_freed: 0,
      blobs_kept: 0,
      skipped_referenced: 0,
      manifests_deleted: 0,
      manifests_referenced: 0,
      manifests_restored: 0,
      manifests_purged: 0,
      quarantined: 0,
      restored: 0,
      resumed: 0,
      purged: 0,
      thumbnails_removed: 0,
    };
    const referencedBlobs: string[] = [];
    /** The content hashes phases 1 and 2 collected: their thumbnails go last. */
    const collectedContents: string[] = [];
    const lowCountManifests: string[] = [];
    const progress = () =>
      `${stats.blobs_deleted} blobs collected, ${stats.manifests_deleted} manifests deleted, ` +
      `${stats.quarantined} objects quarantined, ${stats.restored} restored, ${stats.purged} purged`;
    const aborted = () => err(`dedup_gc aborted (${abortReason(signal)}) after ${progress()}`);

    /** Pages of a quarantine listing, `visit`ed in order; `false` when the signal stopped it. */
    async function eachPage(
      list: (startAfter: string | null) => Promise<QuarantinedEntry[]>,
      visit: (page: QuarantinedEntry[]) => Promise<void>,
    ): Promise<boolean> {
      let after: string | null = null;
      for (;;) {
        if (signal.aborted) return false;
        const page = await list(after);
        if (page.length === 0) return true;
        await visit(page);
        after = page[page.length - 1]!.hash;
        if (page.length < limit) return true;
      }
    }

    async function sweepManifests(): Promise<boolean> {
      return eachPage(
        (startAfter) => quarantine.listQuarantinedManifests({ startAfter, limit }),
        async (page) => {
          for (const entry of page) {
            const record = await quarantine.readQuarantinedManifest(entry.hash);
            if (record === null) continue;
            if ((await repository.restoreManifest(record)) === 'restored') {
              stats.manifests_restored += 1;
              stats.resumed += 1;
            }
            // Kept for the whole grace, whatever it found: restoring is right whenever files name it.
            if (
              entry.quarantinedAt < purgeBefore &&
              (await quarantine.purgeQuarantinedManifest(entry.hash))
            ) {
              stats.manifests_purged += 1;
            }
          }
        },
      );
    }

    async function sweepBlobs(): Promise<boolean> {
      return eachPage(
        (startAfter) => quarantine.listQuarantinedBlobs({ startAfter, limit }),
        async (page) => {
          const wanted = await repository.wantedHashes(page.map((e) => e.hash));
          await eachLimited(page, MOVE_CONCURRENCY, async (entry) => {
            if (wanted.has(entry.hash)) {
              if (await quarantine.restoreBlob(entry.hash)) {
                stats.restored += 1;
                stats.resumed += 1;
              }
            } else if (entry.quarantinedAt < purgeBefore) {
              if (await quarantine.purgeQuarantinedBlob(entry.hash)) stats.purged += 1;
            }
          });
        },
      );
    }

    async function collectManifests(): Promise<boolean> {
      let after: string | null = null;
      for (;;) {
        if (signal.aborted) return false;
        const candidates = await repository.listManifestCandidates(cutoff, { after, limit });
        if (candidates.length === 0) return true;
        const result = await repository.collectManifests(candidates, cutoff, (doomed) =>
          eachLimited(doomed, MOVE_CONCURRENCY, (record) => quarantine.saveManifest(record)),
        );
        stats.manifests_deleted += result.deleted.length;
        collectedContents.push(...result.deleted.map((m) => m.fileHash));
        stats.manifests_referenced += result.referenced.length;
        for (const m of result.referenced) if (m.refCount <= 0) lowCountManifests.push(m.fileHash);
        after = candidates[candidates.length - 1]!;
        if (candidates.length < limit) return true;
      }
    }

    async function collectBlobs(): Promise<boolean> {
      // Taken now, after phase 1: with `force`, the chunks phase 1 just released are past it (as OxiCloud's).
      const blobCutoff = new Date(now().getTime() - graceMs);
      let after: string | null = null;
      for (;;) {
        if (signal.aborted) return false;
        const candidates = await repository.listBlobCandidates(blobCutoff, { after, limit });
        if (candidates.length === 0) return true;
        const moved: string[] = [];
        const result = await repository.collectBlobs(
          candidates,
          blobCutoff,
          (doomed: readonly CollectedBlob[]) =>
            eachLimited(doomed, MOVE_CONCURRENCY, async (blob) => {
              if (await quarantine.quarantineBlob(blob.hash)) moved.push(blob.hash);
            }),
        );
        stats.quarantined += moved.length;
        stats.blobs_deleted += result.deleted.length;
        for (const blob of result.deleted) stats.bytes_freed += blob.size;
        collectedContents.push(...result.deleted.map((b) => b.hash));
        stats.skipped_referenced += result.referenced.length;
        referencedBlobs.push(...result.referenced);
        stats.blobs_kept += candidates.length - result.deleted.length - result.referenced.length;
        // An upload that found the bytes in place before the move and upserts its row after the
        // commit: its row may be there already. Any later one is caught by the next run's sweep.
        if (moved.length > 0) {
          const wanted = await repository.wantedHashes(moved);
          await eachLimited([...wanted], MOVE_CONCURRENCY, async (hash) => {
            if (await quarantine.restoreBlob(hash)) stats.restored += 1;
          });
        }
        after = candidates[candidates.length - 1]!;
        if (candidates.length < limit) return true;
      }
    }

    /** Phase 3: the thumbnails of the collected contents nothing wants now. */
    async function removeThumbnails(): Promise<boolean> {
      const store = options.thumbnails;
      if (store?.remove === undefined) return true;
      for (let at = 0; at < collectedContents.length; at += limit) {
        if (signal.aborted) return false;
        const page = collectedContents.slice(at, at + limit);
        const wanted = await repository.wantedHashes(page);
        for (const hash of page) {
          if (wanted.has(hash)) continue;
          const entry = await store.stat(hash);
          if (entry !== null) stats.thumbnails_removed += await store.remove(entry.files);
        }
      }
      return true;
    }

    try {
      for (const step of [sweepManifests, sweepBlobs, collectManifests, collectBlobs, removeThumbnails]) {
        if (!(await step())) return aborted();
      }
    } catch (error) {
      return err(`dedup_gc failed after ${progress()}: ${errorMessage(error)}`);
    }
    if (lowCountManifests.length > 0) {
      logger.warn(
        {
          target: 'oxicloud::dedup_gc',
          event: 'dedup_gc.manifest_count_low',
          count: lowCountManifests.length,
          file_hashes: lowCountManifests.slice(0, HASHES_REPORTED),
        },
        'manifests whose ref_count is <= 0 are still named by files: kept (OxiCloud would delete them), the ref_count is wrong',
      );
    }
    if (referencedBlobs.length > 0) {
      logger.warn(
        {
          target: 'oxicloud::dedup_gc',
          event: 'dedup_gc.skipped_referenced',
          count: referencedBlobs.length,
          hashes: referencedBlobs.slice(0, HASHES_REPORTED),
        },
        'blobs whose ref_count is 0 are still listed by manifests or named by files: bytes kept, the ref_count is wrong',
      );
    }
    return ok(stats.blobs_deleted, {
      ...stats,
      grace_seconds: graceMs / 1000,
      quarantine_grace_seconds: quarantineGraceMs / 1000,
      forced: args.force,
    });
  }

  return { name: DEDUP_GC_JOB_NAME, intervalMs: null, run };
}

export { DEDUP_GC_JOB_NAME };
