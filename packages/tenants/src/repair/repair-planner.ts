import { createHash } from 'node:crypto';
import type { RepairSelection, StoredRepairPlan } from '@oxicloud/consistency';
import { TenantsError } from '../errors.js';
import type { RepairPlanRepository } from '../ports/repair-plan-repository.js';
import { chooseLine, type RepairActions } from './repair-actions.js';
import { type RepairLine, stableJson } from './repair-line.js';

/** The operator's choices: finding id → choice id. */
export type RepairChoices = Readonly<Record<string, string>>;

/** A plan as the operator reads it. */
export interface RepairPlanView {
  readonly id: string;
  /** sha256 hex over the lines in order (actions, choices, derived rows, last-seen runs): apply needs it. */
  readonly hash: string;
  readonly state: StoredRepairPlan['state'];
  readonly selection: RepairSelection;
  readonly createdBy: string;
  readonly createdAt: Date;
  readonly approvedBy: string | null;
  readonly runId: string | null;
  readonly lines: readonly (RepairLine & {
    readonly status: StoredRepairPlan['items'][number]['status'];
    /** Why apply skipped it. */
    readonly skipReason: string | null;
    /** After the run: `passed` (the finding is fixed), or why the re-check still fails. */
    readonly verified: string | null;
  })[];
  /** Lines that offer a choice none was made for: apply would skip them. */
  readonly unchosen: number;
}

/** The plan hash: sha256 hex of the lines' stable JSON, in order. */
export function planHash(lines: readonly RepairLine[]): string {
  return createHash('sha256')
    .update(stableJson({ version: 1, lines }))
    .digest('hex');
}

function withChoices(lines: readonly RepairLine[], choices: RepairChoices): RepairLine[] {
  const byFinding = new Map(lines.map((l) => [l.findingId, l]));
  for (const [findingId, choice] of Object.entries(choices)) {
    const line = byFinding.get(findingId);
    if (line === undefined) {
      throw new TenantsError(
        'INVALID_ARGUMENT',
        `choice for finding ${findingId}: the plan holds no line for it`,
      );
    }
    if (line.type !== 'action' || line.choices === undefined) {
      throw new TenantsError(
        'INVALID_ARGUMENT',
        `choice for finding ${findingId}: its line offers no choice`,
      );
    }
    const chosen = chooseLine(line, choice);
    if (chosen === null) {
      throw new TenantsError(
        'INVALID_ARGUMENT',
        `choice ${JSON.stringify(choice)} for finding ${findingId}: allowed ${line.choices.map((c) => c.id).join(', ')}`,
      );
    }
    byFinding.set(findingId, chosen);
  }
  return lines.map((l) => byFinding.get(l.findingId) as RepairLine);
}

function view(plan: StoredRepairPlan): RepairPlanView {
  const lines = plan.items.map((i) => ({
    ...(i.line as unknown as RepairLine),
    status: i.status,
    skipReason: i.reason,
    verified: i.verified,
  }));
  return {
    id: plan.id,
    hash: plan.hash,
    state: plan.state,
    selection: plan.selection,
    createdBy: plan.createdBy,
    createdAt: plan.createdAt,
    approvedBy: plan.approvedBy,
    runId: plan.runId,
    lines,
    unchosen: lines.filter((l) => l.type === 'action' && l.choices !== undefined && !l.choice).length,
  };
}

/** Creating, reading and choosing on repair plans. */
export interface RepairPlanner {
  /**
   * Plans the open findings of `selection` (nothing is written but the plan).
   * @throws {TenantsError} `INVALID_ARGUMENT` for a choice the plan cannot take.
   */
  plan(input: {
    selection: RepairSelection;
    choices?: RepairChoices;
    actor: string;
  }): Promise<RepairPlanView>;
  get(id: string): Promise<RepairPlanView | null>;
  /** Makes choices on a plan not yet approved: its lines and hash change. */
  choose(id: string, choices: RepairChoices): Promise<RepairPlanView>;
}

/** A {@link RepairPlanner} over the actions and the plan repository. */
export function createRepairPlanner(options: {
  readonly actions: RepairActions;
  readonly plans: RepairPlanRepository;
}): RepairPlanner {
  const { actions, plans } = options;
  const stored = (lines: readonly RepairLine[]) =>
    lines.map((l) => ({ findingId: l.findingId, line: l as unknown as Record<string, unknown> }));

  return {
    async plan({ selection, choices = {}, actor }) {
      const findings = await plans.selectFindings(selection);
      const planned: RepairLine[] = [];
      for (const finding of findings) planned.push(await actions.plan(finding));
      const lines = withChoices(planned, choices);
      const id = await plans.create({
        hash: planHash(lines),
        selection,
        createdBy: actor,
        lines: stored(lines),
      });
      return view((await plans.get(id)) as StoredRepairPlan);
    },
    async get(id) {
      const plan = await plans.get(id);
      return plan === null ? null : view(plan);
    },
    async choose(id, choices) {
      const plan = await plans.get(id);
      if (plan === null)
        throw Object.assign(new TenantsError('INVALID_ARGUMENT', `no repair plan ${id}`), {
          code: 'PLAN_NOT_FOUND',
        });
      const lines = withChoices(
        plan.items.map((i) => i.line as unknown as RepairLine),
        choices,
      );
      await plans.replaceLines(id, plan.hash, planHash(lines), stored(lines));
      return view((await plans.get(id)) as StoredRepairPlan);
    },
  };
}
