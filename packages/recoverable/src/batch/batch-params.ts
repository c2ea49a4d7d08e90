import { z } from 'zod';
import { RUN_OPTION_KEYS } from '../run-options.js';

/** Defaults and bounds of the batch knobs every recoverable run shares. */
export const BATCH_LIMITS = {
  batchSize: { defaultValue: 1000, min: 1, max: 10_000 },
  throttleMs: { defaultValue: 0, min: 0, max: 60_000 },
  concurrency: { min: 1, max: 32 },
} as const;

/** A digit string (from a query string) as its number; anything else as it is. For `z.preprocess`. */
export function digitStringAsNumber(value: unknown): unknown {
  return typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
}

/** An integer in `min..max`. The refusal says what is allowed and what came. */
export function integerField(range: { readonly min: number; readonly max: number }) {
  return z
    .number({
      error: (issue) =>
        `expected an integer number in ${range.min}..${range.max}, got ${JSON.stringify(issue.input)}`,
    })
    .int({ error: (issue) => `expected an integer in ${range.min}..${range.max}, got ${issue.input}` })
    .min(range.min, {
      error: (issue) => `expected >=${range.min} (${range.min}..${range.max}), got ${issue.input}`,
    })
    .max(range.max, {
      error: (issue) => `expected <=${range.max} (${range.min}..${range.max}), got ${issue.input}`,
    });
}

/** `batch_size`: rows per batch and per checkpoint, 1..10000 (the loop's default is 1000). */
export const batchSizeField = integerField(BATCH_LIMITS.batchSize);
/** `throttle_ms`: pause between batches so live traffic keeps its latency, 0..60000 (default 0). */
export const throttleMsField = integerField(BATCH_LIMITS.throttleMs);
/** `concurrency`: items processed at once within a batch, 1..32. */
export const concurrencyField = (defaultValue: number) =>
  integerField(BATCH_LIMITS.concurrency).default(defaultValue);

/**
 * The params every batch run shares, as a zod shape to spread into a job's
 * own object schema (`z.object({ ...batchParamsShape, target: … })`); both
 * keys are optional and the loop fills in the defaults. A job that wants them
 * stored normalised uses `.default(...)` on its own copy.
 */
export const batchParamsShape = {
  batch_size: batchSizeField.optional(),
  throttle_ms: throttleMsField.optional(),
} as const;

/**
 * The batch params as a trigger's query string may give them (`"500"` for
 * 500): the same fields, digit strings read as numbers.
 */
export const batchParamsFromQueryShape = {
  batch_size: z.preprocess(digitStringAsNumber, batchSizeField.optional()),
  throttle_ms: z.preprocess(digitStringAsNumber, throttleMsField.optional()),
} as const;

/**
 * A fresh run's params object: the keys of `shape` only. An unknown key is
 * refused with a message naming it and the allowed ones, the run options a
 * trigger also takes first (`unknown keys "x", "y"; allowed: force, deep,
 * batch_size, throttle_ms`). Stored runs are read with the job's lenient
 * schema, so a rule added later never blocks a resume.
 */
export function strictParamsObject<S extends z.ZodRawShape>(shape: S) {
  const allowed = [...RUN_OPTION_KEYS, ...Object.keys(shape)].join(', ');
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code !== 'unrecognized_keys') return undefined;
      const keys = issue.keys;
      const shown = keys.slice(0, 5).map((key) => JSON.stringify(key.slice(0, 64)));
      return `unknown key${keys.length > 1 ? 's' : ''} ${shown.join(', ')}${keys.length > 5 ? ', …' : ''}; allowed: ${allowed}`;
    },
  });
}

/** The batch params alone, as an object schema (unknown keys pass through: the caller decides). */
export const batchParamsSchema = z.looseObject(batchParamsShape);

/** Validated batch params. */
export type BatchParams = z.infer<typeof batchParamsSchema>;

/**
 * Validates a job's params `raw` against `schema`; the refusal message names
 * every bad field with what is allowed (`batch_size: expected >=1 (1..10000),
 * got 0`); an issue of the whole object (unknown keys) carries no field name.
 * The run options (`force`, `deep`) are never a job's params: the engine
 * takes them out at the trigger, and a stored row's keys of that name,
 * handed here directly, are left out rather than refused.
 */
export function parseParams<T>(
  schema: z.ZodType<T>,
  raw: unknown,
): { ok: true; params: T } | { ok: false; message: string } {
  const result = schema.safeParse(withoutOptionKeys(raw ?? {}));
  if (result.success) return { ok: true, params: result.data };
  const problems = result.error.issues.map((issue) => {
    return issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message;
  });
  return { ok: false, message: problems.join('; ') };
}

function withoutOptionKeys(params: unknown): unknown {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return params;
  return Object.fromEntries(
    Object.entries(params).filter(([key]) => !(RUN_OPTION_KEYS as readonly string[]).includes(key)),
  );
}
