import { BATCH_LIMITS, batchParamsFromQueryShape, parseParams } from '@oxicloud/recoverable';
import { z } from 'zod';
import type { CheckOptions } from './consistency-check.js';

/** Rows per batch when `batch_size` is not given. */
export const DEFAULT_BATCH_SIZE = BATCH_LIMITS.batchSize.defaultValue;

/** The result of {@link validateCheckParams}: never throws. */
export type CheckParamsValidation =
  | { readonly ok: true; readonly params: Readonly<Record<string, unknown>>; readonly options: CheckOptions }
  | { readonly ok: false; readonly message: string };

/** `true`/`false`, also as the strings `true`/`false`/`1`/`0` of a query string. */
const flag = z.preprocess(
  (value) => (value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value),
  z.boolean({ error: (issue) => `expected true or false, got ${JSON.stringify(issue.input)}` }).optional(),
);

/**
 * The params of a consistency run: the kit's batch params (`batch_size`,
 * `throttle_ms`) plus `force` and `deep`. Unknown keys are kept (a zod object
 * that the trigger may make strict).
 */
export const checkParamsSchema = z.looseObject({ ...batchParamsFromQueryShape, force: flag, deep: flag });

/**
 * Validates the params of a consistency run (`{ force?, deep?, batch_size?,
 * throttle_ms? }`, as stored in `jobs.recoverable_runs.params`) without
 * throwing. On success, `params` is the normalised object to store (typed
 * values) and `options` the {@link CheckOptions} a run gets.
 *
 * @example
 * ```ts
 * validateCheckParams({ batch_size: 0 });
 * // → { ok: false, message: 'invalid consistency check params: batch_size: expected >=1 (1..10000), got 0' }
 * ```
 */
export function validateCheckParams(params: unknown): CheckParamsValidation {
  if (params !== undefined && params !== null && (typeof params !== 'object' || Array.isArray(params))) {
    const got = Array.isArray(params) ? 'an array' : typeof params;
    return { ok: false, message: `consistency check params must be a JSON object, got ${got}` };
  }
  const parsed = parseParams(checkParamsSchema, params);
  if (!parsed.ok) return { ok: false, message: `invalid consistency check params: ${parsed.message}` };
  const normalised = Object.fromEntries(Object.entries(parsed.params).filter(([, v]) => v !== undefined));
  const { force, deep, batch_size: batchSize, throttle_ms: throttleMs } = parsed.params;
  const options: CheckOptions = {
    force: force ?? false,
    deep: deep ?? false,
    ...(batchSize !== undefined ? { batchSize } : {}),
    ...(throttleMs !== undefined ? { throttleMs } : {}),
  };
  return { ok: true, params: normalised, options };
}
