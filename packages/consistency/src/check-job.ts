import {
  failed,
  type JobStore,
  NO_RUN_OPTIONS,
  paused,
  type RecoverableJobHandler,
  type RunOptions,
  type RunOutcome,
  type TerminalRun,
} from '@oxicloud/recoverable';
import { type Logger, silentLogger } from '@oxicloud/scheduler';
import {
  type CheckParamsValidation,
  validateCheckParams,
  validateCheckTriggerParams,
} from './check-params.js';
import { checkStore } from './check-store.js';
import type { RunCloseResult } from './close-run.js';
import type { ConsistencyCheck } from './consistency-check.js';
import { CONSISTENCY_FINDINGS_ALERT, CONSISTENCY_LOG_TARGET, FindingBatch } from './finding-batch.js';
import { assertFindingKinds, type FindingKind } from './finding-kind.js';
import type { FindingWriter } from './finding-sink.js';
import { effectiveGraceMs, graceBoundary } from './grace.js';

/** Options of {@link checkJob}. */
export interface CheckJobOptions {
  /**
   * Where the run's life is written (a `PgFindingStore`): its beginning (the
   * grace boundary), its findings in each checkpoint's transaction, and its
   * closing after the terminal write.
   */
  readonly findings: FindingWriter;
  /** Receives the audit and `oxicloud::consistency` lines. @defaultValue silentLogger */
  readonly logger?: Logger;
  /**
   * The host's own precondition, asked at each run's start before the
   * check's {@link ConsistencyCheck.preflight}: `null` when the check may
   * run, otherwise the reason it is refused (the run fails with it, nothing
   * is recorded). The server holds `check.reads` against OxiCloud's schema
   * here when OxiCloud migrated past what the engine knows.
   */
  readonly preflight?: (check: ConsistencyCheck, signal: AbortSignal) => Promise<string | null>;
}

/** The message of a run refused by a precondition: `<check>: refused: <reason>`. */
export function refusedMessage(checkName: string, reason: string): string {
  return `${checkName}: refused: ${reason}`;
}

/**
 * Whether a failed run's message says a precondition refused it
 * ({@link refusedMessage}): the configuration or the schema is not what the
 * check needs. Nothing was examined; the server mails no failure for it (the
 * job turning overdue is the alert), the admin API and the log say why.
 */
export function isRefusedMessage(checkName: string, message: string): boolean {
  return message.startsWith(`${checkName}: refused: `);
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
  /**
   * The closing step, after the run's terminal write: a `Completed` run is
   * closed (`findings.closeRun`: the check's findings it examined and found
   * consistent become `fixed`, expired acceptances are `open` again), logged
   * as `consistency.findings_closed`. Paused and failed runs close nothing.
   * Never rejects: a failure is logged (`consistency.findings_close_failed`)
   * and the next run of the check closes it as it begins.
   */
  afterTerminal(run: TerminalRun): Promise<void>;
}

/**
 * Turns a {@link ConsistencyCheck} into a `RecoverableJobHandler` (job name =
 * check name) that owns the check run's whole life, whoever runs it (the
 * engine, standalone `runOrResume`):
 *
 * 1. **Beginning.** Closes the check's `Completed` runs a crash left
 *    unclosed; asks the host's `preflight`, then the check's own: a reason
 *    from either fails the run (`<check>: refused: <reason>`) before any
 *    finding; then remembers the run's grace boundary (`findings.beginRun`).
 * 2. **Batches.** Reads the {@link CheckOptions} from the run's stored
 *    params, with the run's options (`store.options`), composes the engine's
 *    `JobStore` with the run's {@link FindingBatch} into a `CheckStore`
 *    (findings commit with the checkpoint that covers them, and are audited
 *    once committed), and calls `check.runResumable`. A check that throws
 *    becomes a `failed` outcome, and so does a finding of a kind
 *    `check.kinds` does not declare (or with another severity): the
 *    declaration is validated here, once.
 * 3. **Closing.** After the terminal write (`afterTerminal`), a `Completed`
 *    run is closed (`findings.closeRun`), before the engine's
 *    `onRunFinished` listeners hear of the run: a findings mail reads the
 *    closed state.
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
  const findingsClosed = (closed: RunCloseResult) =>
    logger.info(
      {
        target: CONSISTENCY_LOG_TARGET,
        event: 'consistency.findings_closed',
        check: check.name,
        run_id: closed.runId,
        fixed: closed.fixed,
        expired: closed.expired,
      },
      `${check.name}: ${closed.fixed} finding(s) fixed by run ${closed.runId}`,
    );
  const closeFailed = (runId: string, error: unknown, when: string) =>
    logger.error(
      {
        target: CONSISTENCY_LOG_TARGET,
        event: 'consistency.findings_close_failed',
        check: check.name,
        run_id: runId,
        error: error instanceof Error ? error.message : String(error),
      },
      `${check.name}: could not close the findings of ${when}; the next run of ${check.name} closes it as it begins`,
    );
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
      if (options.findings.closePendingRuns) {
        try {
          for (const closed of await options.findings.closePendingRuns(check.name)) {
            if (closed.outcome === 'closed') findingsClosed(closed);
          }
        } catch (error) {
          closeFailed(runId, error, `the completed runs before run ${runId}`);
        }
      }
      let outcome: RunOutcome;
      try {
        let refused: string | null;
        try {
          refused =
            (await options.preflight?.(check, signal)) ??
            (await check.preflight?.(validation.options, store.startedAt, signal)) ??
            null;
        } catch (error) {
          if (!signal.aborted) throw error;
          refused = null;
        }
        // Cancelled or shut down while the preconditions were asked: paused where it stood.
        if (signal.aborted) return paused((await store.loadCursor()) ?? new Uint8Array(0));
        if (refused !== null) {
          logger.error(
            { ...base, event: 'consistency.refused', reason: refused },
            refusedMessage(check.name, refused),
          );
          return failed(refusedMessage(check.name, refused));
        }
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
      // No run-end line here: the outcome is not the run's until the engine's
      // fenced terminal write lands (a node whose lease was lost writes none);
      // the engine's `job.run` line says what was written, `run.lease_lost` when nothing was.
      return outcome;
    },
    async afterTerminal(run: TerminalRun): Promise<void> {
      if (run.status !== 'Completed' || !options.findings.closeRun) return;
      try {
        const closed = await options.findings.closeRun(run.runId);
        if (closed?.outcome === 'closed') findingsClosed(closed);
      } catch (error) {
        closeFailed(run.runId, error, `run ${run.runId}`);
      }
    },
  };
}
