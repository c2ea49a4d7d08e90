import type {
  NewRepairPlan,
  RepairFindingRow,
  RepairSelection,
  StoredRepairPlan,
} from '@oxicloud/consistency';

/**
 * Where repair plans live (adapter: `PgRepairPlans` of `@oxicloud/consistency`,
 * which owns `jobs.findings` and the plan tables).
 */
export interface RepairPlanRepository {
  /** The open findings of a selection, in a stable order. */
  selectFindings(selection: RepairSelection): Promise<RepairFindingRow[]>;
  create(plan: NewRepairPlan): Promise<string>;
  get(id: string): Promise<StoredRepairPlan | null>;
  /** New lines and hash for a plan not yet approved (the operator's choices). */
  replaceLines(id: string, readHash: string, hash: string, lines: NewRepairPlan['lines']): Promise<void>;
}
