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

/** The keys a consistency run's params may hold. */
export const CHECK_PARAM_KEYS: readonly string[] = ['force', 'deep', 'batch_size', 'throttle_ms'];

/** Options of {@link validateCheckParams}. */
export interface CheckParamsOptions {
  /**
   * The rule for a new run's params (a trigger): unknown keys are refused,
   * booleans must be JSON booleans and integers JSON numbers. Off (the
   * default) is the lenient rule stored runs are read with, so a run stored
   * before the strict rule existed still resumes as it is.
   * @defaultValue false
   */
  readonly strict?: boolean;
}

function readBoolean(value: unknown, key: string, errors: string[], strict: boolean): boolean | undefined {
  if (value === undefined || (value === null && !strict)) return undefined;
  if (typeof value === 'boolean') return value;
  if (strict) {
    errors.push(`${key} must be true or false (a JSON boolean), got ${JSON.stringify(value)}`);
    return undefined;
  }
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
  strict: boolean,
): number | undefined {
  if (value === undefined || (value === null && !strict)) return undefined;
  const n = !strict && typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
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
 * not know are kept and ignored. With `{ strict: true }` (a new run's params,
 * see {@link validateCheckTriggerParams}) unknown keys are refused and values
 * must have their JSON type. On success, `params` is the normalised object
 * to store (typed values) and `options` the {@link CheckOptions} a run gets.
 *
 * @example
 * ```ts
 * validateCheckParams({ batch_size: 0 });
 * // → { ok: false, message: 'invalid consistency check params: batch_size must be an integer in 1..10000, got 0', … }
 * ```
 */
export function validateCheckParams(params: unknown, rule: CheckParamsOptions = {}): CheckParamsValidation {
  const strict = rule.strict === true;
  if (params === undefined || params === null) params = {};
  if (typeof params !== 'object' || Array.isArray(params)) {
    const message = `consistency check params must be a JSON object, got ${Array.isArray(params) ? 'an array' : typeof params}`;
    return { ok: false, message, errors: [message] };
  }
  const input = params as Record<string, unknown>;
  const errors: string[] = [];
  if (strict) {
    const unknown = Object.keys(input).filter((key) => !CHECK_PARAM_KEYS.includes(key));
    if (unknown.length > 0) {
      const shown = unknown.slice(0, 5).map((key) => JSON.stringify(key.slice(0, 64)));
      errors.push(
        `unknown key${unknown.length > 1 ? 's' : ''} ${shown.join(', ')}${unknown.length > 5 ? ', …' : ''}; ` +
          `allowed: ${CHECK_PARAM_KEYS.join(', ')}`,
      );
    }
  }
  const force = readBoolean(input['force'], 'force', errors, strict);
  const deep = readBoolean(input['deep'], 'deep', errors, strict);
  const batchSize = readInteger(input['batch_size'], 'batch_size', BATCH_SIZE_RANGE, errors, strict);
  const throttleMs = readInteger(input['throttle_ms'], 'throttle_ms', THROTTLE_MS_RANGE, errors, strict);
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

/**
 * The strict rule for a new run's params: {@link validateCheckParams} with
 * `{ strict: true }` (unknown keys refused, JSON types exact). Stored runs
 * are read with the lenient {@link validateCheckParams}.
 *
 * @example
 * ```ts
 * validateCheckTriggerParams({ batch_size: 500, x: 'a' });
 * // → { ok: false, message: 'invalid consistency check params: unknown key "x"; allowed: force, deep, batch_size, throttle_ms', … }
 * ```
 */
export function validateCheckTriggerParams(params: unknown): CheckParamsValidation {
  return validateCheckParams(params, { strict: true });
}
