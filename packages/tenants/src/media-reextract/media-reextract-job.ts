import {
  BATCH_LIMITS,
  type BatchTally,
  batchSizeField,
  concurrencyField,
  failed,
  itemBatch,
  type JobStore,
  type ParamsValidation,
  parseParams,
  type RecoverableJobHandler,
  type RunOutcome,
  runBatches,
  throttleMsField,
  uuidCursor,
} from '@oxicloud/recoverable';
import { type Logger, silentLogger } from '@oxicloud/scheduler';
import { z } from 'zod';
import { type BlobStream, destroyStream, errorCode } from '../blob-stream.js';
import type { BlobStorage } from '../ports/blob-storage.js';
import type { MediaFileRepository, MediaFileRow } from '../ports/media-file-repository.js';
import { errorMessage } from '../run-support.js';

/** Default number of files parsed at once. */
export const MEDIA_REEXTRACT_DEFAULT_CONCURRENCY = 2;

/**
 * Params of a `reextract_audio` / `reextract_image` run. Unknown keys are refused.
 * - `batch_size`: files per page and checkpoint, 1..10000, default 1000.
 * - `concurrency`: files parsed at once, 1..32, default 2.
 * - `throttle_ms`: pause between batches, 0..60000, default 0.
 */
export const mediaReextractParamsSchema = z.strictObject({
  batch_size: batchSizeField.default(BATCH_LIMITS.batchSize.defaultValue),
  concurrency: concurrencyField(MEDIA_REEXTRACT_DEFAULT_CONCURRENCY),
  throttle_ms: throttleMsField.default(BATCH_LIMITS.throttleMs.defaultValue),
});

/** Validated re-extraction params, defaults filled in. */
export type MediaReextractParams = z.infer<typeof mediaReextractParamsSchema>;

/**
 * Stats counters of a re-extraction run: files whose metadata was written,
 * files that failed (missing or unparsable bytes), files deleted while the
 * run read them (nothing to write).
 */
export const MEDIA_REEXTRACT_COUNTERS = ['updated_files', 'failed_files', 'vanished_files'] as const;

/**
 * Why a file's metadata was not re-extracted (logged as `reason`):
 * - `missing_blob`: the backend has no bytes for the file's blob.
 * - `read_failed`: the backend failed to stream the bytes.
 * - `unparsable`: the parser refused the bytes (corrupt, or not the format the mime type says).
 */
export type ReextractFailureReason = 'missing_blob' | 'read_failed' | 'unparsable';

/** Thrown by an extractor for bytes it cannot parse; counted as `unparsable`. */
export class UnparsableMediaError extends Error {
  override readonly name = 'UnparsableMediaError';
}

/** The per-kind part of a re-extraction tenant. */
export interface MediaExtractor<Metadata> {
  /** Job name: `reextract_audio`, `reextract_image`. */
  readonly name: string;
  /** Mime-type prefixes of the files walked (`audio/`). */
  readonly mimePrefixes: readonly string[];
  /**
   * Parses the file's bytes. The stream is destroyed by the caller afterwards,
   * so an extractor may stop reading early. Throws for bytes it cannot parse.
   */
  extract(file: MediaFileRow, stream: BlobStream): Promise<Metadata>;
  /** Writes the metadata row; `false` when the file was deleted meanwhile. */
  upsert(files: MediaFileRepository, fileId: string, metadata: Metadata): Promise<boolean>;
}

/** Options every re-extraction tenant factory takes. */
export interface MediaReextractJobOptions {
  /** Walks `storage.files` by id and writes the metadata tables. */
  readonly files: MediaFileRepository;
  /** The backend the server serves from; only `get` is used. */
  readonly blobs: Pick<BlobStorage, 'get'>;
  readonly logger?: Logger;
  /** Longest batch before a checkpoint, in ms. @defaultValue 30000 */
  readonly maxBatchMs?: number;
}

/** A re-extraction handler. */
export interface MediaReextractJob extends RecoverableJobHandler {
  /** Validates trigger params (`batch_size`, `concurrency`, `throttle_ms`). */
  validateParams(raw: unknown): ParamsValidation;
  /** Number of files the run walks (matching the mime prefixes). */
  estimateTotal(params: Readonly<Record<string, unknown>>): Promise<number | null>;
}

