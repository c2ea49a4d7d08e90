import {
  lockPendingPlanItem,
  recordPlanItem,
  type StoredPlanItem,
  type StoredRepairPlan,
} from '@oxicloud/consistency';
import {
  type CursorCodec,
  completed,
  failed,
  itemBatch,
  type JobStore,
  type ParamsValidation,
  parseParams,
  RecoverableError,
  type RecoverableJobHandler,
  type RunOutcome,
  type RunTransaction,
  runBatches,
} from '@oxicloud/recoverable';
import { type Logger, silentLogger } from '@oxicloud/scheduler';
import { z } from 'zod';
import { REPAIR_JOB_NAME } from '../job-names.js';
import type { BlobStorage } from '../ports/blob-storage.js';
import type { RepairPlanRepository } from '../ports/repair-plan-repository.js';
import type { RepairStore } from '../ports/repair-store.js';
import { errorMessage } from '../run-support.js';
import type { RepairActions } from './repair-actions.js';
import type { ActionLine, RepairLine } from './repair-line.js';

/** Counters of a repair run. */
export const REPAIR_COUNTERS = [
  'applied_items',
  'already_consistent_items',
  'skipped_items',
  'needs_person_items',
] as const;

const LOG_TARGET = 'oxicloud::repair';
const DELETING_ACTIONS = new Set(['delete_orphan_bytes', 'delete_orphan_blob']);
const APPLIED: ReadonlySet<StoredPlanItem['status']> = new Set(['applied']);
/** The items the run re-checks after its last batch. */
const VERIFIED: ReadonlySet<StoredPlanItem['status']> = new Set(['applied', 'already_consistent']);

/** The run's params: the approved plan. */
export const repairParamsSchema = z
  .object({
    plan_id: z
      .string()
      .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a UUID'),
    /** Items per batch (one checkpoint transaction). @defaultValue 100 */
    batch_size: z.number().int().min(1).max(1000).optional(),
  })
  .strict();

/** Cursor = the plan position (4 bytes, big-endian: byte order = position order). */
export const planPositionCursor: CursorCodec = {
  keyName: 'plan position',
  encode(key) {
    const n = Number(key);
    if (!(Number.isInteger(n) && n >= 0 && n <= 0xffffffff)) {
      throw new RecoverableError('INVALID_CURSOR', `a plan position is a whole number >= 0, got ${key}`);
    }
    const out = new Uint8Array(4);
    new DataView(out.buffer).setUint32(0, n);
    return out;
  },
  decode(bytes) {
    if (bytes.length !== 4) {
      throw new RecoverableError('INVALID_CURSOR', `a plan position cursor is 4 bytes, got ${bytes.length}`);
    }
    return String(new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0));
  },
};

/** The plan calls the run needs, beyond the planner's. */
export interface RepairRunPlans extends Pick<RepairPlanRepository, 'get'> {
  recordVerification(
    planId: string,
    position: number,
    failure: string | null,
    fix: { readonly findingId: string | null; readonly runId: string; readonly actor: string },
  ): Promise<void>;
  attachRun(id: string, runId: string): Promise<void>;
  markApplied(id: string): Promise<void>;
  itemsAfter(id: string, afterPosition: number | null, limit: number): Promise<StoredPlanItem[]>;
}

/** Options of {@link createRepairJob}. */
export interface RepairJobOptions {
  readonly plans: RepairRunPlans;
  readonly actions: RepairActions;
  readonly store: RepairStore;
  /** Where orphan bytes are deleted after their marked rows committed; without it `dedup_gc` finishes them. */
  readonly blobs?: Pick<BlobStorage, 'delete'>;
  readonly logger?: Logger;
  /** The engine's own schema, where the plans live (`@oxicloud/consistency`'s tables). @defaultValue `jobs` */
  readonly schema?: string;
}

/** The `repair` run handler. */
export interface RepairJob extends RecoverableJobHandler {
  readonly name: typeof REPAIR_JOB_NAME;
  validateParams(raw: unknown): ParamsValidation;
}

