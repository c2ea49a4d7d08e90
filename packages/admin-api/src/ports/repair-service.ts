/** Which open findings a repair plan covers. */
export type RepairSelectionInput =
  | { readonly findingIds: readonly string[] }
  | { readonly check?: string; readonly kind?: string; readonly severity?: string };

/** A repair plan as the routes serve it (the lines are the planner's JSON). */
export interface RepairPlanDocument {
  readonly id: string;
  readonly hash: string;
  readonly state: string;
  readonly selection: unknown;
  readonly createdBy: string;
  readonly createdAt: Date;
  readonly approvedBy: string | null;
  readonly runId: string | null;
  readonly unchosen: number;
  /** JSON objects: the planner's lines with `status` and `skipReason`. */
  readonly lines: readonly object[];
}

/**
 * The port `/api/admin/repairs` uses (wired in `apps/server` from
 * `createRepairPlanner`, `PgRepairPlans` and the engine's `repair` job).
 * Errors carry a `code`: `INVALID_OPTIONS` / `INVALID_ARGUMENT` (a bad
 * selection or choice: 400), `PLAN_NOT_FOUND` (404), `PLAN_CONFLICT` (hash
 * differs or state does not allow it: 409).
 */
export interface RepairService {
  plan(input: {
    readonly selection: RepairSelectionInput;
    readonly choices: Readonly<Record<string, string>>;
    readonly actor: string;
  }): Promise<RepairPlanDocument>;
  get(id: string): Promise<RepairPlanDocument | null>;
  choose(id: string, choices: Readonly<Record<string, string>>): Promise<RepairPlanDocument>;
  /** Approves the plan if its hash is `hash`, then starts the `repair` run. */
  apply(id: string, hash: string, actor: string): Promise<{ readonly runId: string }>;
}
