import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  completed,
  DEFAULT_ENGINE_SCHEMA,
  engineSchema,
  engineSchemaProblem,
  engineTable,
  FOREIGN_SCHEMAS,
  inEngineSchema,
  type JobStore,
  migrate,
  PgJobStoreFactory,
  paused,
  RecoverableEngine,
  RecoverableError,
  type RecoverableJobHandler,
  type RecoverableTables,
  type RunOutcome,
  recoverableSchemaStatus,
  SIDECAR_ENGINE_SCHEMA,
  versionTable,
} from '../src/index.js';
import { decodeCursor, encodeCursor, Gate, waitFor } from './support.js';

describe('engine schema names', () => {
  it('takes lower-case names of letters, digits and _, and defaults to jobs', () => {
    expect(DEFAULT_ENGINE_SCHEMA).toBe('jobs');
    expect(engineSchema()).toBe('jobs');
    expect(engineSchema(undefined)).toBe('jobs');
    expect(engineSchema(SIDECAR_ENGINE_SCHEMA)).toBe('oxijobs');
    for (const name of ['jobs', 'oxijobs', 'oxijobs_t', '_engine', 'a1', 'x'.repeat(63)]) {
      expect(engineSchemaProblem(name), name).toBeNull();
      expect(engineSchema(name)).toBe(name);
    }
  });

  it('refuses other names, saying what is wrong and what is allowed', () => {
    const pattern =
      'is not a schema name the engine takes: use lower-case letters, digits and _ (not starting with a digit), at most 63 characters';
    for (const name of ['', 'Jobs', '1jobs', 'my-jobs', 'a.b', '"jobs"', 'jobs;', 'x'.repeat(64)]) {
      expect(engineSchemaProblem(name), name).toBe(`"${name}" ${pattern}`);
      expect(() => engineSchema(name)).toThrow(`"${name}" ${pattern}`);
    }
    expect(engineSchemaProblem('pg_temp')).toBe(
      '"pg_temp" is reserved by Postgres (pg_*): choose another schema name',
    );
    expect(() => engineSchema(null as unknown as string)).toThrow(
      'the engine schema must be a string (a schema name such as oxijobs), got null',
    );
  });

  it("refuses OxiCloud's schemas (faces among them) and the system's", () => {
    for (const name of ['auth', 'storage', 'caldav', 'carddav', 'audio', 'faces', 'public']) {
      expect(FOREIGN_SCHEMAS).toContain(name);
    }
    for (const name of FOREIGN_SCHEMAS) {
      expect(() => engineSchema(name)).toThrow(
        `"${name}" is a schema of OxiCloud or of Postgres, not one the engine may own: choose another name (e.g. oxijobs)`,
      );
    }
  });

  it('qualifies a table, after validating the schema', () => {
    expect(engineTable('jobs', 'recoverable_runs')).toBe('jobs.recoverable_runs');
    expect(engineTable('oxijobs', 'run_findings')).toBe('oxijobs.run_findings');
    expect(() => engineTable('storage', 'recoverable_runs')).toThrow('"storage" is a schema of OxiCloud');
    expect(versionTable()).toBe('jobs.schema_versions');
    expect(versionTable('oxijobs')).toBe('oxijobs.schema_versions');
  });

  const SQL = [
    '-- jobs.recoverable_runs: the runs',
    'CREATE SCHEMA IF NOT EXISTS jobs;',
    'CREATE TABLE IF NOT EXISTS jobs.recoverable_runs (id UUID PRIMARY KEY);',
    'CREATE INDEX IF NOT EXISTS runs_by_id ON jobs.recoverable_runs (id);',
    'SELECT to_regclass(\'jobs.findings\'), "jobs".x, myjobs.x, a.jobs.x, jobs_x.y;',
  ].join('\n');

  it('places SQL written against jobs in another schema, and drops its CREATE SCHEMA line', () => {
    expect(inEngineSchema(SQL, 'oxijobs')).toBe(
      [
        '-- oxijobs.recoverable_runs: the runs',
        '',
        'CREATE TABLE IF NOT EXISTS oxijobs.recoverable_runs (id UUID PRIMARY KEY);',
        'CREATE INDEX IF NOT EXISTS runs_by_id ON oxijobs.recoverable_runs (id);',
        'SELECT to_regclass(\'oxijobs.findings\'), "jobs".x, myjobs.x, a.jobs.x, jobs_x.y;',
      ].join('\n'),
    );
    expect(inEngineSchema('  create schema if not exists jobs ;  ', 'oxijobs')).toBe('');
    expect(inEngineSchema('jobs.recoverable_runs does not exist: call migrate()', 'oxijobs')).toBe(
      'oxijobs.recoverable_runs does not exist: call migrate()',
    );
  });

  it('leaves SQL unchanged in the default schema, and refuses an invalid one', () => {
    expect(inEngineSchema(SQL, 'jobs')).toBe(SQL);
    expect(() => inEngineSchema(SQL, 'auth')).toThrow('"auth" is a schema of OxiCloud');
  });
});

