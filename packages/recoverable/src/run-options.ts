import { isJsonObject } from './run-record.js';

/**
 * The typed options a trigger gives a run besides its params, validated once
 * at the trigger: never part of a job's own params, never validated by the job.
 * A handler reads them as `store.options`.
 */
export interface RunOptions {
  /** Acceleration semantics (per job; consistency checks: every grace window 0). */
  readonly force: boolean;
  /** Deep mode (re-hash bytes, sniff mime types) of a job whose capabilities declare `deep`. */
  readonly deep: boolean;
}

/** A run without options. */
export const NO_RUN_OPTIONS: RunOptions = Object.freeze({ force: false, deep: false });

/**
 * The option keys a trigger's params object may also carry (`{ "deep": true }`
 * in a trigger body): taken out as options at the trigger, never seen by a job.
 */
export const RUN_OPTION_KEYS: readonly (keyof RunOptions)[] = Object.freeze(['force', 'deep']);

/** What {@link triggerOptions} answers: the options, and the params without the option keys. */
export type TriggerOptionsResult =
  | { readonly ok: true; readonly options: RunOptions; readonly params: Record<string, unknown> }
  | { readonly ok: false; readonly message: string };

/**
 * The one validation of a trigger's options: `force` / `deep` from the typed
 * arguments, else from keys of the same name in the params object (a JSON
 * boolean there, else refused). Returns the params without those keys.
 *
 * @example
 * ```ts
 * triggerOptions({ params: { deep: true, batch_size: 500 } });
 * // → { ok: true, options: { force: false, deep: true }, params: { batch_size: 500 } }
 * ```
 */
export function triggerOptions(args: {
  readonly params?: unknown;
  readonly force?: boolean | undefined;
  readonly deep?: boolean | undefined;
}): TriggerOptionsResult {
  const raw: unknown = args.params ?? {};
  if (!isJsonObject(raw)) return { ok: false, message: 'params must be a JSON object' };
  const { force: rawForce, deep: rawDeep, ...params } = raw;
  for (const [key, value] of [
    ['force', rawForce],
    ['deep', rawDeep],
    ['force', args.force],
    ['deep', args.deep],
  ] as const) {
    if (value !== undefined && typeof value !== 'boolean') {
      return {
        ok: false,
        message: `${key} must be true or false (a JSON boolean), got ${JSON.stringify(value)}`,
      };
    }
  }
  const options: RunOptions = Object.freeze({
    force: args.force ?? rawForce === true,
    deep: args.deep ?? rawDeep === true,
  });
  return { ok: true, options, params };
}

/**
 * The stored layout of `jobs.recoverable_runs.params`, owned by the engine:
 * the job's params plus the run's options under their own keys (so a run's
 * details show what it was triggered with). Only the engine's repository
 * writes it ({@link storedParams}) and reads it ({@link storedRunOptions},
 * {@link storedJobParams}).
 */
export function storedParams(
  params: Readonly<Record<string, unknown>>,
  options: RunOptions,
): Record<string, unknown> {
  return { ...params, force: options.force, deep: options.deep };
}

/** The options of a stored run (a key that is not `true` reads as `false`). */
export function storedRunOptions(stored: unknown): RunOptions {
  if (!isJsonObject(stored)) return NO_RUN_OPTIONS;
  return Object.freeze({ force: stored['force'] === true, deep: stored['deep'] === true });
}

/** The job's own params of a stored run: the stored object without the option keys. */
export function storedJobParams(stored: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { force: _force, deep: _deep, ...params } = stored;
  return params;
}
