import {
  FindingBatch,
  type FindingKind,
  type FindingWriter,
  type Inconsistency,
} from '@oxicloud/consistency';
import {
  type BatchTally,
  type CursorCodec,
  completed,
  failed,
  hashCursor,
  itemBatch,
  type JobStore,
  type ParamsValidation,
  parseParams,
  type RecoverableJobHandler,
  type RunOutcome,
  runBatches,
} from '@oxicloud/recoverable';
import { type Logger, silentLogger } from '@oxicloud/scheduler';
import { destroyStream, errorCode } from '../blob-stream.js';
import { TenantsError } from '../errors.js';
import { STORAGE_MIGRATION_JOB_NAME } from '../job-names.js';
import type { BlobStorage } from '../ports/blob-storage.js';
import type { BlobRow, BlobWalkRepository } from '../ports/blob-walk-repository.js';
import { errorMessage } from '../run-support.js';
import {
  BLOB_BACKEND_NAMES,
  type BlobBackendName,
  type StorageMigrationParams,
  storageMigrationParamsSchema,
} from './storage-migration-params.js';

/** Log target of the migration's lines. */
const LOG_TARGET = 'oxicloud::storage';

/** Finding kind recorded for every blob that could not be copied. */
export const MIGRATION_FAILED_KIND = 'migration_failed';

/**
 * Why a blob was not copied (`detail.reason` of a `migration_failed` finding):
 * - `source_missing`: the source backend has no bytes for a blob row.
 * - `read_failed`: the source backend failed to stream the bytes.
 * - `write_failed`: the target refused or failed the write.
 * - `size_mismatch`: after the copy the target holds a different size than `storage.blobs.size`.
 * - `hash_mismatch`: the target verified the bytes and they do not hash to the key.
 * - `target_check_failed`: asking the target whether it has the blob failed.
 */
export type MigrationFailureReason =
  | 'source_missing'
  | 'read_failed'
  | 'write_failed'
  | 'size_mismatch'
  | 'hash_mismatch'
  | 'target_check_failed';

/** Stats counters of a migration run (`stats.<name>`, summed over checkpoints). */
export const STORAGE_MIGRATION_COUNTERS = [
  'copied_blobs',
  'skipped_blobs',
  'failed_blobs',
  'bytes_copied',
  'catch_up_scanned_blobs',
  'catch_up_copied_blobs',
] as const;

/** Options of {@link createStorageMigrationJob}. */
export interface StorageMigrationJobOptions {
  /** Reads `storage.blobs` in hash order. */
  readonly blobs: BlobWalkRepository;
  /** The backend the server serves from (`OXICLOUD_STORAGE_BACKEND`): the source of every copy. */
  readonly sourceBackend: BlobBackendName;
  /**
   * The backend of that name, or `null` when this server has no settings
   * for it (no S3 bucket configured). Called when params are validated and
   * when a run starts.
   */
  readonly resolveBackend: (name: BlobBackendName) => BlobStorage | null;
  /**
   * Where failed copies are recorded (`jobs.run_findings`, kind
   * `migration_failed`). Without it failures are only counted and logged.
   */
  readonly findings?: FindingWriter;
  readonly logger?: Logger;
  /** Longest batch before a checkpoint, in ms. @defaultValue 30000 */
  readonly maxBatchMs?: number;
}

/** The `storage_migration` handler. */
export interface StorageMigrationJob extends RecoverableJobHandler {
  readonly name: typeof STORAGE_MIGRATION_JOB_NAME;
  /** The one finding kind it records, `migration_failed` (what the admin API lists and `--kind` accepts). */
  readonly findingKinds: readonly FindingKind[];
  /** Validates trigger params; refuses a target equal to the source or not configured here. */
  validateParams(raw: unknown): ParamsValidation;
  /** Number of `storage.blobs` rows: what a full run walks. */
  estimateTotal(params: Readonly<Record<string, unknown>>): Promise<number | null>;
}

/** Phase byte of a catch-up cursor: `[2]` (catch-up, nothing done yet) or `[2, …32-byte hash]`. */
const CATCH_UP_PHASE = 2;
/**
 * The catch-up pass covers blobs created from this long before the run
 * started: a row's `created_at` is its transaction's start, so a long upload
 * transaction begun before the run can commit after the main pass went by.
 */
const CATCH_UP_MARGIN_MS = 60 * 60 * 1000;

