import { randomUUID } from 'node:crypto';
import { migrate } from '@oxicloud/migrations';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgJobFreshnessStore } from './job-freshness-store.js';

const SCHEMA = 'oxijobs_t';

/** The rows of `<schema>.job_registrations`. */
async function registrations(db: TestDatabase, schema: string): Promise<number> {
  const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM ${schema}.job_registrations`);
  return Number(rows[0].n);
}

describe(`PgJobFreshnessStore in another schema (${SCHEMA})`, () => {
  let db: TestDatabase;
  beforeAll(async () => {
    // The template holds the jobs schema; the engine's own tables go to SCHEMA beside it, as beside a real OxiCloud.
    db = await createTestDatabase();
    const result = await migrate(db.pool, { sidecar: true, engineSchema: SCHEMA });
    if (result.error) throw result.error;
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('registers, records runs and claims alerts in that schema only', async () => {
    const before = await registrations(db, 'jobs');
    const store = new PgJobFreshnessStore(db.pool, { schema: SCHEMA });

    await store.register(['tick_job', 'walk_job']);
    const at = new Date('2026-01-02T03:04:05.000Z');
    await store.recordRun({ job: 'tick_job', at, success: true });
    const runId = randomUUID();
    const completedAt = new Date('2026-01-02T04:00:00.000Z');
    await db.pool.query(
      `INSERT INTO ${SCHEMA}.recoverable_runs (id, job_name, status, started_at, last_progress_at, completed_at)
       VALUES ($1, 'walk_job', 'Completed', $2, $2, $2)`,
      [runId, completedAt],
    );
    await store.recordRecoverableRun(runId, true, true);

    const byJob = new Map((await store.list()).map((r) => [r.job, r]));
    expect(byJob.get('tick_job')).toMatchObject({
      lastRunAt: at,
      lastSuccessAt: at,
      lastDeepSuccessAt: null,
    });
    expect(byJob.get('walk_job')).toMatchObject({
      lastRunAt: completedAt,
      lastSuccessAt: completedAt,
      lastDeepSuccessAt: completedAt,
    });

    expect(await store.claimOverdueAlert('tick_job', false, at)).toBe(true);
    expect(await store.claimOverdueAlert('tick_job', false, at)).toBe(false);
    await store.releaseOverdueAlert('tick_job', false);
    expect(await store.claimOverdueAlert('tick_job', false, at)).toBe(true);

    expect(await registrations(db, SCHEMA)).toBe(2);
    expect(await registrations(db, 'jobs')).toBe(before);
    expect(await new PgJobFreshnessStore(db.pool).list()).toHaveLength(before);
  });

  it('refuses a schema the engine does not take, saying what is allowed', () => {
    expect(() => new PgJobFreshnessStore(db.pool, { schema: 'public' })).toThrow(
      /"public" is a schema of OxiCloud or of Postgres/,
    );
    expect(() => new PgJobFreshnessStore(db.pool, { schema: 'Oxi-Jobs' })).toThrow(
      /use lower-case letters, digits and _/,
    );
  });
});
