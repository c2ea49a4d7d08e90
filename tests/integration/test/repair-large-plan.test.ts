/**
 * A repair plan over more findings than one page (1000): a filter selects
 * every open finding, none silently dropped; the run applies and re-verifies
 * every line; an explicit id list over the limit is refused with a clear
 * error, not cut short.
 */
import { PgRepairPlans } from '@oxicloud/consistency';
import { RecoverableEngine } from '@oxicloud/recoverable';
import { OxiRepairStore } from '@oxicloud/storage/oxicloud';
import {
  createRepairActions,
  createRepairJob,
  createRepairPlanner,
  REPAIR_JOB_NAME,
} from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertOxiUser as insertUser, oxiKysely } from './oxicloud-domain-fixtures.js';

/** More than one selection page and more than one run batch. */
const DRIVES = 1_150;

describe('a repair plan over more than 1000 findings', () => {
  let db: TestDatabase;
  let plans: PgRepairPlans;
  let findingIds: string[];

  const count = async (q: string, values: unknown[] = []) =>
    (await db.pool.query<{ n: number }>(q, values)).rows[0]?.n;

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    plans = new PgRepairPlans({ pool: db.pool });
    const user = await insertUser(db.pool, 'owner');
    // Shared drives with no files whose used_bytes drifted to 7 (OxiCloud's four writes, set-based, one
    // transaction: the root check runs at COMMIT), and one open finding each (real rows).
    await db.pool.query(
      `BEGIN;
       INSERT INTO storage.drives (kind, used_bytes) SELECT 'shared', 7 FROM generate_series(1, ${DRIVES}) i;
       INSERT INTO storage.folders (name, parent_id, drive_id) SELECT 'd-' || d.id, NULL, d.id FROM storage.drives d;
       UPDATE storage.drives d SET root_folder_id = f.id FROM storage.folders f WHERE f.drive_id = d.id;
       INSERT INTO storage.role_grants (subject_type, subject_id, resource_type, resource_id, role, granted_by)
       SELECT 'user', '${user}', 'drive', d.id, 'owner', '${user}' FROM storage.drives d;
       COMMIT;`,
    );
    const { rows } = await db.pool.query<{ id: string }>(
      `INSERT INTO jobs.findings (id, check_name, kind, resource_id, severity, severity_rank, highest_severity,
                                  first_seen_at, last_seen_at, last_seen_boundary)
       SELECT gen_random_uuid(), 'drives_consistency', 'drive_used_bytes_drift', d.id::text, 'Drift', 3, 'Drift',
              now(), now(), now()
         FROM storage.drives d
       RETURNING id`,
    );
    findingIds = rows.map((r) => r.id);
    // A finding of another check, which the filter must leave out.
    await db.pool.query(
      `INSERT INTO jobs.findings (id, check_name, kind, resource_id, severity, severity_rank, highest_severity,
                                  first_seen_at, last_seen_at, last_seen_boundary)
       VALUES (gen_random_uuid(), 'grants_consistency', 'dangling_grant', gen_random_uuid()::text, 'Reclaimable',
               1, 'Reclaimable', now(), now(), now())`,
    );
  });
  afterAll(async () => {
    await db.drop();
  });

  it('a filter selects every open finding, in order, none dropped at a page boundary', async () => {
    const selected = await plans.selectFindings({ check: 'drives_consistency' });
    expect(selected.length).toBe(DRIVES);
    expect(new Set(selected.map((f) => f.id))).toEqual(new Set(findingIds));
    const ids = selected.map((f) => f.id);
    expect(ids).toEqual([...ids].sort());
  });

  it('an id list over 1000 is refused, saying the limit, not cut short', async () => {
    await expect(plans.selectFindings({ findingIds })).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
      message: expect.stringMatching(`finding_ids must list 1..1000 ids, got ${DRIVES}`),
    });
  });

  it('plans, applies and re-verifies every line', async () => {
    const store = new OxiRepairStore(oxiKysely(db.pool));
    const actions = createRepairActions({ store });
    const planner = createRepairPlanner({ actions, plans });
    const plan = await planner.plan({ selection: { check: 'drives_consistency' }, actor: 'admin' });
    expect(plan.lines.length).toBe(DRIVES);
    expect(plan.lines.every((l) => l.type === 'action')).toBe(true);
    expect(
      await count('SELECT count(*)::int AS n FROM jobs.repair_plan_items WHERE plan_id = $1', [plan.id]),
    ).toBe(DRIVES);

    await plans.approve(plan.id, plan.hash, 'admin');
    const engine = new RecoverableEngine({ pool: db.pool });
    engine.register(createRepairJob({ plans, actions, store }));
    try {
      const outcome = await engine.runOrResume(REPAIR_JOB_NAME, {
        params: { plan_id: plan.id, batch_size: 500 },
      });
      expect(outcome).toMatchObject({ kind: 'ok', extra: { completed: true } });
      const run = await engine.latestRun(REPAIR_JOB_NAME);
      expect(run?.stats).toMatchObject({ applied_items: DRIVES, skipped_items: 0, count: DRIVES });
    } finally {
      await engine.shutdown({ timeoutMs: 1000 }).catch(() => undefined);
    }
    expect(await count('SELECT count(*)::int AS n FROM storage.drives WHERE used_bytes <> 0')).toBe(0);
    expect(await count('SELECT storage_used_bytes::int AS n FROM auth.users')).toBe(0);
    expect(
      await count('SELECT count(*)::int AS n FROM jobs.repair_audit WHERE plan_id = $1', [plan.id]),
    ).toBe(DRIVES);
    expect(
      await count(
        "SELECT count(*)::int AS n FROM jobs.repair_plan_items WHERE plan_id = $1 AND status = 'applied' AND verified = 'passed'",
        [plan.id],
      ),
    ).toBe(DRIVES);
    expect(
      await count(
        "SELECT count(*)::int AS n FROM jobs.findings WHERE check_name = 'drives_consistency' AND state = 'fixed'",
      ),
    ).toBe(DRIVES);
  }, 120_000);
});