/** Cursors of the main pass are 0 or 32 bytes; of the catch-up pass, 1 or 33. */
function isCatchUpCursor(cursor: Uint8Array | null): boolean {
  return cursor !== null && (cursor.length === 1 || cursor.length === 33) && cursor[0] === CATCH_UP_PHASE;
}

/** Catch-up cursor = the phase byte, then the 32 bytes of the last hash. */
const catchUpCursor: CursorCodec = {
  keyName: 'blob hash (catch-up pass)',
  encode: (key) => Uint8Array.of(CATCH_UP_PHASE, ...hashCursor.encode(key)),
  decode(bytes) {
    if (bytes.length !== 33 || bytes[0] !== CATCH_UP_PHASE) {
      throw new TenantsError(
        'INVALID_CONFIG',
        `a catch-up cursor is 33 bytes starting with ${CATCH_UP_PHASE}, got ${bytes.length}`,
      );
    }
    return hashCursor.decode(bytes.subarray(1));
  },
};

/** Severity of a failed copy; see {@link createStorageMigrationJob}. */
const FAILURE_SEVERITY = 'DataLoss' as const;

const FINDING_KINDS: readonly FindingKind[] = [
  {
    kind: MIGRATION_FAILED_KIND,
    severity: FAILURE_SEVERITY,
    meaning: 'a blob the run could not copy to the target (why in its detail); a later run retries it',
  },
];

interface CopyFailure {
  readonly reason: MigrationFailureReason;
  readonly message: string;
  readonly actualSize?: number;
}

/**
 * Creates `storage_migration`: copies every blob of `storage.blobs` from the
 * backend the server serves from to the other one (`local` → `s3` or
 * `s3` → `local`), walking in hash order (cursor = the 32 bytes of the last
 * hash).
 *
 * Per blob: if the target already holds it with the recorded size, it is
 * skipped; otherwise the bytes are streamed from source to target and the
 * target's size is checked against `storage.blobs.size`. A blob that could
 * not be copied is counted in `stats.failed_blobs`, logged
 * (`storage_migration.blob_failed`) and recorded as a `migration_failed`
 * finding; the run goes on. `stats.count` = blobs now on the target (copied +
 * skipped); `stats.copied_blobs`, `skipped_blobs`, `failed_blobs`,
 * `bytes_copied` break it down.
 *
 * Severity of `migration_failed` is `DataLoss`: the target is about to become
 * the only copy (the point of a migration is to switch the server over), so a
 * blob missing or wrong there is user bytes a GET will not find after the
 * switch; and `source_missing` is data already lost. Nothing here is
 * `Reclaimable` or `Regenerable`, and `Drift` would let an operator dismiss it.
 *
 * Resumable: batches of `batch_size` (1000) blobs or 30 s, a checkpoint and a
 * cancel poll after each; `CancelRequested` or shutdown → `paused` with the
 * cursor; a resume re-checks only the unfinished batch, and blobs already on
 * the target are skipped, not copied again. `max_consecutive_failures` copies
 * failing in a row end the run `Failed` (the target is down).
 *
 * Blobs written while the run walks may land below the cursor, so after the
 * main pass a catch-up pass walks the blobs created since the run started
 * (an hour's margin before it), hash order again (cursor = phase byte 2 +
 * hash, 33 bytes); it reports `stats.catch_up_scanned_blobs` (not
 * `scanned_count`, which stays the main pass's progress) and
 * `stats.catch_up_copied_blobs`; a blob failing again there is not counted
 * twice when a finding sink is wired.
 * Blobs uploaded after the catch-up pass went by are still missed: stop
 * uploads, trigger once more (cheap: present blobs are skipped), then switch
 * `OXICLOUD_STORAGE_BACKEND`.
 *
 * @throws {TenantsError} `INVALID_CONFIG` when `sourceBackend` is not a backend name.
 */
