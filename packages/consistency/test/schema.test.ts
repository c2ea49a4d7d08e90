import { migrate as migrateRecoverable } from '@oxicloud/recoverable';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsistencyError, migrate, PgFindingStore } from '../src/index.js';

describe('the package-owned schema of jobs.run_findings', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
  });
  afterAll(async () => {
    await db.drop();
  });

  it("migrate() refuses while @oxicloud/recoverable's schema is not applied, and says so", async () => {
    const error = await migrate(db.pool).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConsistencyError);
    expect(error).toMatchObject({
      code: 'SCHEMA_MISSING',
      message:
        'jobs.run_findings needs jobs.recoverable_runs of @oxicloud/recoverable at version 1 or later, but it does not exist: ' +
        'call migrate() from @oxicloud/recoverable first (see its README)',
    });
    const { rows } = await db.pool.query("SELECT to_regclass('jobs.run_findings') AS t");
    expect(rows[0].t).toBeNull();
  });

  it('a findings store on a database without its table says to call migrate()', async () => {
    await migrateRecoverable(db.pool);
    const store = new PgFindingStore({ pool: db.pool });
    await expect(store.summarize('0190a000-0000-7000-8000-000000000001')).rejects.toMatchObject({
      code: 'SCHEMA_MISSING',
      message: 'jobs.run_findings does not exist: call migrate() from @oxicloud/consistency (see its README)',
    });
  });

  it('after both migrations, findings are recorded with UUIDv7 ids made by the package (no database function)', async () => {
    expect(await migrate(db.pool)).toEqual({
      package: '@oxicloud/consistency',
      from: 0,
      to: 4,
      applied: [
        '001_run_findings.sql',
        '002_findings.sql',
        '003_repairs.sql',
        '004_repair_already_consistent.sql',
      ],
    });
    expect((await migrate(db.pool)).applied).toEqual([]);
    const runId = '0190a000-0000-7000-8000-000000000001';
    await db.pool.query(
      `INSERT INTO jobs.recoverable_runs (id, job_name, status, started_at, last_progress_at)
       VALUES ($1, 'files_consistency', 'Running', now(), now())`,
      [runId],
    );
    const store = new PgFindingStore({ pool: db.pool });
    const finding = {
      kind: 'missing_blob',
      severity: 'DataLoss',
      resourceId: 'f1',
      detail: { n: 1 },
    } as const;
    expect((await store.write(runId, [finding])).recordedNew).toEqual([true]);
    expect((await store.write(runId, [finding])).recordedNew).toEqual([false]);
    const [stored] = await store.list(runId);
    expect(stored?.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('a plan with audit rows cannot be deleted: the audit outlives its plan', async () => {
    const planId = '0190a000-0000-7000-8000-0000000000a1';
    await db.pool.query(
      `INSERT INTO jobs.repair_plans (id, hash, selection, created_by) VALUES ($1, $2, '{}', 'admin')`,
      [planId, '0'.repeat(64)],
    );
    await db.pool.query(
      `INSERT INTO jobs.repair_audit (plan_id, position, approved_by, check_name, kind, resource_id, action, before, after)
       VALUES ($1, 0, 'admin', 'drives_consistency', 'drive_used_bytes_drift', 'd1', 'set_drive_used_bytes', '{}', '{}')`,
      [planId],
    );
    const refused = await db.pool.query('DELETE FROM jobs.repair_plans WHERE id = $1', [planId]).then(
      () => undefined,
      (error: { code?: string }) => error,
    );
    // Postgres 18 says restrict_violation (23001) for ON DELETE RESTRICT; 15 says foreign_key_violation (23503).
    expect(['23001', '23503']).toContain(refused?.code);
    const { rows } = await db.pool.query(
      'SELECT count(*)::int AS n FROM jobs.repair_audit WHERE plan_id = $1',
      [planId],
    );
    expect(rows[0].n).toBe(1);
  });
});