const S = 'oxijobs_t';

/**
 * Walks 0..total in batches of 10, polls for a cancel between batches; each
 * checkpoint carries a write of the job's own into `public.batch_notes`
 * (unqualified: the checkpoint's transaction is not moved into the engine schema).
 */
function noteTaker(name: string, total: number, gate: Gate, reached: { at: number }): RecoverableJobHandler {
  return {
    name,
    async runResumable(store: JobStore, signal: AbortSignal): Promise<RunOutcome> {
      let position = decodeCursor(await store.loadCursor());
      while (position < total) {
        await gate.wait();
        if (signal.aborted || (await store.status()) === 'CancelRequested') {
          return paused(encodeCursor(position));
        }
        position += 10;
        const at = position;
        await store.checkpoint(encodeCursor(at), 10, {}, async (tx) => {
          await (tx as unknown as Kysely<{ batch_notes: { n: number } }>)
            .insertInto('batch_notes')
            .values({ n: at })
            .execute();
          return undefined;
        });
        reached.at = at;
        if (at === 30) gate.close();
      }
      return completed();
    },
  };
}

describe(`the engine in another schema (${S}), on a database with no schema of its own`, () => {
  let db: TestDatabase;
  let kysely: Kysely<RecoverableTables>;
  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
    kysely = new Kysely<RecoverableTables>({ dialect: new PostgresDialect({ pool: db.pool }) });
    await db.pool.query('CREATE TABLE public.batch_notes (n INTEGER NOT NULL)');
  });
  afterAll(async () => {
    await db?.drop();
  });

  const count = async (table: string) =>
    Number((await db.pool.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
  const noJobsSchema = async () =>
    expect((await db.pool.query("SELECT 1 FROM pg_namespace WHERE nspname = 'jobs'")).rows).toEqual([]);

  it('migrate() places the table and its version rows there, and creates no jobs schema', async () => {
    await noJobsSchema();
    const result = await migrate(db.pool, { schema: S });
    expect(result).toMatchObject({ from: 0, to: 4 });
    expect(result.applied).toHaveLength(4);
    expect(await migrate(db.pool, { schema: S })).toMatchObject({ from: 4, to: 4, applied: [] });
    const { rows } = await db.pool.query(
      `SELECT to_regclass('${S}.recoverable_runs')::text AS runs, to_regclass('${S}.schema_versions')::text AS versions`,
    );
    expect(rows[0]).toEqual({ runs: `${S}.recoverable_runs`, versions: `${S}.schema_versions` });
    expect(await count(`${S}.schema_versions`)).toBe(4);
    expect(await recoverableSchemaStatus(db.pool, { schema: S })).toMatchObject({
      table: `${S}.recoverable_runs`,
      found: 4,
      needed: 4,
      tableExists: true,
    });
    expect(await recoverableSchemaStatus(db.pool)).toMatchObject({
      table: 'jobs.recoverable_runs',
      found: 0,
      tableExists: false,
    });
    await noJobsSchema();
  });

  it('an engine checks the schema it was given, and names it', async () => {
    const job = { name: 'noop', runResumable: async () => completed() };
    const inJobs = new RecoverableEngine({ pool: db.pool });
    inJobs.register(job);
    await expect(inJobs.trigger('noop')).rejects.toThrow(
      'jobs.recoverable_runs does not exist: call migrate() from @oxicloud/recoverable (see its README)',
    );
    const elsewhere = new RecoverableEngine({ pool: db.pool, schema: 'oxijobs_other' });
    elsewhere.register(job);
    const error = await elsewhere.sweep().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecoverableError);
    expect(error).toMatchObject({
      code: 'SCHEMA_MISSING',
      message:
        'oxijobs_other.recoverable_runs does not exist: call migrate() from @oxicloud/recoverable (see its README)',
    });
  });

  it('refuses an invalid schema when it is constructed', () => {
    expect(() => new RecoverableEngine({ pool: db.pool, schema: 'storage' })).toThrow(
      'RecoverableEngine option schema: "storage" is a schema of OxiCloud or of Postgres',
    );
    expect(() => new RecoverableEngine({ pool: db.pool, schema: 'Oxi' })).toThrow(TypeError);
    expect(() => new PgJobStoreFactory(kysely, { schema: 'my-jobs' })).toThrow(
      '"my-jobs" is not a schema name the engine takes',
    );
  });

  it('a run starts, checkpoints, cancels to Paused, resumes and completes there', async () => {
    const gate = new Gate();
    const reached = { at: 0 };
    const engine = new RecoverableEngine({ pool: db.pool, schema: S });
    engine.register(noteTaker('note_job', 100, gate, reached));
    expect(await engine.sweep()).toBe(0);

    const { run_id } = await engine.trigger('note_job');
    gate.open();
    await waitFor(() => reached.at === 30);
    expect(await engine.cancel('note_job')).toEqual({ run_id, status: 'CancelRequested' });
    gate.open();
    await engine.whenIdle();
    const paused = await engine.getRun('note_job', run_id);
    expect(paused.status).toBe('Paused');
    const { rows: pausedRows } = await db.pool.query(
      `SELECT status, cursor, stats->>'count' AS count, attempt FROM ${S}.recoverable_runs WHERE id = $1`,
      [run_id],
    );
    expect(pausedRows[0]).toMatchObject({ status: 'Paused', count: '30', attempt: 1 });
    expect(decodeCursor(pausedRows[0].cursor)).toBe(30);

    const resumed = await engine.trigger('note_job');
    expect(resumed).toMatchObject({ run_id, resumed: true, status: 'Running' });
    await engine.whenIdle();
    expect((await engine.getRun('note_job', run_id)).status).toBe('Completed');
    expect((await engine.latestRun('note_job'))?.status).toBe('Completed');
    expect((await engine.listRuns('note_job')).map((r) => r.run_id)).toEqual([run_id]);
    expect(await engine.pauseLostRuns()).toEqual([]);

    const { rows } = await db.pool.query(
      `SELECT status, stats->>'count' AS count, attempt, jsonb_array_length(pauses) AS pauses
         FROM ${S}.recoverable_runs WHERE id = $1`,
      [run_id],
    );
    expect(rows[0]).toEqual({ status: 'Completed', count: '100', attempt: 2, pauses: 1 });
    expect(await count(`${S}.recoverable_runs`)).toBe(1);
    // The job's own writes went where the job put them: public, in the checkpoints' transactions.
    expect(await count('public.batch_notes')).toBe(10);
    await noJobsSchema();
    await engine.shutdown();
  });

  it("a factory's lease, pause and terminal writes and its stores' messages use the schema", async () => {
    const factory = new PgJobStoreFactory(kysely, { schema: S, nodeId: 'host-a:1:0a0a0a', leaseMs: 5_000 });
    const run = await factory.insertRunning('lease_job', {});
    if (run === null) throw new Error('no run inserted');
    expect(await factory.renewLeases([run])).toEqual([{ runId: run.runId, status: 'Running' }]);
    await factory.recordTotalEstimate(run, 5);
    const store = factory.storeFor(run, {});
    await store.checkpoint(encodeCursor(1), 1);
    expect(await store.status()).toBe('Running');
    expect(await factory.pauseRuns([run], 'test pause')).toEqual([run.runId]);
    const again = await factory.resumePaused(run.runId);
    expect(again?.attempt).toBe(2);
    if (again === null) throw new Error('not resumed');
    expect((await factory.finishRun(again, completed())).status).toBe('Completed');
    const { rows } = await db.pool.query(
      `SELECT stats->>'total_estimate' AS total, stats->>'count' AS count FROM ${S}.recoverable_runs WHERE id = $1`,
      [run.runId],
    );
    expect(rows[0]).toEqual({ total: '5', count: '1' });

    await db.pool.query(`DELETE FROM ${S}.recoverable_runs WHERE id = $1`, [run.runId]);
    await expect(store.loadCursor()).rejects.toMatchObject({
      code: 'RUN_NOT_FOUND',
      message: `run ${run.runId} no longer exists in ${S}.recoverable_runs`,
    });
    await noJobsSchema();
  });
});
