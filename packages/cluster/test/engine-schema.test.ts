import { randomUUID } from 'node:crypto';
import { migrate as migrateRecoverable } from '@oxicloud/recoverable';
import { ok, silentLogger } from '@oxicloud/scheduler';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ClusterError,
  migrate,
  NodeMembership,
  PgOwnedRuns,
  PgPeriodicHistory,
  PgTickCoordinator,
} from '../src/index.js';

const SCHEMA = 'oxijobs_t';
const TABLES = ['nodes', 'periodic_state', 'periodic_runs', 'recoverable_runs'] as const;

/** How many rows each of the tables holds in `schema`; `null` for a table that is not there. */
async function rowCounts(db: TestDatabase, schema: string): Promise<Record<string, number | null>> {
  const counts: Record<string, number | null> = {};
  for (const table of TABLES) {
    const { rows } = await db.pool.query('SELECT to_regclass($1) IS NOT NULL AS present', [
      `${schema}.${table}`,
    ]);
    counts[table] = rows[0].present
      ? Number((await db.pool.query(`SELECT count(*)::int AS n FROM ${schema}.${table}`)).rows[0].n)
      : null;
  }
  return counts;
}

function thrown(construct: () => unknown): Error {
  try {
    construct();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the constructor to throw');
}

describe(`the cluster classes in another schema (${SCHEMA}), the template's jobs schema left alone`, () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await migrateRecoverable(db.pool, { schema: SCHEMA });
    expect((await migrate(db.pool, { schema: SCHEMA })).applied).toEqual(['001_cluster.sql']);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('membership, a tick, the history and the owned runs read and write only oxijobs_t', async () => {
    const jobsBefore = await rowCounts(db, 'jobs');

    const node = new NodeMembership({
      pool: db.pool,
      version: '9.9.9',
      heartbeatMs: 60_000,
      logger: silentLogger,
      schema: SCHEMA,
    });
    await node.start();
    await node.heartbeat();
    expect((await node.list()).map((n) => n.id)).toEqual([node.nodeId]);
    const registered = await db.pool.query(`SELECT id FROM ${SCHEMA}.nodes`);
    expect(registered.rows).toEqual([{ id: node.nodeId }]);

    const coordinator = new PgTickCoordinator({ pool: db.pool, node, schema: SCHEMA });
    await coordinator.prepare([{ name: 'schema_job', intervalMs: 3_600_000, misfire: 'skip' }]);
    const claim = await coordinator.claimSlot('schema_job', 3_600_000);
    expect(claim.won).toBe(true);
    expect(await coordinator.acquire('schema_job')).toEqual({ acquired: true });
    expect(await coordinator.renew('schema_job')).toBe(true);
    const startedAt = new Date();
    await coordinator.record({
      job: 'schema_job',
      slot: claim.slot,
      source: 'tick',
      startedAt,
      finishedAt: new Date(),
      outcome: ok(3),
    });
    await coordinator.release('schema_job');

    const history = new PgPeriodicHistory({ pool: db.pool, schema: SCHEMA });
    const [state] = await history.states();
    expect(state).toMatchObject({ job: 'schema_job', lastSlotAt: claim.slot, runningOn: null });
    expect(state?.lastRun).toMatchObject({ job: 'schema_job', node: node.nodeId, outcome: 'ok', count: 3 });
    expect((await history.runs('schema_job', { limit: 10 })).map((r) => r.source)).toEqual(['tick']);

    const runId = randomUUID();
    await db.pool.query(
      `INSERT INTO ${SCHEMA}.recoverable_runs (id, job_name, status, started_at, last_progress_at, owner_node)
       VALUES ($1, 'schema_walk', 'Running', now(), now(), $2)`,
      [runId, node.nodeId],
    );
    expect(await new PgOwnedRuns({ pool: db.pool, schema: SCHEMA }).list()).toEqual([
      { node: node.nodeId, runId, job: 'schema_walk', status: 'Running' },
    ]);
    // The default schema is another place: the same reads there see none of it.
    expect(await new PgOwnedRuns({ pool: db.pool }).list()).toEqual([]);
    expect(await new PgPeriodicHistory({ pool: db.pool }).states()).toEqual([]);

    expect(await rowCounts(db, SCHEMA)).toEqual({
      nodes: 1,
      periodic_state: 1,
      periodic_runs: 1,
      recoverable_runs: 1,
    });
    await node.stop();
    expect(await node.list()).toEqual([]);
    expect((await rowCounts(db, SCHEMA))['nodes']).toBe(0);

    // The template's jobs schema (when it has one) got no row from any of this.
    expect(await rowCounts(db, 'jobs')).toEqual(jobsBefore);
    for (const count of Object.values(jobsBefore)) expect(count ?? 0).toBe(0);
  });

  it('a schema the engine does not take is refused at construction', () => {
    const make = [
      () => new NodeMembership({ pool: db.pool, version: '1', logger: silentLogger, schema: 'public' }),
      () => new PgTickCoordinator({ pool: db.pool, node: { nodeId: 'n', offsetMs: 0 }, schema: 'Bad-Name' }),
      () => new PgPeriodicHistory({ pool: db.pool, schema: 'pg_catalog' }),
      () => new PgOwnedRuns({ pool: db.pool, schema: '1jobs' }),
    ];
    for (const construct of make) {
      const error = thrown(construct);
      expect(error).toBeInstanceOf(ClusterError);
      expect(error).toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/^schema: /) });
    }
    expect(thrown(make[0]!).message).toMatch(/"public" is a schema of OxiCloud or of Postgres/);
    expect(thrown(make[1]!).message).toMatch(/use lower-case letters, digits and _/);
  });
});
