import { isDeepStrictEqual } from 'node:util';
import type { RunArgs } from './acquire-run.js';
import { isJsonObject } from './run-record.js';

/**
 * What a trigger asked for that a run already there does not use: a Paused
 * run resumes with its stored params and options, an active run keeps its
 * own. The keys the trigger gave (its params' keys, `force` / `deep` when
 * given, as a flag or a params key) whose value differs from the run's stored
 * one; `{}` when the trigger asked for nothing new.
 *
 * @example
 * ```ts
 * paramsNotApplied({ params: { batch_size: 500 }, force: true }, { batch_size: 50, force: false, deep: false });
 * // → { batch_size: 500, force: true }
 * ```
 */
export function paramsNotApplied(args: RunArgs, stored: unknown): Record<string, unknown> {
  const run = isJsonObject(stored) ? stored : {};
  const asked: Record<string, unknown> = isJsonObject(args.params) ? { ...args.params } : {};
  if (args.force !== undefined) asked['force'] = args.force;
  if (args.deep !== undefined) asked['deep'] = args.deep;
  const notApplied: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(asked)) {
    // An option the run never stored reads as false, like storedRunOptions.
    const current = run[key] ?? ((key === 'force' || key === 'deep') && value === false ? false : undefined);
    if (!isDeepStrictEqual(current, value)) notApplied[key] = value;
  }
  return notApplied;
}

/** `{"a":1}`-style text of params for a log message, cut at `max` characters. */
export function paramsText(params: Readonly<Record<string, unknown>>, max = 200): string {
  const text = JSON.stringify(params);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
