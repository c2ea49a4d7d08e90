import { z } from 'zod';

/** What `validateParams` returns: the normalised params (defaults filled in) or why they were refused. */
export type ParamsValidation =
  | { readonly ok: true; readonly params: Record<string, unknown> }
  | { readonly ok: false; readonly message: string };

/** Defaults and bounds of the batch knobs every walk shares (`batch_size`, `concurrency`, `throttle_ms`). */
export const WALK_LIMITS = {
  batchSize: { defaultValue: 1000, min: 1, max: 10_000 },
  concurrency: { min: 1, max: 32 },
  throttleMs: { defaultValue: 0, min: 0, max: 60_000 },
} as const;

/** `batch_size`: rows per page and per checkpoint, 1..10000, default 1000. */
export const batchSizeField = z
  .number()
  .int()
  .min(WALK_LIMITS.batchSize.min)
  .max(WALK_LIMITS.batchSize.max)
  .default(WALK_LIMITS.batchSize.defaultValue);

/** `concurrency`: items processed at once within a batch, 1..32. */
export const concurrencyField = (defaultValue: number) =>
  z.number().int().min(WALK_LIMITS.concurrency.min).max(WALK_LIMITS.concurrency.max).default(defaultValue);

/** `throttle_ms`: pause between batches so live traffic keeps its latency, 0..60000, default 0. */
export const throttleMsField = z
  .number()
  .int()
  .min(WALK_LIMITS.throttleMs.min)
  .max(WALK_LIMITS.throttleMs.max)
  .default(WALK_LIMITS.throttleMs.defaultValue);

/**
 * Validates `raw` against `schema`; the refusal message names every bad
 * field with what is allowed, prefixed by the job name.
 */
export function parseParams<T extends Record<string, unknown>>(
  jobName: string,
  schema: z.ZodType<T>,
  raw: unknown,
): { ok: true; params: T } | { ok: false; message: string } {
  const result = schema.safeParse(raw ?? {});
  if (result.success) return { ok: true, params: result.data };
  const problems = result.error.issues.map((issue) => {
    const where = issue.path.length > 0 ? issue.path.join('.') : 'params';
    return `${where}: ${issue.message}`;
  });
  return { ok: false, message: `invalid params for ${jobName}: ${problems.join('; ')}` };
}
