import type { CheckOptions } from './consistency-check.js';

/** Rows per batch when `batch_size` is not given. */
export const DEFAULT_BATCH_SIZE = 1000;
/** Allowed range of `batch_size`. */
export const BATCH_SIZE_RANGE = { min: 1, max: 10_000 } as const;
/** Allowed range of `throttle_ms`. */
export const THROTTLE_MS_RANGE = { min: 0, max: 60_000 } as const;

/** The result of {@link validateCheckParams}: never throws. */
export type CheckParamsValidation =
  | { readonly ok: true; readonly params: Readonly<Record<string, unknown>>; readonly options: CheckOptions }
  | { readonly ok: false; readonly message: string; readonly errors: readonly string[] };

function readBoolean(value: unknown, key: string, errors: string[]): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  errors.push(`${key} must be true or false, got ${JSON.stringify(value)}`);
  return undefined;
}

function readInteger(
  value: unknown,
  key: string,
  range: { readonly min: number; readonly max: number },
  errors: string[],
): number | undefined {
  if (value === undefined || value === null) return undefined;
  const n = typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < range.min || n > range.max) {
    errors.push(`${key} must be an integer in ${range.min}..${range.max}, got ${JSON.stringify(value)}`);
    return undefined;
  }
  return n;
}

/**
 * Validates the params of a consistency run (`{ force?, deep?, batch_size?,
 * throttle_ms? }`, as the trigger stores them in `jobs.recoverable_runs.params`)
 * without throwing. Booleans accept `true`/`false` (also as strings, from a
 * query string); integers accept numbers or digit strings. Keys the checks do
 * not know are kept and ignored. On success, `params` is the normalised object
 * to store (typed values) and `options` the {@link CheckOptions} a run gets.
 *
 * @example
 * ```ts
 * validateCheckParams({ batch_size: 0 });
 * // → { ok: false, message: 'invalid consistency check params: batch_size must be an integer in 1..10000, got 0', … }
 * ```
 */
export function validateCheckParams(params: unknown): CheckParamsValidation {
  if (params === undefined || params === null) params = {};
  if (typeof params !== 'object' || Array.isArray(params)) {
    const message = `consistency check params must be a JSON object, got ${Array.isArray(params) ? 'an array' : typeof params}`;
    return { ok: false, message, errors: [message] };
  }
  const input = params as Record<string, unknown>;
  const errors: string[] = [];
  const force = readBoolean(input['force'], 'force', errors);
  const deep = readBoolean(input['deep'], 'deep', errors);
  const batchSize = readInteger(input['batch_size'], 'batch_size', BATCH_SIZE_RANGE, errors);
  const throttleMs = readInteger(input['throttle_ms'], 'throttle_ms', THROTTLE_MS_RANGE, errors);
  if (errors.length > 0) {
    return { ok: false, message: `invalid consistency check params: ${errors.join('; ')}`, errors };
  }
  const normalised: Record<string, unknown> = { ...input };
  if (force !== undefined) normalised['force'] = force;
  if (deep !== undefined) normalised['deep'] = deep;
  if (batchSize !== undefined) normalised['batch_size'] = batchSize;
  if (throttleMs !== undefined) normalised['throttle_ms'] = throttleMs;
  const options: CheckOptions = {
    force: force ?? false,
    deep: deep ?? false,
    ...(batchSize !== undefined ? { batchSize } : {}),
    ...(throttleMs !== undefined ? { throttleMs } : {}),
  };
  return { ok: true, params: normalised, options };
}
