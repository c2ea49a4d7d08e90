import { completed, migrate as migrateRuns, RecoverableEngine } from '@oxicloud/recoverable';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsistencyCheck,
  ConsistencyError,
  checkJob,
  consistencySchemaStatus,
  lockPendingPlanItem,
  migrate,
  PgFindingLedger,
  PgFindingStore,
  PgRepairPlans,
  PgRunRetention,
  recordPlanItem,
} from '../src/index.js';

const S = 'oxijobs_t';
const CHECK = 'schema_consistency';

/**
 * A check with no grace window: batch 1 reports each id of `broken` and of
 * `dropped` as `thing_broken`, batch 2 drops the ids of `dropped` again
 * (pass 2 saw them change); then `completed`.
 */
function thingsCheck(broken: ReadonlySet<string>, dropped: ReadonlySet<string>): ConsistencyCheck {
  return {
    name: CHECK,
    subsystem: 'demo',
    order: 1,
    countMeaning: 'findings this run found: broken things',
    kinds: [{ kind: 'thing_broken', severity: 'Drift', meaning: 'the thing is broken' }],
    graceWindowMs: () => 0,
    concurrentSafe: () => true,
    async runResumable(store) {
      for (const id of [...broken, ...dropped]) {
        store.recordFinding({ kind: 'thing_broken', severity: 'Drift', resourceId: id, detail: { id } });
      }
      await store.checkpoint(Uint8Array.of(1), broken.size + dropped.size);
      for (const id of dropped) store.dropFinding('thing_broken', id);
      await store.checkpoint(Uint8Array.of(2), 0);
      return completed();
    },
  };
}

/**
 * Every class of the package in another engine schema, on a database that
 * starts with no schema at all: the rows land in `oxijobs_t.*`, and no
 * schema `jobs` appears.
 */
