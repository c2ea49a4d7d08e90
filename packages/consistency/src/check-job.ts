import {
  cursorHex,
  failed,
  type JobStore,
  NO_RUN_OPTIONS,
  type RecoverableJobHandler,
  type RunOptions,
  type RunOutcome,
} from '@oxicloud/recoverable';
import { type Logger, silentLogger } from '@oxicloud/scheduler';
import {
  type CheckParamsValidation,
  validateCheckParams,
  validateCheckTriggerParams,
} from './check-params.js';
import { checkStore } from './check-store.js';
import type { ConsistencyCheck } from './consistency-check.js';
import { CONSISTENCY_FINDINGS_ALERT, CONSISTENCY_LOG_TARGET, FindingBatch } from './finding-batch.js';
import { assertFindingKinds, type FindingKind } from './finding-kind.js';
import type { FindingWriter } from './finding-sink.js';
import { effectiveGraceMs, graceBoundary } from './grace.js';

/** Options of {@link checkJob}. */
export interface CheckJobOptions {
  /** Where the run's findings are written, in each checkpoint's transaction (a `PgFindingStore`). */
  readonly findings: FindingWriter;
  /** Receives the audit and `oxicloud::consistency` lines. @defaultValue silentLogger */
  readonly logger?: Logger;
}

/** A consistency check as a recoverable job of the engine. */
export interface CheckJobHandler extends RecoverableJobHandler {
  /** The wrapped check. */
  readonly check: ConsistencyCheck;
  /** The check's declared finding kinds (`check.kinds`): what a `FindingKindCatalog` collects. */
  readonly findingKinds: readonly FindingKind[];
  /**
   * Validates trigger params (`batch_size` 1..10000, `throttle_ms`
   * 0..60000; `force` / `deep` are the run's options) without throwing, so the trigger can answer 400
   * with the message before a run row exists.
   */
  validateParams(params: unknown): CheckParamsValidation;
  /** The strict rule of a new run's params: unknown keys refused, JSON types exact. */
  validateTriggerParams(params: unknown): CheckParamsValidation;
  /** Forwards to the check's `estimateTotal` (`null` when it has none or it fails). */
  estimateTotal(params: Readonly<Record<string, unknown>>, options?: RunOptions): Promise<number | null>;
}

/**
 * Turns a {@link ConsistencyCheck} into a `RecoverableJobHandler` (job name =
 * check name): reads the {@link CheckOptions} from the run's stored params,
 * with the run's options (`store.options`),
 * composes the engine's `JobStore` with the run's {@link FindingBatch} into
 * a `CheckStore` (findings commit with the checkpoint that covers them, and
 * are audited once committed), and calls `check.runResumable`. A check that throws becomes
 * a `failed` outcome, and so does a finding of a kind `check.kinds` does not
 * declare (or with another severity): the declaration is validated here, once.
 *
 * @throws {ConsistencyError} `INVALID_DECLARATION` when `check.kinds` is incomplete.
 *
 * @example
 * ```ts
 * const findings = new PgFindingStore({ pool });
 * for (const check of consistencyRegistry.allChecks()) {
 *   engine.register(checkJob(check, { findings, logger }));
 * }
 * ```
 */
export function checkJob(check: ConsistencyCheck, options: CheckJobOptions): CheckJobHandler {
  const logger = options.logger ?? silentLogger;
  assertFindingKinds(check.name, check.kinds);
  const declared = new Map(check.kinds.map((k) => [k.kind, k]));
  return {
    name: check.name,
    check,
    findingKinds: check.kinds,
    capabilities: {
      check: { order: check.order, countMeaning: check.countMeaning },
      deep: check.deep === true,
      alerts: [CONSISTENCY_FINDINGS_ALERT],
    },
    validateParams: (params: unknown) => validateCheckParams(params),
    validateTriggerParams: validateCheckTriggerParams,
    async estimateTotal(
      params: Readonly<Record<string, unknown>>,
      runOptions: RunOptions = NO_RUN_OPTIONS,
    ): Promise<number | null> {
      const validation = validateCheckParams(params, { runOptions });
      if (!validation.ok || !check.estimateTotal) return null;
      try {
        return await check.estimateTotal(validation.options);
      } catch {
        return null;
      }
    },
    async runResumable(store: JobStore, signal: AbortSignal): Promise<RunOutcome> {
      const validation = validateCheckParams(store.params, { runOptions: store.options });
      if (!validation.ok) return failed(validation.message);
      const runId = store.runId;
      const graceMs = effectiveGraceMs(check, validation.options);
      const findings = new FindingBatch({
        runId,
        checkName: check.name,
        writer: options.findings,
        logger,
        tally: true,
        graceBoundary: graceBoundary(store.startedAt, graceMs),
      });
      const base = { target: CONSISTENCY_LOG_TARGET, check: check.name, run_id: runId };
      logger.info(
        {
          ...base,
          event: `consistency.${check.name}.run`,
          params: validation.params,
          force: store.options.force,
          deep: store.options.deep,
          started_at: store.startedAt,
        },
        `${check.name}: scanning`,
      );
      let outcome: RunOutcome;
      try {
        await options.findings.beginRun?.({
          runId,
          checkName: check.name,
          startedAt: store.startedAt,
          graceMs,
        });
        outcome = await check.runResumable(
          checkStore(store, findings, { job: check.name, declared }),
          validation.options,
          signal,
        );
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        outcome = failed(`${check.name}: ${reason}`);
      }
      logger.info(
        {
          ...base,
          event: `consistency.${check.name}.run_end`,
          outcome: outcome.kind,
          ...(outcome.kind === 'paused' ? { cursor_hex: cursorHex(outcome.cursor) } : {}),
          ...(outcome.kind === 'failed' ? { error: outcome.message } : {}),
        },
        `${check.name}: ${outcome.kind}`,
      );
      return outcome;
    },
  };
}