const LOG_TARGET = 'oxicloud::media';

/**
 * Builds a resumable re-extraction over `storage.files` by id (cursor = the
 * 16 bytes of the last file id): per file, stream the blob, parse it, upsert
 * the metadata row. A file whose bytes are missing or unparsable is counted
 * in `stats.failed_files`, logged (`<name>.file_failed`) and skipped; the
 * run goes on. `stats.count` = `stats.updated_files` = metadata rows written.
 * Batches of `batch_size` files or 30 s; checkpoint and cancel poll between
 * them; `CancelRequested` or shutdown → `paused` with the cursor.
 */
export function createMediaReextractJob<Metadata>(
  extractor: MediaExtractor<Metadata>,
  options: MediaReextractJobOptions,
): MediaReextractJob {
  const { files, blobs } = options;
  const logger = options.logger ?? silentLogger;
  const validate = (raw: unknown) => parseParams(mediaReextractParamsSchema, raw);

  async function extractOne(
    file: MediaFileRow,
  ): Promise<
    { ok: true; metadata: Metadata } | { ok: false; reason: ReextractFailureReason; message: string }
  > {
    let stream: BlobStream;
    try {
      stream = await blobs.get(file.blobHash);
    } catch (error) {
      const reason = errorCode(error) === 'NOT_FOUND' ? 'missing_blob' : 'read_failed';
      return { ok: false, reason, message: errorMessage(error) };
    }
    try {
      return { ok: true, metadata: await extractor.extract(file, stream) };
    } catch (error) {
      // A backend failing mid-stream carries a code; a parser's complaint does not.
      const reason = errorCode(error) === undefined ? 'unparsable' : 'read_failed';
      return { ok: false, reason, message: errorMessage(error) };
    } finally {
      destroyStream(stream);
    }
  }

  async function run(store: JobStore, signal: AbortSignal): Promise<RunOutcome> {
    const validation = validate(store.params);
    if (!validation.ok) return failed(`invalid params for ${extractor.name}: ${validation.message}`);
    const params = validation.params;
    const base = { target: LOG_TARGET, job: extractor.name, run_id: store.runId };

    async function processFile(file: MediaFileRow, tally: BatchTally): Promise<void> {
      const result = await extractOne(file);
      if (!result.ok) {
        tally.add('failed_files');
        logger.warn(
          {
            ...base,
            event: `${extractor.name}.file_failed`,
            file_id: file.id,
            blob_hash: file.blobHash,
            mime_type: file.mimeType,
            reason: result.reason,
          },
          `${extractor.name}: file ${file.id} skipped (${result.reason}): ${result.message}`,
        );
        return;
      }
      if (!(await extractor.upsert(files, file.id, result.metadata))) {
        tally.add('vanished_files');
        return;
      }
      tally.add('updated_files');
      tally.count += 1;
    }

    const outcome = await runBatches({
      name: extractor.name,
      store,
      signal,
      logger,
      logTarget: LOG_TARGET,
      batchSize: params.batch_size,
      throttleMs: params.throttle_ms,
      maxBatchMs: options.maxBatchMs,
      describeCursor: (cursor) => `after file id ${uuidCursor.decode(cursor)}`,
      batch: itemBatch<MediaFileRow>({
        codec: uuidCursor,
        keyOf: (file) => file.id,
        fetchPage: (after, limit) =>
          files.listFilesAfter({ mimePrefixes: extractor.mimePrefixes, afterId: after, limit }),
        processItem: (file, tally) => processFile(file, tally),
        counterNames: MEDIA_REEXTRACT_COUNTERS,
        concurrency: params.concurrency,
      }),
    });
    logger.info(
      { ...base, event: `${extractor.name}.finished`, outcome: outcome.kind },
      `${extractor.name}: ${outcome.kind}`,
    );
    return outcome;
  }

  return {
    name: extractor.name,
    validateParams: validate,
    estimateTotal: () => files.countFiles(extractor.mimePrefixes),
    runResumable: run,
  };
}
