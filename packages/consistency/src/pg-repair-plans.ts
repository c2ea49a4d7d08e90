import type { SchemaOptions } from '@oxicloud/recoverable';
import { type Kysely, sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { ConsistencyError } from './consistency-error.js';
import { type FindingTables, findingTables, kyselyOf, type PgConsistencyOptions } from './finding-tables.js';
import { isSeverity, type Severity } from './severity.js';

/** Which open findings a repair plan covers: explicit ids, or a filter. */
export type RepairSelection =
  | { readonly findingIds: readonly string[] }
  | { readonly check?: string; readonly kind?: string; readonly severity?: Severity };

/** An open finding as a repair plan needs it. */
export interface RepairFindingRow {
  readonly id: string;
  readonly checkName: string;
  readonly kind: string;
  readonly resourceId: string;
  readonly lastSeenRunId: string | null;
  readonly detail: Readonly<Record<string, unknown>>;
}

/** One stored line of a plan. */
export interface StoredPlanItem {
  readonly position: number;
  readonly findingId: string | null;
  readonly line: Readonly<Record<string, unknown>>;
  /**
   * `already_consistent`: the run found the resource already right (its
   * re-check passed before anything was written); nothing was changed.
   */
  readonly status: 'pending' | 'applied' | 'already_consistent' | 'skipped' | 'needs_person';
  readonly reason: string | null;
  readonly doneAt: Date | null;
  /** After the run: `passed`, or why the re-check still fails; `null` before. */
  readonly verified: string | null;
}

/** A stored repair plan (`jobs.repair_plans` with its items). */
export interface StoredRepairPlan {
  readonly id: string;
  readonly hash: string;
  readonly state: 'planned' | 'approved' | 'applied';
  readonly selection: RepairSelection;
  readonly createdBy: string;
  readonly createdAt: Date;
  readonly approvedBy: string | null;
  readonly approvedAt: Date | null;
  readonly runId: string | null;
  readonly items: readonly StoredPlanItem[];
}

/** What a new plan stores. */
export interface NewRepairPlan {
  readonly hash: string;
  readonly selection: RepairSelection;
  readonly createdBy: string;
  readonly lines: readonly { readonly findingId: string; readonly line: Readonly<Record<string, unknown>> }[];
}

/** The most finding ids one explicit selection lists (a filter selects any number). */
export const MAX_PLAN_FINDINGS = 1000;

/** Findings read per statement while selecting (keyset pages on `(severity_rank, id)`). */
const SELECT_PAGE = 1000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface PlanRow {
  id: string;
  hash: string;
  state: StoredRepairPlan['state'];
  selection: RepairSelection;
  created_by: string;
  created_at: Date;
  approved_by: string | null;
  approved_at: Date | null;
  run_id: string | null;
}

/**
 * Repair plans in `jobs.repair_plans` / `jobs.repair_plan_items` (schema
 * version 3 of this package): selecting the open findings a plan covers,
 * storing a plan with its hash, reading it back, and replacing its lines
 * while it is not approved (the operator's choices).
 *
 * @example
 * ```ts
 * const plans = new PgRepairPlans({ pool });
 * const findings = await plans.selectFindings({ check: 'folders_consistency' });
 * ```
 */
export class PgRepairPlans {
  readonly #db: Kysely<unknown>;
  readonly #t: FindingTables;

  /**
   * `pool` or your own `db`, and the engine `schema` (the one given to
   * `migrate()`; @defaultValue `jobs`): see {@link PgConsistencyOptions}.
   * A repair job's `lockPendingPlanItem` / `recordPlanItem` take the same `schema`.
   *
   * @throws Error when `schema` is not a schema name the engine takes (see `engineSchema`).
   */
  constructor(options: PgConsistencyOptions) {
    this.#t = findingTables(options.schema);
    this.#db = kyselyOf(options);
  }

  /**
   * The open (or reopened) findings of `selection`, in a stable order (worst
   * severity first, then id): every one of them, read in keyset pages (a
   * filter over more findings than a page is not cut short). An id list
   * holds at most {@link MAX_PLAN_FINDINGS} ids.
   *
   * @throws {ConsistencyError} `INVALID_OPTIONS` for an empty or too long id
   *   list, a malformed id, an unknown severity, or a filter with no field.
   */
  async selectFindings(selection: RepairSelection): Promise<RepairFindingRow[]> {
    let where: ReturnType<typeof sql>;
    if ('findingIds' in selection) {
      const ids = selection.findingIds;
      if (ids.length === 0 || ids.length > MAX_PLAN_FINDINGS) {
        throw new ConsistencyError(
          'INVALID_OPTIONS',
          `finding_ids must list 1..${MAX_PLAN_FINDINGS} ids, got ${ids.length}`,
        );
      }
      const bad = ids.find((id) => !UUID.test(id));
      if (bad !== undefined) {
        throw new ConsistencyError('INVALID_OPTIONS', `finding id ${JSON.stringify(bad)} is not a UUID`);
      }
      where = sql`id = ANY(${[...ids]}::uuid[])`;
    } else {
      const { check, kind, severity } = selection;
      if (check === undefined && kind === undefined && severity === undefined) {
        throw new ConsistencyError('INVALID_OPTIONS', 'a filter needs at least one of check, kind, severity');
      }
      if (severity !== undefined && !isSeverity(severity)) {
        throw new ConsistencyError('INVALID_OPTIONS', `unknown severity ${JSON.stringify(severity)}`);
      }
      where = sql`TRUE
        ${check === undefined ? sql`` : sql`AND check_name = ${check}`}
        ${kind === undefined ? sql`` : sql`AND kind = ${kind}`}
        ${severity === undefined ? sql`` : sql`AND severity = ${severity}`}`;
    }
    const out: RepairFindingRow[] = [];
    let after: { rank: number; id: string } | null = null;
    for (;;) {
      const { rows } = await sql<{
        id: string;
        check_name: string;
        kind: string;
        resource_id: string;
        last_seen_run_id: string | null;
        detail: Record<string, unknown>;
        severity_rank: number;
      }>`
        SELECT id, check_name, kind, resource_id, last_seen_run_id, detail, severity_rank FROM ${this.#t.findings}
         WHERE state IN ('open', 'reopened') AND ${where}
           ${after === null ? sql`` : sql`AND (severity_rank, id) > (${after.rank}, ${after.id}::uuid)`}
         ORDER BY severity_rank, id
         LIMIT ${SELECT_PAGE}`.execute(this.#db);
      for (const r of rows) {
        out.push({
          id: r.id,
          checkName: r.check_name,
          kind: r.kind,
          resourceId: r.resource_id,
          lastSeenRunId: r.last_seen_run_id,
          detail: r.detail,
        });
      }
      const last = rows.at(-1);
      if (rows.length < SELECT_PAGE || last === undefined) return out;
      after = { rank: last.severity_rank, id: last.id };
    }
  }

  /** Stores a new plan (state `planned`); returns its id. */
  async create(plan: NewRepairPlan): Promise<string> {
    const id = uuidv7();
    await this.#db.transaction().execute(async (trx) => {
      await sql`
        INSERT INTO ${this.#t.repairPlans} (id, hash, selection, created_by)
        VALUES (${id}, ${plan.hash}, ${JSON.stringify(plan.selection)}::jsonb, ${plan.createdBy})`.execute(
        trx,
      );
      await insertItems(trx, this.#t, id, plan.lines);
    });
    return id;
  }

  /** The plan with its items in order; `null` when there is none. */
  async get(id: string): Promise<StoredRepairPlan | null> {
    if (!UUID.test(id)) return null;
    const plan = await sql<PlanRow>`SELECT * FROM ${this.#t.repairPlans} WHERE id = ${id}`.execute(this.#db);
    const row = plan.rows[0];
    if (row === undefined) return null;
    const items = await sql<{
      position: number;
      finding_id: string | null;
      line: Record<string, unknown>;
      status: StoredPlanItem['status'];
      reason: string | null;
      done_at: Date | null;
      verified: string | null;
    }>`
      SELECT position, finding_id, line, status, reason, done_at, verified FROM ${this.#t.repairPlanItems}
       WHERE plan_id = ${id} ORDER BY position`.execute(this.#db);
    return {
      id: row.id,
      hash: row.hash,
      state: row.state,
      selection: row.selection,
      createdBy: row.created_by,
      createdAt: row.created_at,
      approvedBy: row.approved_by,
      approvedAt: row.approved_at,
      runId: row.run_id,
      items: items.rows.map((r) => ({
        position: r.position,
        findingId: r.finding_id,
        line: r.line,
        status: r.status,
        reason: r.reason,
        doneAt: r.done_at,
        verified: r.verified,
      })),
    };
  }

  /**
   * Approves a `planned` plan whose hash is `hash` (what the operator
   * reviewed): state `approved`, who and when.
   *
   * An `approved` plan with the same hash and no run of its own yet (its
   * trigger failed or lost to another plan's run) is accepted again, so
   * apply can trigger it.
   *
   * @throws {ConsistencyError} `PLAN_NOT_FOUND`; `PLAN_CONFLICT` when the hash
   *   differs (the plan changed since it was read) or it is neither `planned`
   *   nor approved without a run.
   */
  async approve(id: string, hash: string, actor: string): Promise<void> {
    if (!UUID.test(id)) throw new ConsistencyError('PLAN_NOT_FOUND', `no repair plan ${id}`);
    await this.#db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ state: string; hash: string; run_id: string | null }>`
        SELECT state, hash, run_id FROM ${this.#t.repairPlans} WHERE id = ${id} FOR UPDATE`.execute(trx);
      const row = rows[0];
      if (row === undefined || !UUID.test(id))
        throw new ConsistencyError('PLAN_NOT_FOUND', `no repair plan ${id}`);
      if (row.hash !== hash) {
        throw new ConsistencyError(
          'PLAN_CONFLICT',
          `repair plan ${id} has hash ${row.hash}, not ${hash}: read the plan again and approve what it says now`,
        );
      }
      if (row.state === 'approved' && row.run_id === null) return;
      if (row.state !== 'planned') {
        throw new ConsistencyError('PLAN_CONFLICT', `repair plan ${id} is already ${row.state}`);
      }
      await sql`
        UPDATE ${this.#t.repairPlans} SET state = 'approved', approved_by = ${actor}, approved_at = now()
         WHERE id = ${id}`.execute(trx);
    });
  }

  /**
   * Takes back the approval of a plan whose run did not start (its trigger
   * failed, or another plan's run is active): `planned` again, only while it
   * is still approved with no run.
   */
  async releaseApproval(id: string): Promise<void> {
    await sql`
      UPDATE ${this.#t.repairPlans} SET state = 'planned', approved_by = NULL, approved_at = NULL
       WHERE id = ${id} AND state = 'approved' AND run_id IS NULL`.execute(this.#db);
  }

  /** Links the run that applies the plan. */
  async attachRun(id: string, runId: string): Promise<void> {
    await sql`UPDATE ${this.#t.repairPlans} SET run_id = ${runId} WHERE id = ${id}`.execute(this.#db);
  }

  /**
   * Records the re-check of an applied item: `null` = passed, and its
   * finding (open or reopened) becomes `fixed` by the repair run (event
   * `fixed`, actor `repair:<approver>`); otherwise the reason is kept on the
   * item and the finding stays open. Idempotent.
   */
  async recordVerification(
    planId: string,
    position: number,
    failure: string | null,
    fix: { readonly findingId: string | null; readonly runId: string; readonly actor: string },
  ): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await sql`
        UPDATE ${this.#t.repairPlanItems} SET verified = ${failure ?? 'passed'}
         WHERE plan_id = ${planId} AND position = ${position}`.execute(trx);
      if (failure !== null || fix.findingId === null) return;
      const fixed = await sql<{ id: string; severity: string; magnitude: string | null }>`
        UPDATE ${this.#t.findings}
           SET state = 'fixed', fixed_run_id = ${fix.runId}, fixed_at = now(),
               state_changed_by = ${fix.actor}, state_changed_at = now()
         WHERE id = ${fix.findingId} AND state IN ('open', 'reopened')
        RETURNING id, severity, magnitude`.execute(trx);
      const row = fixed.rows[0];
      if (row === undefined) return;
      await sql`
        INSERT INTO ${this.#t.findingEvents} (finding_id, run_id, actor, event, state, severity, magnitude, comment)
        VALUES (${row.id}, ${fix.runId}, ${fix.actor}, 'fixed', 'fixed', ${row.severity}, ${row.magnitude},
                ${`repair plan ${planId}`})`.execute(trx);
    });
  }

  /** Marks an approved plan `applied` (its run completed). */
  async markApplied(id: string): Promise<void> {
    await sql`UPDATE ${this.#t.repairPlans} SET state = 'applied' WHERE id = ${id} AND state = 'approved'`.execute(
      this.#db,
    );
  }

  /** Up to `limit` items after `afterPosition` (all from the start when `null`), in order. */
  async itemsAfter(id: string, afterPosition: number | null, limit: number): Promise<StoredPlanItem[]> {
    const { rows } = await sql<{
      position: number;
      finding_id: string | null;
      line: Record<string, unknown>;
      status: StoredPlanItem['status'];
      reason: string | null;
      done_at: Date | null;
      verified: string | null;
    }>`
      SELECT position, finding_id, line, status, reason, done_at, verified FROM ${this.#t.repairPlanItems}
       WHERE plan_id = ${id} AND position > ${afterPosition ?? -1}
       ORDER BY position LIMIT ${limit}`.execute(this.#db);
    return rows.map((r) => ({
      position: r.position,
      findingId: r.finding_id,
      line: r.line,
      status: r.status,
      reason: r.reason,
      doneAt: r.done_at,
      verified: r.verified,
    }));
  }

  /**
   * Replaces the lines and hash of a plan that is still `planned` (the
   * operator made choices): a new hash, so an approval of the old content
   * no longer matches.
   *
   * Compare-and-swap: `readHash` is the hash the new lines were built from;
   * a plan whose hash changed since (another choice landed) is refused.
   *
   * @throws {ConsistencyError} `PLAN_NOT_FOUND`; `PLAN_CONFLICT` once approved
   *   or when its hash is no longer `readHash`.
   */
  async replaceLines(
    id: string,
    readHash: string,
    hash: string,
    lines: NewRepairPlan['lines'],
  ): Promise<void> {
    if (!UUID.test(id)) throw new ConsistencyError('PLAN_NOT_FOUND', `no repair plan ${id}`);
    await this.#db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ state: string; hash: string }>`
        SELECT state, hash FROM ${this.#t.repairPlans} WHERE id = ${id} FOR UPDATE`.execute(trx);
      const row = rows[0];
      if (row === undefined) throw new ConsistencyError('PLAN_NOT_FOUND', `no repair plan ${id}`);
      if (row.hash !== readHash) {
        throw new ConsistencyError(
          'PLAN_CONFLICT',
          `repair plan ${id} changed while the choice was made (hash ${row.hash}, not ${readHash}): read it again and choose`,
        );
      }
      if (row.state !== 'planned') {
        throw new ConsistencyError(
          'PLAN_CONFLICT',
          `repair plan ${id} is ${row.state}: its lines can no longer change`,
        );
      }
      await sql`DELETE FROM ${this.#t.repairPlanItems} WHERE plan_id = ${id}`.execute(trx);
      await insertItems(trx, this.#t, id, lines);
      await sql`UPDATE ${this.#t.repairPlans} SET hash = ${hash} WHERE id = ${id}`.execute(trx);
    });
  }
}

/** What the item's transaction records for one line of a running plan. */
export interface PlanItemRecord {
  readonly planId: string;
  readonly position: number;
  readonly status: 'applied' | 'already_consistent' | 'skipped';
  readonly reason?: string | null;
  /** For an applied item: the audit row. */
  readonly audit?: {
    readonly runId: string | null;
    readonly approvedBy: string;
    readonly findingId: string | null;
    readonly checkName: string;
    readonly kind: string;
    readonly resourceId: string;
    readonly action: string;
    readonly before: Readonly<Record<string, unknown>>;
    readonly after: Readonly<Record<string, unknown>>;
  };
}

/**
 * Locks one pending item of a plan inside the caller's transaction: `true`
 * when it is still `pending` (apply it), `false` when it was done already
 * (a replayed batch after a resume: never apply twice). `options.schema`:
 * the engine schema, as given to {@link PgRepairPlans} (@defaultValue `jobs`).
 *
 * @throws Error when `schema` is not a schema name the engine takes (see `engineSchema`).
 */
export async function lockPendingPlanItem(
  // biome-ignore lint/suspicious/noExplicitAny: the caller's transaction has its own database type
  tx: Kysely<any>,
  planId: string,
  position: number,
  options: SchemaOptions = {},
): Promise<boolean> {
  const t = findingTables(options.schema);
  const { rows } = await sql<{ status: string }>`
    SELECT status FROM ${t.repairPlanItems} WHERE plan_id = ${planId} AND position = ${position}
       FOR UPDATE`.execute(tx);
  return rows[0]?.status === 'pending';
}

/**
 * Records an item's outcome (and its audit row when applied) in the caller's
 * transaction. `options.schema`: the engine schema, as given to
 * {@link PgRepairPlans} (@defaultValue `jobs`).
 *
 * @throws Error when `schema` is not a schema name the engine takes (see `engineSchema`).
 */
export async function recordPlanItem(
  // biome-ignore lint/suspicious/noExplicitAny: the caller's transaction has its own database type
  tx: Kysely<any>,
  record: PlanItemRecord,
  options: SchemaOptions = {},
): Promise<void> {
  const t = findingTables(options.schema);
  await sql`
    UPDATE ${t.repairPlanItems} SET status = ${record.status}, reason = ${record.reason ?? null}, done_at = now()
     WHERE plan_id = ${record.planId} AND position = ${record.position}`.execute(tx);
  const a = record.audit;
  if (a === undefined) return;
  await sql`
    INSERT INTO ${t.repairAudit} (plan_id, position, run_id, approved_by, finding_id, check_name, kind,
                                   resource_id, action, before, after)
    VALUES (${record.planId}, ${record.position}, ${a.runId}, ${a.approvedBy}, ${a.findingId}, ${a.checkName},
            ${a.kind}, ${a.resourceId}, ${a.action}, ${JSON.stringify(a.before)}::jsonb,
            ${JSON.stringify(a.after)}::jsonb)`.execute(tx);
}

async function insertItems(
  trx: Kysely<unknown>,
  t: FindingTables,
  planId: string,
  lines: NewRepairPlan['lines'],
): Promise<void> {
  if (lines.length === 0) return;
  await sql`
    INSERT INTO ${t.repairPlanItems} (plan_id, position, finding_id, line, status)
    SELECT ${planId}, (l.ord - 1)::int, l.finding_id, l.line,
           CASE WHEN l.line->>'type' = 'needs_person' THEN 'needs_person' ELSE 'pending' END
      FROM unnest(${lines.map((l) => l.findingId)}::uuid[], ${lines.map((l) => JSON.stringify(l.line))}::jsonb[])
           WITH ORDINALITY AS l(finding_id, line, ord)`.execute(trx);
}
