import type { JobStoreFactory } from './job-store-factory.js';
import { messageOf, RecoverableError } from './recoverable-error.js';
import type { ParamsValidation, RecoverableJobHandler } from './recoverable-job-handler.js';
import {
  type RunOptions,
  storedJobParams,
  storedParams,
  storedRunOptions,
  triggerOptions,
} from './run-options.js';
import { isJsonObject, type RunRecord } from './run-record.js';

/** Trigger arguments of a recoverable run. */
export interface RunArgs {
  /**
   * Run params, validated by the job's `validateParams` (without `force` /
   * `deep` keys: those are taken as the options); ignored when a Paused run
   * is resumed.
   */
  readonly params?: Readonly<Record<string, unknown>>;
  /** The run's `force` option (acceleration semantics, per job); wins over a `force` key in `params`. */
  readonly force?: boolean;
  /** The run's `deep` option (deep mode); wins over a `deep` key in `params`. */
  readonly deep?: boolean;
}

/** The result of steps 1–4: a run this caller now drives, or the one already active. */
export type AcquiredRun =
  | { readonly kind: 'started' | 'resumed'; readonly record: RunRecord }
  | { readonly kind: 'already_running'; readonly record: RunRecord };

/** Trigger arguments → the job's validated params and the run's options. */
export interface PreparedTrigger {
  readonly params: Record<string, unknown>;
  readonly options: RunOptions;
}

/** Trigger params that failed validation: they refuse a fresh run, never a resume. */
export class InvalidParams {
  constructor(readonly message: string) {}
}

const MAX_ACQUIRE_ATTEMPTS = 5;

/**
 * Trigger arguments → what a fresh run stores: the options validated once
 * ({@link triggerOptions}: `force` / `deep` from the arguments or from the
 * params' keys of that name), then the job's `validateTriggerParams` (else
 * `validateParams`) on its own params, which never carry the options.
 */
export function prepareTrigger(
  job: RecoverableJobHandler,
  args: RunArgs,
): ({ ok: true } & PreparedTrigger) | { ok: false; message: string } {
  const split = triggerOptions(args);
  if (!split.ok) return split;
  const validated = validateWith(job, split.params, job.validateTriggerParams ?? job.validateParams);
  if (!validated.ok) return validated;
  return { ok: true, params: validated.params, options: split.options };
}

/**
 * A stored run → the params the handler sees (its own params re-validated
 * with the lenient `validateParams`: a stored run is never blocked by a rule
 * only new triggers follow) and its options.
 */
export function prepareStored(
  job: RecoverableJobHandler,
  stored: Record<string, unknown>,
): ({ ok: true } & PreparedTrigger) | { ok: false; message: string } {
  const validated = validateWith(job, storedJobParams(stored), job.validateParams);
  if (!validated.ok) return validated;
  return { ok: true, params: validated.params, options: storedRunOptions(stored) };
}

function validateWith(
  job: RecoverableJobHandler,
  raw: Record<string, unknown>,
  validate: RecoverableJobHandler['validateParams'],
): { ok: true; params: Record<string, unknown> } | { ok: false; message: string } {
  if (!validate) return { ok: true, params: raw };
  let result: ParamsValidation;
  try {
    result = validate.call(job, raw);
  } catch (thrown) {
    return { ok: false, message: messageOf(thrown) };
  }
  if (result.ok && !isJsonObject(result.params)) {
    return { ok: false, message: `validateParams of ${job.name} returned params that are not an object` };
  }
  return result;
}

/**
 * Steps 1–4 of the plan. With valid trigger params the INSERT of a fresh
 * `Running` row comes first: the one-active-run index refuses it while the
 * job has an active run (Running, CancelRequested or Paused), so a fresh
 * run costs one round trip, not a read and then a write. Only when the index
 * refused it is the active run read: Paused → UPDATE to Running (stored
 * cursor, stats and params kept: the `params` given here are ignored);
 * Running/CancelRequested → `already_running`; gone meanwhile (it ended) →
 * INSERT again. Invalid trigger params read first: they refuse a fresh run
 * only (`INVALID_PARAMS`), never the resume of a Paused one.
 */
export async function acquireRun(
  jobName: string,
  factory: JobStoreFactory,
  trigger: PreparedTrigger | InvalidParams,
): Promise<AcquiredRun> {
  let latest = trigger instanceof InvalidParams ? await factory.latestRun(jobName) : null;
  for (let attempt = 1; ; attempt++) {
    if (latest === null || latest.status === 'Completed' || latest.status === 'Failed') {
      // Trigger params matter only for a fresh run: a resume keeps its stored
      // params, so params that fail validation refuse only a fresh start.
      if (trigger instanceof InvalidParams) {
        throw new RecoverableError('INVALID_PARAMS', `invalid params for ${jobName}: ${trigger.message}`);
      }
      const inserted = await factory.insertRunning(jobName, storedParams(trigger.params, trigger.options));
      if (inserted) return { kind: 'started', record: inserted };
      // The one-active-run index refused it (an active run, or a racer won): read that run.
    } else if (latest.status === 'Paused') {
      const resumed = await factory.resumePaused(latest.runId);
      if (resumed) return { kind: 'resumed', record: resumed };
      // Someone else resumed (or cancelled) it first: read again.
    } else {
      return { kind: 'already_running', record: latest };
    }
    if (attempt >= MAX_ACQUIRE_ATTEMPTS) {
      throw new Error(`could not start or resume a run of ${jobName}: the active run kept changing under us`);
    }
    latest = await factory.latestRun(jobName);
  }
}
