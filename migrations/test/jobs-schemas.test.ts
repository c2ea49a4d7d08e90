import { readFileSync } from 'node:fs';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../src/index.js';

/** A dump of a database migrated by the migrations before the jobs tables moved into their packages. */
const dump = readFileSync(new URL('./fixtures/schema-before-issue-16.sql', import.meta.url), 'utf8');

const snapshot = async (db: TestDatabase) => ({
  runs: (
    await db.pool.query(
      `SELECT id, job_name, status, started_at, last_progress_at, completed_at, cursor, stats, params,
              error_message, pauses, active_ms, running_since FROM jobs.recoverable_runs ORDER BY id`,
    )
  ).rows,
  findings: (
    await db.pool.query(
      'SELECT id, run_id, kind, severity, resource_id, detail, found_at FROM jobs.run_findings ORDER BY id',
    )
  ).rows,
  registrations: (await db.pool.query('SELECT * FROM jobs.job_registrations ORDER BY job_name')).rows,
  migrations: (await db.pool.query('SELECT name, checksum FROM public.oxicloud_migrations ORDER BY name'))
    .rows,
});

describe('a database migrated before the packages owned their schemas (the old storage model)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
    await db.pool.query(dump);
  });
  afterAll(async () => {
    await db.drop();
  });

  it('is refused with DOMAIN_MISMATCH (the old model is not run any more), and not a row changes', async () => {
    const before = await snapshot(db);
    expect(before.runs).toHaveLength(3);
    expect(before.findings).toHaveLength(2);
    expect(before.migrations.map((m) => m.name)).toContain('0005_jobs.sql');
    const result = await migrate(db.pool);
    expect(result.error?.code).toBe('DOMAIN_MISMATCH');
    expect(result.error?.message).toContain("lists the engine's storage files");
    expect(result.applied).toEqual([]);
    expect(await snapshot(db)).toEqual(before);
  });
});

describe('a fresh database', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
  });
  afterAll(async () => {
    await db.drop();
  });

  it("gets the server's files and the packages' schemas", async () => {
    const result = await migrate(db.pool);
    expect(result.error).toBeUndefined();
    expect(result.applied).not.toContain('0005_jobs.sql');
    expect(result.alreadyApplied).toEqual([]);
    // The next call counts the same migrations, all already applied: "applied N" and "up to date (N)" agree.
    const again = await migrate(db.pool);
    expect(again.applied).toEqual([]);
    expect(again.alreadyApplied).toEqual(result.applied);
    expect(result.applied.slice(-9)).toEqual([
      '@oxicloud/recoverable/001_recoverable_runs.sql',
      '@oxicloud/recoverable/002_run_history.sql',
      '@oxicloud/recoverable/003_run_attempts.sql',
      '@oxicloud/recoverable/004_run_leases.sql',
      '@oxicloud/consistency/001_run_findings.sql',
      '@oxicloud/consistency/002_findings.sql',
      '@oxicloud/consistency/003_repairs.sql',
      '@oxicloud/consistency/004_repair_already_consistent.sql',
      '@oxicloud/cluster/001_cluster.sql',
    ]);
    const { rows } = await db.pool.query(
      `SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
        WHERE table_schema = 'jobs' AND table_name IN ('recoverable_runs', 'run_findings')
        ORDER BY table_name, column_name`,
    );
    expect(rows.length).toBeGreaterThan(20);
  });
});
