import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  completed,
  migrate,
  RECOVERABLE_SCHEMA_VERSION,
  RecoverableEngine,
  RecoverableError,
  recoverableSchemaStatus,
  VERSION_TABLE,
} from '../src/index.js';

const job = { name: 'noop', runResumable: async () => completed() };

describe('the package-owned schema of jobs.recoverable_runs', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
  });
  afterAll(async () => {
    await db.drop();
  });

  it('on an empty database the engine says to call migrate(), not a raw pg error', async () => {
    const engine = new RecoverableEngine({ pool: db.pool });
    engine.register(job);
    const error = await engine.trigger('noop').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecoverableError);
    expect((error as RecoverableError).code).toBe('SCHEMA_MISSING');
    expect((error as RecoverableError).message).toBe(
      'jobs.recoverable_runs does not exist: call migrate() from @oxicloud/recoverable (see its README)',
    );
    await expect(engine.sweep()).rejects.toMatchObject({ code: 'SCHEMA_MISSING' });
  });

  it('migrate() creates the jobs schema, the table and its indexes; concurrent and repeated calls apply once', async () => {
    const results = await Promise.all([migrate(db.pool), migrate(db.pool), migrate(db.pool)]);
    const applied = results.flatMap((r) => r.applied);
    expect(applied).toEqual([
      '001_recoverable_runs.sql',
      '002_run_history.sql',
      '003_run_attempts.sql',
      '004_run_leases.sql',
    ]);
    expect(results.every((r) => r.to === RECOVERABLE_SCHEMA_VERSION)).toBe(true);
    const again = await migrate(db.pool);
    expect(again).toEqual({ package: '@oxicloud/recoverable', from: 4, to: 4, applied: [] });

    const { rows: indexes } = await db.pool.query(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'jobs' AND tablename = 'recoverable_runs'`,
    );
    const active = indexes.find((i) => i.indexname === 'one_active_run_per_job');
    expect(active?.indexdef).toMatch(
      /UNIQUE INDEX .*\(job_name\) WHERE \(status = ANY \(ARRAY\['Running'::text, 'Paused'::text, 'CancelRequested'::text\]\)\)/,
    );
    const { rows: versions } = await db.pool.query(
      `SELECT version, name FROM ${VERSION_TABLE} WHERE package = '@oxicloud/recoverable' ORDER BY version`,
    );
    expect(versions.map((v) => v.version)).toEqual([1, 2, 3, 4]);
    // No function of public is needed: none exists in this database.
    const { rows: fns } = await db.pool.query(
      `SELECT proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE nspname = 'public'`,
    );
    expect(fns).toEqual([]);
  });

  it('runs on a consumer Kysely instance as well as a pg pool', async () => {
    const kysely = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: db.pool }) });
    expect(await migrate(kysely)).toMatchObject({ applied: [], to: 4 });
    const engine = new RecoverableEngine({ db: kysely });
    engine.register(job);
    const { run_id } = await engine.trigger('noop');
    await engine.whenIdle();
    expect((await engine.getRun('noop', run_id)).status).toBe('Completed');
    const { rows } = await db.pool.query(
      'SELECT attempt, attempt_started_at FROM jobs.recoverable_runs WHERE id = $1',
      [run_id],
    );
    expect(rows[0].attempt).toBe(1);
    expect(rows[0].attempt_started_at).toBeInstanceOf(Date);
  });

  it('an older schema version names the version found and the one needed; migrate() brings it up', async () => {
    await db.pool.query(
      `DELETE FROM ${VERSION_TABLE} WHERE package = '@oxicloud/recoverable' AND version >= 3`,
    );
    expect(await recoverableSchemaStatus(db.pool)).toEqual({
      package: '@oxicloud/recoverable',
      table: 'jobs.recoverable_runs',
      found: 2,
      needed: 4,
      tableExists: true,
    });
    const engine = new RecoverableEngine({ pool: db.pool });
    engine.register(job);
    await expect(engine.listRuns('noop')).rejects.toThrow(
      'jobs.recoverable_runs is at version 2 of the @oxicloud/recoverable schema, this build needs version 4: ' +
        'call migrate() from @oxicloud/recoverable (see its README)',
    );
    expect((await migrate(db.pool)).applied).toEqual(['003_run_attempts.sql', '004_run_leases.sql']);
    expect(await engine.listRuns('noop')).toHaveLength(1);
  });
});
