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

/**
 * Plan, read, choose and apply: what `/api/admin/repairs` and `oxijobs
 * repair` call. `apply` approves the plan only when its hash is the one the
 * operator read, then starts the `repair` run. It refuses (`PLAN_CONFLICT`)
 * while another plan's repair run is active: a trigger would resume that run.
 */
export function createRepairService(options: {
  readonly planner: RepairPlanner;
  readonly plans: { approve(id: string, hash: string, actor: string): Promise<void> };
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
      const activePlan = (latest?.params as { plan_id?: unknown } | undefined)?.plan_id;
      if (latest !== null && ACTIVE.has(latest.status) && activePlan !== id) {
        throw Object.assign(
          new TenantsError(
            'INVALID_ARGUMENT',
            `the repair run ${latest.run_id} of plan ${String(activePlan)} is ${latest.status}: let it finish (or resume it) before applying another plan`,
          ),
          { code: 'PLAN_CONFLICT' },
        );
      }
      await plans.approve(id, hash, actor);
      const run = await engine.trigger(REPAIR_JOB_NAME, { params: { plan_id: id } });
      return { runId: run.run_id };
    },
  };
}

/** What {@link createRepairService} returns. */
export type RepairService = ReturnType<typeof createRepairService>;
