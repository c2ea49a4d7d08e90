import type { RepairSelection } from '@oxicloud/consistency';
import { TenantsError } from '../errors.js';
import { REPAIR_JOB_NAME } from './repair-job.js';
import type { RepairChoices, RepairPlanner, RepairPlanView } from './repair-planner.js';

/** The engine calls the service needs (a `RecoverableEngine` satisfies it). */
export interface RepairRunStarter {
  latestRun(
    name: string,
  ): Promise<{ readonly run_id: string; readonly status: string; readonly params?: unknown } | null>;
  trigger(
    name: string,
    args: { params: Record<string, unknown> },
  ): Promise<{ readonly run_id: string; readonly resumed: boolean; readonly already_running: boolean }>;
}

const ACTIVE = new Set(['Running', 'CancelRequested', 'Paused']);

const planOf = (run: { readonly params?: unknown } | null): string =>
  String((run?.params as { plan_id?: unknown } | undefined)?.plan_id);

function conflict(runId: string, planId: string, status: string): Error {
  return Object.assign(
    new TenantsError(
      'INVALID_ARGUMENT',
      `a repair run is already active: run ${runId} of plan ${planId} is ${status}; let it finish (or resume it) before applying another plan`,
    ),
    { code: 'PLAN_CONFLICT' },
  );
}

/**
 * Plan, read, choose and apply: what `/api/admin/repairs` and `oxijobs
 * repair` call. `apply` approves the plan only when its hash is the one the
 * operator read, then starts the `repair` run. It refuses (`PLAN_CONFLICT`)
 * while another plan's repair run is active: a trigger would resume that run.
 * When the trigger fails or answers with another plan's run, the approval is
 * taken back (the plan is `planned` again); applying an approved plan that
 * has no run of its own triggers it again.
 */
export function createRepairService(options: {
  readonly planner: RepairPlanner;
  readonly plans: {
    approve(id: string, hash: string, actor: string): Promise<void>;
    releaseApproval(id: string): Promise<void>;
  };
  readonly engine: RepairRunStarter;
}) {
  const { planner, plans, engine } = options;
  return {
    plan(input: {
      selection: RepairSelection;
      choices: RepairChoices;
      actor: string;
    }): Promise<RepairPlanView> {
      return planner.plan(input);
    },
    get(id: string): Promise<RepairPlanView | null> {
      return planner.get(id);
    },
    choose(id: string, choices: RepairChoices): Promise<RepairPlanView> {
      return planner.choose(id, choices);
    },
    async apply(id: string, hash: string, actor: string): Promise<{ runId: string }> {
      const latest = await engine.latestRun(REPAIR_JOB_NAME);
      if (latest !== null && ACTIVE.has(latest.status) && planOf(latest) !== id) {
        throw conflict(latest.run_id, planOf(latest), latest.status);
      }
      await plans.approve(id, hash, actor);
      let run: Awaited<ReturnType<RepairRunStarter['trigger']>>;
      try {
        run = await engine.trigger(REPAIR_JOB_NAME, { params: { plan_id: id } });
      } catch (error) {
        await plans.releaseApproval(id);
        throw error;
      }
      if (run.already_running || run.resumed) {
        // The engine answered with an existing run: it must be this plan's.
        const active = await engine.latestRun(REPAIR_JOB_NAME);
        if (active === null || active.run_id !== run.run_id || planOf(active) !== id) {
          await plans.releaseApproval(id);
          throw conflict(
            run.run_id,
            active?.run_id === run.run_id ? planOf(active) : 'another plan',
            active?.status ?? 'active',
          );
        }
      }
      return { runId: run.run_id };
    },
  };
}

/** What {@link createRepairService} returns. */
export type RepairService = ReturnType<typeof createRepairService>;
