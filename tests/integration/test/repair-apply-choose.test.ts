/**
 * Apply and choose under races, on real Postgres (the engine is a port
 * stub): an apply whose trigger lands on another plan's run, or fails, takes
 * its approval back (409 naming the run); an approved plan without a run of
 * its own is triggered again; a choice built from a stale read is refused
 * (compare-and-swap on the hash) rather than silently overwriting another.
 */
import { randomUUID } from 'node:crypto';
import { PgRepairPlans, type Severity, severityRank } from '@oxicloud/consistency';
import { OxiRepairStore } from '@oxicloud/storage/oxicloud';
import {
  createRepairActions,
  createRepairPlanner,
  createRepairService,
  RESTORE_PARENT,
  type RepairPlanRepository,
  type RepairRunStarter,
  TRASH_CHILD,
} from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  insertOxiDrive as insertDrive,
  insertOxiFolder as insertFolder,
  insertOxiUser as insertUser,
  oxiKysely,
} from './oxicloud-domain-fixtures.js';

describe('repair apply and choose races', () => {
  let db: TestDatabase;
  let plans: PgRepairPlans;
  let actions: ReturnType<typeof createRepairActions>;
  let drive: string;

  async function insertFinding(check: string, kind: string, resourceId: string, severity: Severity) {
    const id = randomUUID();
    await db.pool.query(
      `INSERT INTO jobs.findings (id, check_name, kind, resource_id, severity, severity_rank, highest_severity,
                                 first_seen_at, last_seen_at, last_seen_boundary)
       VALUES ($1, $2, $3, $4, $5, $6, $5, now(), now(), now())`,
      [id, check, kind, resourceId, severity, severityRank(severity)],
    );
    return id;
  }

  async function driftPlan() {
    const finding = await insertFinding('drives_consistency', 'drive_used_bytes_drift', drive, 'Drift');
    return createRepairPlanner({ actions, plans }).plan({
      selection: { findingIds: [finding] },
      choices: {},
      actor: 'admin-1',
    });
  }

  const planRow = async (id: string) =>
    (
      await db.pool.query<{ state: string; approved_by: string | null }>(
        'SELECT state, approved_by FROM jobs.repair_plans WHERE id = $1',
        [id],
      )
    ).rows[0];

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    plans = new PgRepairPlans({ pool: db.pool });
    actions = createRepairActions({ store: new OxiRepairStore(oxiKysely(db.pool)) });
  });
  afterAll(async () => {
    await db.drop();
  });
  beforeEach(async () => {
    await db.pool.query(
      `DELETE FROM jobs.repair_audit; DELETE FROM jobs.repair_plans; DELETE FROM jobs.findings;
       DELETE FROM storage.folders; DELETE FROM storage.drives; DELETE FROM auth.users`,
    );
    const user = await insertUser(db.pool, 'owner');
    drive = await insertDrive(db.pool, user, 'main', 4096);
  });

  it('takes the approval back and answers 409 naming the run when the trigger lands on another plan’s run', async () => {
    const plan = await driftPlan();
    const other = randomUUID();
    let reads = 0;
    const engine: RepairRunStarter = {
      // The first read races with the other apply: no run yet.
      async latestRun() {
        reads += 1;
        return reads === 1 ? null : { run_id: 'run-a', status: 'Running', params: { plan_id: other } };
      },
      async trigger() {
        return { run_id: 'run-a', resumed: false, already_running: true };
      },
    };
    const service = createRepairService({ planner: createRepairPlanner({ actions, plans }), plans, engine });
    const error = await service.apply(plan.id, plan.hash, 'admin-2').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'PLAN_CONFLICT' });
    expect((error as Error).message).toMatch(/already active: run run-a of plan/);
    expect((error as Error).message).toContain(other);
    expect(await planRow(plan.id)).toEqual({ state: 'planned', approved_by: null });
  });

  it('takes the approval back when the trigger throws, and a later apply triggers the plan', async () => {
    const plan = await driftPlan();
    let failing = true;
    const triggered: unknown[] = [];
    const engine: RepairRunStarter = {
      async latestRun() {
        return null;
      },
      async trigger(_name, args) {
        if (failing) throw Object.assign(new Error('the engine is shutting down'), { code: 'SHUTTING_DOWN' });
        triggered.push(args.params);
        return { run_id: 'run-b', resumed: false, already_running: false };
      },
    };
    const service = createRepairService({ planner: createRepairPlanner({ actions, plans }), plans, engine });
    await expect(service.apply(plan.id, plan.hash, 'admin-2')).rejects.toMatchObject({
      code: 'SHUTTING_DOWN',
    });
    expect(await planRow(plan.id)).toEqual({ state: 'planned', approved_by: null });
    failing = false;
    await expect(service.apply(plan.id, plan.hash, 'admin-2')).resolves.toEqual({ runId: 'run-b' });
    expect(triggered).toEqual([{ plan_id: plan.id }]);
    expect(await planRow(plan.id)).toEqual({ state: 'approved', approved_by: 'admin-2' });
  });

  it('triggers an approved plan that has no run of its own instead of refusing it forever', async () => {
    const plan = await driftPlan();
    await plans.approve(plan.id, plan.hash, 'admin-2'); // approved, but its trigger never ran
    const engine: RepairRunStarter = {
      async latestRun() {
        return null;
      },
      async trigger() {
        return { run_id: 'run-c', resumed: false, already_running: false };
      },
    };
    const service = createRepairService({ planner: createRepairPlanner({ actions, plans }), plans, engine });
    await expect(service.apply(plan.id, plan.hash, 'admin-2')).resolves.toEqual({ runId: 'run-c' });
    // A different hash is still refused.
    await expect(service.apply(plan.id, '0'.repeat(64), 'admin-2')).rejects.toMatchObject({
      code: 'PLAN_CONFLICT',
    });
    // Once the plan is applied, apply refuses again.
    await plans.markApplied(plan.id);
    await expect(service.apply(plan.id, plan.hash, 'admin-2')).rejects.toMatchObject({
      code: 'PLAN_CONFLICT',
    });
  });

  it('refuses a choice built from a stale read rather than dropping the other choice, and 404s an unknown plan', async () => {
    const top = await insertFolder(db.pool, drive, null, 'top', new Date());
    const one = await insertFolder(db.pool, drive, top, 'one');
    const two = await insertFolder(db.pool, drive, top, 'two');
    const f1 = await insertFinding('folders_consistency', 'parent_trashed_mismatch', one, 'DataLoss');
    const f2 = await insertFinding('folders_consistency', 'parent_trashed_mismatch', two, 'DataLoss');
    const planner = createRepairPlanner({ actions, plans });
    const plan = await planner.plan({ selection: { findingIds: [f1, f2] }, choices: {}, actor: 'admin-1' });

    // The first choice reads the plan; the second one lands before it writes.
    let interleave: (() => Promise<unknown>) | null = () => planner.choose(plan.id, { [f2]: TRASH_CHILD });
    const racing: RepairPlanRepository = {
      selectFindings: (s) => plans.selectFindings(s),
      create: (p) => plans.create(p),
      replaceLines: (...args) => plans.replaceLines(...args),
      async get(id) {
        const read = await plans.get(id);
        const run = interleave;
        interleave = null;
        if (run !== null) await run();
        return read;
      },
    };
    await expect(
      createRepairPlanner({ actions, plans: racing }).choose(plan.id, { [f1]: RESTORE_PARENT }),
    ).rejects.toMatchObject({ code: 'PLAN_CONFLICT' });
    const now = await planner.get(plan.id);
    const choices = Object.fromEntries(
      (now?.lines ?? []).map((l) => [l.findingId, l.type === 'action' ? l.choice : undefined]),
    );
    expect(choices[f2]).toBe(TRASH_CHILD); // the choice that landed is kept

    await expect(planner.choose(randomUUID(), { [f1]: RESTORE_PARENT })).rejects.toMatchObject({
      code: 'PLAN_NOT_FOUND',
    });
  });
});