describe(`findings, their ledger, repair plans and retention in another schema (${S})`, () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
  });
  afterAll(async () => {
    await db?.drop();
  });

  const rows = async (text: string, params: unknown[] = []) => (await db.pool.query(text, params)).rows;
  const count = async (table: string) => Number((await rows(`SELECT count(*) AS n FROM ${table}`))[0].n);
  const noJobsSchema = async () =>
    expect(await rows("SELECT 1 FROM pg_namespace WHERE nspname = 'jobs'")).toEqual([]);
  const runIdOf = (outcome: Awaited<ReturnType<RecoverableEngine['runOrResume']>>) =>
    outcome.kind === 'ok' ? String(outcome.extra['run_id']) : `not ok: ${JSON.stringify(outcome)}`;

  it('migrate() needs the runs table in the same schema, then places its tables there', async () => {
    await noJobsSchema();
    await expect(migrate(db.pool, { schema: S })).rejects.toThrow(
      `${S}.run_findings needs ${S}.recoverable_runs of @oxicloud/recoverable at version 1 or later, but it does not exist`,
    );
    await migrateRuns(db.pool, { schema: S });
    const result = await migrate(db.pool, { schema: S });
    expect(result.applied).toHaveLength(4);
    expect(await consistencySchemaStatus(db.pool, { schema: S })).toMatchObject({
      table: `${S}.run_findings`,
      found: 4,
      needed: 4,
      tableExists: true,
    });
    const tables = await rows(
      'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
      [S],
    );
    expect(tables.map((t) => t.table_name)).toEqual([
      'finding_events',
      'finding_runs',
      'findings',
      'recoverable_runs',
      'repair_audit',
      'repair_plan_items',
      'repair_plans',
      'run_findings',
      'run_unexamined',
      'schema_versions',
    ]);
    await noJobsSchema();
  });

  it('refuses an invalid schema when constructed, and names the schema it misses', async () => {
    expect(() => new PgFindingLedger({ pool: db.pool, schema: 'auth' })).toThrow(
      '"auth" is a schema of OxiCloud or of Postgres',
    );
    expect(() => new PgFindingStore({ pool: db.pool, schema: 'Oxi' })).toThrow('"Oxi" is not a schema name');
    expect(() => new PgRepairPlans({ pool: db.pool, schema: 'faces' })).toThrow(
      '"faces" is a schema of OxiCloud',
    );
    expect(() => new PgRunRetention({ pool: db.pool, schema: 'pg_x' })).toThrow('reserved by Postgres');
    const error = await new PgFindingStore({ pool: db.pool, schema: 'oxijobs_none' })
      .list('00000000-0000-7000-8000-000000000001')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConsistencyError);
    expect(error).toMatchObject({
      code: 'SCHEMA_MISSING',
      message:
        'oxijobs_none.run_findings does not exist: call migrate() from @oxicloud/consistency (see its README)',
    });
  });

  let first: string;
  let second: string;

  it('check runs record, drop and close their findings there; the store and the ledger read them back', async () => {
    const broken = new Set(['a', 'b']);
    const dropped = new Set(['c']);
    // A consumer's own Kysely works as well as a pool.
    const kysely = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: db.pool }) });
    const store = new PgFindingStore({ db: kysely, schema: S });
    const ledger = new PgFindingLedger({ pool: db.pool, schema: S });
    const engine = new RecoverableEngine({ pool: db.pool, schema: S });
    engine.register(checkJob(thingsCheck(broken, dropped), { findings: store }));

    first = runIdOf(await engine.runOrResume(CHECK));
    expect((await store.list(first)).map((f) => f.resourceId)).toEqual(['a', 'b']);
    expect(await store.summarize(first)).toEqual([{ kind: 'thing_broken', severity: 'Drift', count: 2 }]);
    expect(
      await rows(`SELECT resource_id, reason FROM ${S}.run_unexamined WHERE run_id = $1`, [first]),
    ).toEqual([{ resource_id: 'c', reason: 'pass2_dropped' }]);

    broken.delete('b');
    dropped.clear();
    second = runIdOf(await engine.runOrResume(CHECK));
    expect(
      await rows(`SELECT run_id, closed_at IS NOT NULL AS closed FROM ${S}.finding_runs ORDER BY run_id`),
    ).toEqual([
      { run_id: first, closed: true },
      { run_id: second, closed: true },
    ]);
    expect(await ledger.closeRun(second)).toMatchObject({ outcome: 'already_closed', fixed: 1 });
    expect(await ledger.closePendingRuns()).toEqual([]);
    expect(await store.closePendingRuns(CHECK)).toEqual([]);

    const page = await ledger.list({ check: CHECK });
    expect(page.items.map((f) => [f.resourceId, f.state])).toEqual([
      ['a', 'open'],
      ['b', 'fixed'],
    ]);
    const a = page.items[0];
    if (a === undefined) throw new Error('no finding a');
    const detail = await ledger.get(a.id);
    expect(detail?.events.map((e) => e.event)).toEqual(['new']);
    expect(detail?.sightings.map((s) => s.runId)).toEqual([second, first]);
    expect((await ledger.runChanges(second)).counts).toMatchObject({ fixed: 1, stillOpen: 1, new: 0 });
    expect(await ledger.openCounts()).toEqual([
      { check: CHECK, kind: 'thing_broken', severity: 'Drift', count: 1 },
    ]);
    const [health] = await ledger.health([CHECK]);
    expect(health?.trend.map((t) => [t.runId, t.reported, t.new, t.fixed])).toEqual([
      [first, 2, 2, 0],
      [second, 1, 0, 1],
    ]);
    const accepted = await ledger.decide(a.id, 'accept', { actor: 'admin', comment: 'known' });
    expect(accepted.state).toBe('accepted');
    await ledger.decide(a.id, 'reopen', { actor: 'admin', comment: 'not any more' });

    expect(await count(`${S}.recoverable_runs`)).toBe(2);
    expect(await count(`${S}.run_findings`)).toBe(3);
    expect(await count(`${S}.findings`)).toBe(2);
    expect(await count(`${S}.finding_events`)).toBe(5);
    await noJobsSchema();
  });

  it('a repair plan is selected, stored, approved, applied and verified there', async () => {
    const plans = new PgRepairPlans({ pool: db.pool, schema: S });
    const [open] = await plans.selectFindings({ check: CHECK });
    if (open === undefined) throw new Error('no open finding');
    expect(open).toMatchObject({ checkName: CHECK, resourceId: 'a', lastSeenRunId: second });
    const lines = [{ findingId: open.id, line: { type: 'mend', id: 'a' } }];
    const id = await plans.create({ hash: 'h1', selection: { check: CHECK }, createdBy: 'admin', lines });
    await plans.replaceLines(id, 'h1', 'h2', lines);
    await plans.approve(id, 'h2', 'admin');
    await plans.attachRun(id, second);

    const kysely = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: db.pool }) });
    await kysely.transaction().execute(async (trx) => {
      expect(await lockPendingPlanItem(trx, id, 0, { schema: S })).toBe(true);
      await recordPlanItem(
        trx,
        {
          planId: id,
          position: 0,
          status: 'applied',
          audit: {
            runId: second,
            approvedBy: 'admin',
            findingId: open.id,
            checkName: CHECK,
            kind: 'thing_broken',
            resourceId: 'a',
            action: 'mend',
            before: { broken: true },
            after: { broken: false },
          },
        },
        { schema: S },
      );
      expect(await lockPendingPlanItem(trx, id, 0, { schema: S })).toBe(false);
    });
    await plans.recordVerification(id, 0, null, { findingId: open.id, runId: second, actor: 'repair:admin' });
    await plans.markApplied(id);

    const plan = await plans.get(id);
    expect(plan).toMatchObject({ state: 'applied', hash: 'h2', runId: second, approvedBy: 'admin' });
    expect(plan?.items).toEqual([
      expect.objectContaining({ position: 0, status: 'applied', verified: 'passed' }),
    ]);
    expect(await plans.itemsAfter(id, null, 10)).toHaveLength(1);
    expect(await count(`${S}.repair_audit`)).toBe(1);
    expect(await rows(`SELECT state, fixed_run_id FROM ${S}.findings WHERE id = $1`, [open.id])).toEqual([
      { state: 'fixed', fixed_run_id: second },
    ]);
    await noJobsSchema();
  });

  it('retention prunes there', async () => {
    const retention = new PgRunRetention({ pool: db.pool, schema: S });
    const future = new Date(Date.now() + 3600_000);
    // Both findings are fixed now: the first run is pruned, the check's latest Completed run is kept.
    expect(await retention.pruneRuns(future, 10)).toEqual({ runs: [{ runId: first, job: CHECK }] });
    expect(await retention.pruneFixedFindings(future, 10)).toBe(2);
    expect(await count(`${S}.recoverable_runs`)).toBe(1);
    expect(await count(`${S}.findings`)).toBe(0);
    await noJobsSchema();
  });
});
