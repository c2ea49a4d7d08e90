import { BATCH_LIMITS, batchSizeField, concurrencyField, throttleMsField } from '@oxicloud/recoverable';
import { z } from 'zod';

/** The blob backends a migration can copy between. */
export const BLOB_BACKEND_NAMES = ['local', 's3'] as const;

/** `local` (the data folder) or `s3`. */
export type BlobBackendName = (typeof BLOB_BACKEND_NAMES)[number];

/** Defaults of the `storage_migration` params, in one place. */
export const STORAGE_MIGRATION_DEFAULTS = {
  concurrency: 4,
  maxConsecutiveFailures: 100,
} as const;

/**
 * Params of a `storage_migration` run (the trigger body). Unknown keys are
 * refused, so a typo (`batchsize`) is an error rather than a silent default.
 *
 * - `target` (required): `local` | `s3`, the backend to copy onto; must not be
 *   the backend the server serves from.
 * - `batch_size`: blobs per page and checkpoint, 1..10000, default 1000.
 * - `concurrency`: copies in flight, 1..32, default 4.
 * - `throttle_ms`: pause between batches, 0..60000, default 0.
 * - `max_consecutive_failures`: the run ends `Failed` after this many copies
 *   in a row failed (the target is down, not a few bad blobs), 1..1000000,
 *   default 100.
 */
export const storageMigrationParamsSchema = z.strictObject({
  target: z.enum(BLOB_BACKEND_NAMES, {
    error: (issue) =>
      issue.input === undefined
        ? `required; one of ${BLOB_BACKEND_NAMES.map((n) => `"${n}"`).join(', ')}`
        : `${JSON.stringify(issue.input)} is not a backend; one of ${BLOB_BACKEND_NAMES.map((n) => `"${n}"`).join(', ')}`,
  }),
  batch_size: batchSizeField.default(BATCH_LIMITS.batchSize.defaultValue),
  concurrency: concurrencyField(STORAGE_MIGRATION_DEFAULTS.concurrency),
  throttle_ms: throttleMsField.default(BATCH_LIMITS.throttleMs.defaultValue),
  max_consecutive_failures: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(STORAGE_MIGRATION_DEFAULTS.maxConsecutiveFailures),
});

/** Validated `storage_migration` params, defaults filled in. */
export type StorageMigrationParams = z.infer<typeof storageMigrationParamsSchema>;
