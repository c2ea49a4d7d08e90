import {
  err,
  type JobHandler,
  type JobOutcome,
  type JobRunArgs,
  type Logger,
  ok,
  silentLogger,
} from '@oxicloud/scheduler';
import { TenantsError } from '../errors.js';
import { errorMessage } from '../run-support.js';

/** Job name of the wrapper. */
export const CONSISTENCY_BATCH_JOB_NAME = 'consistency_batch';

const LOG_TARGET = 'oxicloud::consistency';

/** What the batch hands each child run. Structurally an `EngineRunArgs` of `@oxicloud/recoverable`. */
export interface ConsistencyBatchRunArgs {
  readonly force: boolean;
  readonly deep: boolean;
  /** Extra run params (`batch_size`, `throttle_ms`, …) from the batch's trigger, passed on as they are. */
  readonly params?: Readonly<Record<string, unknown>>;
  /** The batch's own signal: aborting it asks the running child to pause at its next batch boundary. */
  readonly signal: AbortSignal;
}

/** Options of {@link createConsistencyBatchJob}. */
export interface ConsistencyBatchJobOptions {
  /**
   * The consistency checks to run, in order: the catalog's checks
   * (`JobCatalog.checks()` of `@oxicloud/recoverable`: every job that
   * declares a `check` capability, by its declared order). Read on every run,
   * so checks registered later are picked up.
   */
  readonly checks: () => readonly string[];
  /** Starts or resumes one child run and resolves with its bridged outcome (`RecoverableEngine.runOrResume`). */
  readonly runOrResume: (name: string, args: ConsistencyBatchRunArgs) => Promise<JobOutcome>;
  readonly logger?: Logger;
}

/** One child's entry in `extra.per_check`. */
export interface PerCheckEntry {
  /** The child's outcome; `null` when it was not started (the batch was aborted first). */
  readonly outcome: JobOutcome | null;
  /** The child's run id, when its outcome carries one. */
  readonly run_id?: string;
  /** `'aborted'` when the batch stopped before starting this child. */
  readonly skipped?: string;
}

function runIdOf(outcome: JobOutcome): string | undefined {
  if (outcome.kind !== 'ok') return undefined;
  const id = outcome.extra['run_id'];
  return typeof id === 'string' ? id : undefined;
}

/**
 * `consistency_batch`: a plain Part 1 job (not recoverable) that runs every
 * consistency check (`options.checks()`) in turn through `runOrResume` (a Paused child is
 * resumed, an active one is reported as `skipped: already_running`), passing
 * `deep` and `force` on. It ALWAYS returns `ok`: a child that fails or throws
 * lands in `extra.per_check[<name>].outcome`, never fails the batch.
 * `count` = children that completed their whole scan. Between children the
 * signal is honoured: once it fires, the remaining children are not started
 * (`skipped: 'aborted'`), and the running child gets the same signal (it
 * pauses with its cursor).
 *
 * `extra`: `{ per_check, checks, completed, paused, failed, skipped, deep, force }`.
 */
export function createConsistencyBatchJob(options: ConsistencyBatchJobOptions): JobHandler {
  if (typeof options?.checks !== 'function' || typeof options.runOrResume !== 'function') {
    throw new TenantsError(
      'INVALID_CONFIG',
      'createConsistencyBatchJob needs checks: () => string[] and runOrResume: (name, args) => Promise<JobOutcome>',
    );
  }
  const log = options.logger ?? silentLogger;
  return {
    name: CONSISTENCY_BATCH_JOB_NAME,
    // Passes `deep` on to every check: deep mode changes what the storage check does.
    capabilities: { deep: true },
    async run(args: JobRunArgs, signal: AbortSignal): Promise<JobOutcome> {
      // The options come typed from the trigger (validated there once); the params pass on as they are.
      const deep = args.deep === true;
      const force = args.force;
      const rest = args.params ?? {};
      let names: string[];
      try {
        names = [...new Set(options.checks())];
      } catch (error) {
        return ok(0, {
          per_check: {},
          checks: [],
          error: `listing the checks failed: ${errorMessage(error)}`,
        });
      }
      const perCheck: Record<string, PerCheckEntry> = {};
      let completed = 0;
      let paused = 0;
      let failed = 0;
      let skipped = 0;
      for (const name of names) {
        if (signal.aborted) {
          perCheck[name] = { outcome: null, skipped: 'aborted' };
          skipped++;
          continue;
        }
        const started = performance.now();
        let outcome: JobOutcome;
        try {
          outcome = await options.runOrResume(name, {
            force,
            deep,
            ...(Object.keys(rest).length > 0 ? { params: rest } : {}),
            signal,
          });
        } catch (error) {
          outcome = err(`${name}: ${errorMessage(error)}`);
        }
        const runId = runIdOf(outcome);
        perCheck[name] = { outcome, ...(runId !== undefined ? { run_id: runId } : {}) };
        if (outcome.kind === 'err') failed++;
        else if (outcome.extra['completed'] === true) completed++;
        else if (outcome.extra['paused'] === true) paused++;
        else skipped++;
        log.info(
          {
            target: LOG_TARGET,
            event: 'consistency_batch.check',
            check: name,
            outcome: outcome.kind,
            ...(runId !== undefined ? { run_id: runId } : {}),
            ...(outcome.kind === 'err' ? { error: outcome.message } : { extra: outcome.extra }),
            elapsed_ms: Math.round(performance.now() - started),
          },
          `consistency_batch: ${name} ${outcome.kind}`,
        );
      }
      return ok(completed, {
        per_check: perCheck,
        checks: names,
        completed,
        paused,
        failed,
        skipped,
        deep,
        force,
      });
    },
  };
}