export function createStorageMigrationJob(options: StorageMigrationJobOptions): StorageMigrationJob {
  const { blobs, sourceBackend, resolveBackend } = options;
  const logger = options.logger ?? silentLogger;
  if (!(BLOB_BACKEND_NAMES as readonly string[]).includes(sourceBackend)) {
    throw new TenantsError(
      'INVALID_CONFIG',
      `storage_migration: source backend ${JSON.stringify(sourceBackend)} is not allowed; ` +
        `expected one of ${BLOB_BACKEND_NAMES.join(', ')}`,
    );
  }

  function validate(
    raw: unknown,
  ): { ok: true; params: StorageMigrationParams } | { ok: false; message: string } {
    const parsed = parseParams(storageMigrationParamsSchema, raw);
    if (!parsed.ok) return parsed;
    const { target } = parsed.params;
    if (target === sourceBackend) {
      const other = BLOB_BACKEND_NAMES.filter((name) => name !== sourceBackend).join(', ');
      return {
        ok: false,
        message:
          `target ${JSON.stringify(target)} is the backend this ` +
          `server serves from, so there is nothing to copy; allowed target: ${other}`,
      };
    }
    if (resolveBackend(target) === null) {
      return {
        ok: false,
        message:
          `target ${JSON.stringify(target)} is not configured on ` +
          `this server; configure its settings and restart, then trigger again`,
      };
    }
    return parsed;
  }

  async function run(store: JobStore, signal: AbortSignal): Promise<RunOutcome> {
    const validation = validate(store.params);
    if (!validation.ok)
      return failed(`invalid params for ${STORAGE_MIGRATION_JOB_NAME}: ${validation.message}`);
    const params = validation.params;
    const resolvedSource = resolveBackend(sourceBackend);
    const resolvedTarget = resolveBackend(params.target);
    if (resolvedSource === null || resolvedTarget === null) {
      const which = resolvedSource === null ? 'source' : 'target';
      return failed(`storage_migration: the ${which} backend is not configured`);
    }
    const source: BlobStorage = resolvedSource;
    const target: BlobStorage = resolvedTarget;
    try {
      const health = await target.health();
      if (!health.ok) {
        return failed(
          `storage_migration: target backend ${params.target} is not healthy (${health.message ?? 'no detail'}); ` +
            'nothing was copied, fix it and trigger again to resume',
        );
      }
    } catch (error) {
      return failed(
        `storage_migration: target backend ${params.target} health check failed: ${errorMessage(error)}`,
      );
    }
    const sink =
      options.findings === undefined
        ? undefined
        : new FindingBatch({
            runId: store.runId,
            checkName: STORAGE_MIGRATION_JOB_NAME,
            writer: options.findings,
            logger,
            tally: false,
          });
    const base = { target: LOG_TARGET, job: STORAGE_MIGRATION_JOB_NAME, run_id: store.runId };
    logger.info(
      { ...base, event: 'storage_migration.started', source: sourceBackend, destination: params.target },
      `storage_migration: copying blobs from ${sourceBackend} to ${params.target}`,
    );
    let consecutiveFailures = 0;

    async function copy(blob: BlobRow): Promise<CopyFailure | 'copied' | 'skipped'> {
      let present: Awaited<ReturnType<BlobStorage['head']>>;
      try {
        present = await target.head(blob.hash);
      } catch (error) {
        return { reason: 'target_check_failed', message: errorMessage(error) };
      }
      if (present !== null && present.size === blob.size) return 'skipped';
      let stream: Awaited<ReturnType<BlobStorage['get']>>;
      try {
        stream = await source.get(blob.hash);
      } catch (error) {
        const reason = errorCode(error) === 'NOT_FOUND' ? 'source_missing' : 'read_failed';
        return { reason, message: errorMessage(error) };
      }
      try {
        await target.put(blob.hash, stream, blob.size);
      } catch (error) {
        const code = errorCode(error);
        const reason =
          code === 'SIZE_MISMATCH'
            ? 'size_mismatch'
            : code === 'HASH_MISMATCH'
              ? 'hash_mismatch'
              : 'write_failed';
        return { reason, message: errorMessage(error) };
      } finally {
        destroyStream(stream);
      }
      let written: Awaited<ReturnType<BlobStorage['head']>>;
      try {
        written = await target.head(blob.hash);
      } catch (error) {
        return { reason: 'target_check_failed', message: `after the copy: ${errorMessage(error)}` };
      }
      if (written === null || written.size !== blob.size) {
        return {
          reason: 'size_mismatch',
          message: `expected ${blob.size} bytes on ${params.target}, found ${written === null ? 'none' : written.size}`,
          ...(written === null ? {} : { actualSize: written.size }),
        };
      }
      return 'copied';
    }

    async function processBlob(blob: BlobRow, tally: BatchTally, catchUp: boolean): Promise<void> {
      const result = await copy(blob);
      if (result === 'copied' || result === 'skipped') {
        consecutiveFailures = 0;
        if (result === 'copied') {
          tally.count += 1;
          tally.add('copied_blobs');
          tally.add('bytes_copied', blob.size);
          if (catchUp) tally.add('catch_up_copied_blobs');
        } else if (!catchUp) {
          // In the catch-up pass a present blob was counted by the main pass already.
          tally.count += 1;
          tally.add('skipped_blobs');
        }
        return;
      }
      consecutiveFailures += 1;
      logger.warn(
        {
          ...base,
          event: 'storage_migration.blob_failed',
          hash: blob.hash,
          size: blob.size,
          reason: result.reason,
        },
        `storage_migration: blob ${blob.hash} not copied (${result.reason}): ${result.message}`,
      );
      if (sink) {
        const finding: Inconsistency = {
          kind: MIGRATION_FAILED_KIND,
          severity: FAILURE_SEVERITY,
          resourceId: blob.hash,
          detail: {
            reason: result.reason,
            message: result.message,
            source: sourceBackend,
            target: params.target,
            expected_size: blob.size,
            ...(result.actualSize === undefined ? {} : { actual_size: result.actualSize }),
          },
        };
        // The catch-up pass revisits blobs the main pass saw: a blob fails once in the stats.
        if (catchUp) sink.recordFinding(finding, { countIfNew: 'failed_blobs' });
        else {
          sink.recordFinding(finding);
          tally.add('failed_blobs');
        }
      } else {
        tally.add('failed_blobs');
      }
      if (consecutiveFailures >= params.max_consecutive_failures) {
        throw new Error(
          `${consecutiveFailures} copies in a row failed (last: ${result.reason}: ${result.message}); ` +
            `is the ${params.target} backend reachable? Fix it and trigger again to resume`,
        );
      }
    }

    const loop = {
      name: STORAGE_MIGRATION_JOB_NAME,
      store,
      signal,
      logger,
      logTarget: LOG_TARGET,
      batchSize: params.batch_size,
      throttleMs: params.throttle_ms,
      maxBatchMs: options.maxBatchMs,
    };
    // The batch's failed-copy findings commit with its checkpoint.
    const finish = () => (sink?.pending ? { writes: sink.writes, committed: () => sink.committed() } : {});
    const stored = store.facts.cursor;
    let outcome: RunOutcome = completed();
    if (!isCatchUpCursor(stored)) {
      outcome = await runBatches({
        ...loop,
        describeCursor: (cursor) => `after blob hash ${hashCursor.decode(cursor)}`,
        batch: itemBatch<BlobRow>({
          codec: hashCursor,
          keyOf: (blob) => blob.hash,
          fetchPage: (after, limit) => blobs.listBlobsAfter(after, limit),
          processItem: (blob, tally) => processBlob(blob, tally, false),
          counterNames: STORAGE_MIGRATION_COUNTERS,
          concurrency: params.concurrency,
          finish,
        }),
      });
    }
    if (outcome.kind === 'completed') {
      // Blobs written since the run started may sit below the cursor: one more pass over just those.
      const since = new Date(store.startedAt.getTime() - CATCH_UP_MARGIN_MS);
      outcome = await runBatches({
        ...loop,
        // A main-pass cursor (or the bare phase byte) means: the catch-up pass starts from its beginning.
        from: stored !== null && stored.length === 33 && stored[0] === CATCH_UP_PHASE ? stored : null,
        emptyCursor: Uint8Array.of(CATCH_UP_PHASE),
        describeCursor: (cursor) => `after blob hash ${catchUpCursor.decode(cursor)} (catch-up pass)`,
        batch: itemBatch<BlobRow>({
          codec: catchUpCursor,
          keyOf: (blob) => blob.hash,
          fetchPage: (after, limit) => blobs.listBlobsCreatedSince(since, after, limit),
          processItem: (blob, tally) => processBlob(blob, tally, true),
          counterNames: STORAGE_MIGRATION_COUNTERS,
          concurrency: params.concurrency,
          scannedAs: 'catch_up_scanned_blobs',
          finish,
        }),
      });
    }
    logger.info(
      { ...base, event: 'storage_migration.finished', outcome: outcome.kind },
      `storage_migration: ${outcome.kind}`,
    );
    return outcome;
  }

  return {
    name: STORAGE_MIGRATION_JOB_NAME,
    findingKinds: FINDING_KINDS,
    validateParams: (raw) => validate(raw),
    estimateTotal: () => blobs.countBlobs(),
    runResumable: run,
  };
}

export { STORAGE_MIGRATION_JOB_NAME };
