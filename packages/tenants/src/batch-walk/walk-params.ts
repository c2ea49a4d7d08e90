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

/** Param keys the engine owns (`?force`, `?deep`): stripped before a tenant's schema sees the params. */
export const ENGINE_PARAM_KEYS: readonly string[] = ['force', 'deep'];

/** The params without the engine's keys (a run's stored params carry `force` and `deep`). */
export function withoutEngineKeys(params: unknown): unknown {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return params;
  return Object.fromEntries(Object.entries(params).filter(([key]) => !ENGINE_PARAM_KEYS.includes(key)));
}

/**
 * Validates `raw` against `schema`; the refusal message names every bad
 * field with what is allowed (`concurrency: Too big: expected number to be
 * <=32`). The engine prefixes it with `invalid params for <job>: `.
 */
export function parseParams<T extends Record<string, unknown>>(
  schema: z.ZodType<T>,
  raw: unknown,
): { ok: true; params: T } | { ok: false; message: string } {
  const result = schema.safeParse(raw ?? {});
  if (result.success) return { ok: true, params: result.data };
  const problems = result.error.issues.map((issue) => {
    const where = issue.path.length > 0 ? issue.path.join('.') : 'params';
    return `${where}: ${issue.message}`;
  });
  return { ok: false, message: problems.join('; ') };
}