/**
 * The `repair` run: applies an approved plan, item by item, as a recoverable
 * run (resumable, cancellable, progress; the item cursor is the plan
 * position, walked by the run kit's `itemBatch`).
 *
 * A batch's items are applied inside the checkpoint's transaction (its
 * `writes`), so each item's storage writes, its status, its audit row (who
 * approved, plan, fingerprint, before, after) and the cursor commit together
 * or not at all, under the run's fence. Each item runs under a savepoint and
 * first locks its plan row: an item already done (a batch replayed after a
 * resume) is never applied twice. An item whose resource changed since the
 * plan is `skipped` with the reason; one whose resource re-verifies as
 * already right is `already_consistent` (nothing written, no audit row; its
 * finding is fixed by the run); one that throws is rolled back to its
 * savepoint and `skipped` with the error. After the last batch, the bytes of
 * orphan blobs whose rows were marked for deletion are deleted (the deletion
 * protocol's last step; idempotent, and `dedup_gc` finishes any left).
 */
export function createRepairJob(options: RepairJobOptions): RepairJob {
  const planTables = options.schema === undefined ? {} : { schema: options.schema };
  const { plans, actions, store } = options;
  const logger = options.logger ?? silentLogger;

  function validateParams(raw: unknown): ParamsValidation {
    return parseParams(repairParamsSchema, raw);
  }

  async function applyItems(
    plan: StoredRepairPlan,
    runId: string,
    items: readonly StoredPlanItem[],
    runTx: RunTransaction,
  ) {
    const tx = store.inTransaction(runTx);
    const counters = {
      applied_items: 0,
      already_consistent_items: 0,
      skipped_items: 0,
      needs_person_items: 0,
    };
    for (const item of items) {
      const line = item.line as unknown as RepairLine;
      if (item.status === 'needs_person') {
        counters.needs_person_items += 1;
        continue;
      }
      if (!(await lockPendingPlanItem(runTx, plan.id, item.position, planTables))) continue;
      let outcome: Awaited<ReturnType<RepairActions['applyIn']>>;
      try {
        outcome = await tx.attempt(() => actions.applyIn(line as ActionLine, tx));
      } catch (error) {
        outcome = { status: 'skipped', reason: `failed: ${errorMessage(error)}` };
      }
      if (outcome.status === 'skipped') {
        counters.skipped_items += 1;
        logger.info(
          {
            target: LOG_TARGET,
            event: 'repair.item_skipped',
            run_id: runId,
            plan_id: plan.id,
            position: item.position,
          },
          `repair: item ${item.position} (${line.fingerprint.kind} ${line.fingerprint.resourceId}) skipped: ${outcome.reason}`,
        );
        await recordPlanItem(
          runTx,
          {
            planId: plan.id,
            position: item.position,
            status: 'skipped',
            reason: outcome.reason,
          },
          planTables,
        );
        continue;
      }
      if (outcome.status === 'already_consistent') {
        counters.already_consistent_items += 1;
        await recordPlanItem(
          runTx,
          {
            planId: plan.id,
            position: item.position,
            status: 'already_consistent',
          },
          planTables,
        );
        continue;
      }
      counters.applied_items += 1;
      await recordPlanItem(
        runTx,
        {
          planId: plan.id,
          position: item.position,
          status: 'applied',
          audit: {
            runId,
            approvedBy: plan.approvedBy ?? 'unknown',
            findingId: item.findingId,
            checkName: line.fingerprint.checkName,
            kind: line.fingerprint.kind,
            resourceId: line.fingerprint.resourceId,
            action: (line as ActionLine).action,
            before: outcome.before,
            after: outcome.after,
          },
        },
        planTables,
      );
    }
    return { count: counters.applied_items, counters };
  }

  /** Each item with one of `statuses` (default: applied), in plan order. */
  async function forEachApplied(
    planId: string,
    fn: (item: StoredPlanItem, line: ActionLine) => Promise<void>,
    statuses: ReadonlySet<StoredPlanItem['status']> = APPLIED,
  ) {
    let after: number | null = null;
    for (;;) {
      const page = await plans.itemsAfter(planId, after, 500);
      if (page.length === 0) return;
      for (const item of page) {
        const line = item.line as unknown as RepairLine;
        if (statuses.has(item.status) && line.type === 'action') await fn(item, line);
      }
      after = (page.at(-1) as StoredPlanItem).position;
    }
  }

  async function finishDeletions(planId: string): Promise<void> {
    const blobs = options.blobs;
    if (blobs === undefined) return;
    await forEachApplied(planId, async (_item, line) => {
      if (!DELETING_ACTIONS.has(line.action)) return;
      await store.finishBlobDeletion(line.resource.id, async (hash) => {
        await blobs.delete(hash);
      });
    });
  }

  /**
   * Re-checks each repaired resource (just those, with the predicate of the
   * check that found it; the already consistent ones too): a pass fixes the
   * finding by this run, a failure stays open with the reason on the item.
   */
  async function verifyRepaired(
    plan: StoredRepairPlan,
    runId: string,
  ): Promise<{ passed: number; failed: number }> {
    const tally = { passed: 0, failed: 0 };
    const actor = `repair:${plan.approvedBy ?? 'unknown'}`;
    await forEachApplied(
      plan.id,
      async (item, line) => {
        if (item.verified === 'passed') return;
        const failure = await actions.verify(line);
        if (failure === null) tally.passed += 1;
        else tally.failed += 1;
        await plans.recordVerification(plan.id, item.position, failure, {
          findingId: item.findingId,
          runId,
          actor,
        });
      },
      VERIFIED,
    );
    return tally;
  }

  async function runResumable(jobStore: JobStore, signal: AbortSignal): Promise<RunOutcome> {
    const parsed = validateParams(jobStore.params);
    if (!parsed.ok) return failed(`invalid params for ${REPAIR_JOB_NAME}: ${parsed.message}`);
    const planId = parsed.params['plan_id'] as string;
    const plan = await plans.get(planId);
    if (plan === null) return failed(`repair: no plan ${planId}`);
    if (plan.state === 'planned') return failed(`repair: plan ${planId} is not approved`);
    await plans.attachRun(planId, jobStore.runId);
    let pending: StoredPlanItem[] = [];
    const outcome = await runBatches({
      name: REPAIR_JOB_NAME,
      store: jobStore,
      signal,
      logger,
      logTarget: LOG_TARGET,
      batchSize: (parsed.params['batch_size'] as number | undefined) ?? 100,
      batch: itemBatch<StoredPlanItem>({
        codec: planPositionCursor,
        keyOf: (item) => String(item.position),
        fetchPage: (after, limit) => plans.itemsAfter(planId, after === null ? null : Number(after), limit),
        async processItem(item) {
          pending.push(item);
        },
        counterNames: REPAIR_COUNTERS,
        concurrency: 1,
        finish() {
          const items = pending;
          pending = [];
          return { writes: (tx) => applyItems(plan, jobStore.runId, items, tx) };
        },
      }),
    });
    if (outcome.kind !== 'completed') return outcome;
    try {
      await finishDeletions(planId);
    } catch (error) {
      logger.warn(
        { target: LOG_TARGET, event: 'repair.deletion_left', run_id: jobStore.runId, plan_id: planId },
        `repair: deleting orphan bytes failed (${errorMessage(error)}); dedup_gc finishes the marked rows`,
      );
    }
    const verified = await verifyRepaired(plan, jobStore.runId);
    logger.info(
      { target: LOG_TARGET, event: 'repair.verified', run_id: jobStore.runId, plan_id: planId, ...verified },
      `repair: plan ${planId} re-checked: ${verified.passed} fixed, ${verified.failed} still failing`,
    );
    await plans.markApplied(planId);
    return completed();
  }

  return { name: REPAIR_JOB_NAME, validateParams, runResumable };
}

export { REPAIR_JOB_NAME };
