import {
  BATCH_LIMITS,
  batchParamsFromQueryShape,
  batchParamsShape,
  NO_RUN_OPTIONS,
  parseParams,
  type RunOptions,
  strictParamsObject,
} from '@oxicloud/recoverable';
import { z } from 'zod';
import type { CheckOptions } from './consistency-check.js';

/** Rows per batch when `batch_size` is not given. */
export const DEFAULT_BATCH_SIZE = BATCH_LIMITS.batchSize.defaultValue;

/** The result of {@link validateCheckParams}: never throws. */
export type CheckParamsValidation =
  | { readonly ok: true; readonly params: Readonly<Record<string, unknown>>; readonly options: CheckOptions }
  | { readonly ok: false; readonly message: string };

/**
 * The lenient params of a stored consistency run: the kit's batch params
 * (`batch_size`, `throttle_ms`, also as digit strings). Unknown keys are
 * kept: a run stored before a stricter rule existed still resumes as it is.
 * `force` and `deep` are not params: they are the run's options
 * (`store.options`), validated once at the trigger.
 */
export const checkParamsSchema = z.looseObject({ ...batchParamsFromQueryShape });

/**
 * The strict params of a new consistency run: the same keys, unknown keys
 * refused (naming the allowed ones, the trigger's options first), JSON types exact.
 */
export const checkTriggerParamsSchema = strictParamsObject({ ...batchParamsShape });

/** Options of {@link validateCheckParams}. */
export interface CheckParamsOptions {
  /**
   * The rule for a new run's params (a trigger): {@link checkTriggerParamsSchema}.
   * Off (the default) is the lenient {@link checkParamsSchema} stored runs are
   * read with.
   * @defaultValue false
   */
  readonly strict?: boolean;
  /** The run's options (`store.options`), folded into the {@link CheckOptions}. @defaultValue no force, no deep */
  readonly runOptions?: RunOptions;
}

/**
 * Validates the params of a consistency run (`{ batch_size?, throttle_ms? }`)
 * without throwing. On success, `params` is the normalised object (typed
 * values) and `options` the {@link CheckOptions} a run gets (with the run's
 * `force` / `deep` from `rule.runOptions`). With
 * `{ strict: true }` (a new run's params, see {@link validateCheckTriggerParams})
 * unknown keys are refused and values must have their JSON type.
 *
 * @example
 * ```ts
 * validateCheckParams({ batch_size: 0 });
 * // → { ok: false, message: 'invalid consistency check params: batch_size: expected >=1 (1..10000), got 0' }
 * ```
 */
export function validateCheckParams(params: unknown, rule: CheckParamsOptions = {}): CheckParamsValidation {
  if (params !== undefined && params !== null && (typeof params !== 'object' || Array.isArray(params))) {
    const got = Array.isArray(params) ? 'an array' : typeof params;
    return { ok: false, message: `consistency check params must be a JSON object, got ${got}` };
  }
  const schema: z.ZodType<z.infer<typeof checkTriggerParamsSchema> & Record<string, unknown>> =
    rule.strict === true ? checkTriggerParamsSchema : checkParamsSchema;
  const parsed = parseParams(schema, params);
  if (!parsed.ok) return { ok: false, message: `invalid consistency check params: ${parsed.message}` };
  const normalised = Object.fromEntries(Object.entries(parsed.params).filter(([, v]) => v !== undefined));
  const { batch_size: batchSize, throttle_ms: throttleMs } = parsed.params;
  const run = rule.runOptions ?? NO_RUN_OPTIONS;
  const options: CheckOptions = {
    force: run.force,
    deep: run.deep,
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
 * // → { ok: false, message: 'invalid consistency check params: unknown key "x"; allowed: force, deep, batch_size, throttle_ms' }
 * ```
 */
export function validateCheckTriggerParams(params: unknown): CheckParamsValidation {
  return validateCheckParams(params, { strict: true });
}
