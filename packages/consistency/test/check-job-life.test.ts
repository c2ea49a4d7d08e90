import { completed, RecoverableEngine, type RunFinishedEvent } from '@oxicloud/recoverable';
import { CapturingLogger, createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsistencyCheck,
  checkJob,
  type FindingWriter,
  PgFindingLedger,
  PgFindingStore,
} from '../src/index.js';

/**
 * A check with no grace window over an in-memory set of resource ids: each id
 * in `broken` is a `thing_broken` finding; one batch, then `completed`.
 */
function completedCheck(name: string, broken: ReadonlySet<string>): ConsistencyCheck {
  return {
    name,
    subsystem: 'demo',
    order: 1,
    countMeaning: 'findings this run found: broken things',
    kinds: [{ kind: 'thing_broken', severity: 'Drift', meaning: 'the thing is broken' }],
    graceWindowMs: () => 0,
    concurrentSafe: () => true,
    async runResumable(store) {
      for (const id of broken) {
        store.recordFinding({ kind: 'thing_broken', severity: 'Drift', resourceId: id, detail: {} });
      }
      await store.checkpoint(Uint8Array.of(1), broken.size);
      return completed();
    },
  };
}

/**
 * A check run's whole life belongs to `checkJob`, on real Postgres and a
 * plain engine (no server): its beginning, its findings with their
 * checkpoints and its closing after the terminal write, before the engine's
 * listeners hear of the run; a closing a failure skipped is caught up as the
 * check's next run begins.
 */
describe('checkJob owns the life of a check run', () => {
  let db: TestDatabase;
  let ledger: PgFindingLedger;
  beforeAll(async () => {
    db = await createTestDatabase();
    ledger = new PgFindingLedger({ pool: db.pool });
  });
  afterAll(async () => {
    await db?.drop();
  });

  const stateOf = async (check: string, resourceId: string) =>
    (
      await db.pool.query(
        'SELECT state, fixed_run_id FROM jobs.findings WHERE check_name = $1 AND resource_id = $2',
        [check, resourceId],
      )
    ).rows[0] as { state: string; fixed_run_id: string | null } | undefined;
  const closedAt = async (runId: string) =>
    (await db.pool.query('SELECT closed_at FROM jobs.finding_runs WHERE run_id = $1', [runId])).rows[0]
      ?.closed_at as Date | null | undefined;
  const runIdOf = (outcome: Awaited<ReturnType<RecoverableEngine['runOrResume']>>) =>
    outcome.kind === 'ok' ? String(outcome.extra['run_id']) : `not ok: ${JSON.stringify(outcome)}`;

  it('closes a Completed run before onRunFinished: the listener reads the fixed state', async () => {
    const broken = new Set(['a', 'b']);
    const logger = new CapturingLogger();
    const heard: Array<{ status: string; b: string | undefined }> = [];
    const engine = new RecoverableEngine({
      pool: db.pool,
      logger,
      onRunFinished: async (event: RunFinishedEvent) => {
        heard.push({ status: event.status, b: (await stateOf('life_consistency', 'b'))?.state });
      },
    });
    engine.register(
      checkJob(completedCheck('life_consistency', broken), {
        findings: new PgFindingStore({ pool: db.pool }),
        logger,
      }),
    );
    const first = runIdOf(await engine.runOrResume('life_consistency'));
    expect(await stateOf('life_consistency', 'b')).toMatchObject({ state: 'open' });
    expect(await closedAt(first)).toBeInstanceOf(Date);

    broken.delete('b');
    const second = runIdOf(await engine.runOrResume('life_consistency'));
    expect(await stateOf('life_consistency', 'a')).toMatchObject({ state: 'open' });
    expect(await stateOf('life_consistency', 'b')).toEqual({ state: 'fixed', fixed_run_id: second });
    expect(heard).toEqual([
      { status: 'Completed', b: 'open' },
      { status: 'Completed', b: 'fixed' },
    ]);
    expect(logger.events('consistency.findings_closed').map((l) => l.fields)).toEqual([
      expect.objectContaining({ check: 'life_consistency', run_id: first, fixed: 0 }),
      expect.objectContaining({ check: 'life_consistency', run_id: second, fixed: 1 }),
    ]);
    expect((await ledger.runChanges(second)).counts).toMatchObject({ fixed: 1, stillOpen: 1 });
  });

  it('a closing that failed is logged, and the next run of the check closes that run first', async () => {
    const broken = new Set(['x']);
    const logger = new CapturingLogger();
    const store = new PgFindingStore({ pool: db.pool });
    let failClose = false;
    // The real store, except that its closing step fails while `failClose` is set (the database away).
    const findings: FindingWriter = {
      writeFindings: (...args) => store.writeFindings(...args),
      beginRun: (run) => store.beginRun(run),
      closeRun: async (runId) => {
        if (failClose) throw new Error('connection terminated');
        return store.closeRun(runId);
      },
      closePendingRuns: (check) => store.closePendingRuns(check),
    };
    const engine = new RecoverableEngine({ pool: db.pool, logger });
    engine.register(checkJob(completedCheck('pending_consistency', broken), { findings, logger }));
    await engine.runOrResume('pending_consistency');
    expect(await stateOf('pending_consistency', 'x')).toMatchObject({ state: 'open' });

    broken.delete('x');
    failClose = true;
    const unclosed = runIdOf(await engine.runOrResume('pending_consistency'));
    // The run is Completed (the closing is after its terminal write and never fails it), but not closed.
    expect(
      (await db.pool.query('SELECT status FROM jobs.recoverable_runs WHERE id = $1', [unclosed])).rows,
    ).toEqual([{ status: 'Completed' }]);
    expect(await closedAt(unclosed)).toBeNull();
    expect(await stateOf('pending_consistency', 'x')).toMatchObject({ state: 'open' });
    expect(logger.events('consistency.findings_close_failed')[0]?.fields).toMatchObject({
      check: 'pending_consistency',
      run_id: unclosed,
      error: 'connection terminated',
    });

    failClose = false;
    const next = runIdOf(await engine.runOrResume('pending_consistency'));
    // The unclosed run was closed as the next one began: the fix is its own, on its own evidence.
    expect(await closedAt(unclosed)).toBeInstanceOf(Date);
    expect(await stateOf('pending_consistency', 'x')).toEqual({ state: 'fixed', fixed_run_id: unclosed });
    expect(await closedAt(next)).toBeInstanceOf(Date);
  });

  it('a node whose lease another node took logs run.lease_lost, and no run outcome it did not write', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let reached = false;
    /** Two batches; node A stops before its second until `gate` opens. */
    const slowCheck = (stall: boolean): ConsistencyCheck => ({
      ...completedCheck('leased_consistency', new Set()),
      async runResumable(store, _options, signal) {
        const start = store.facts.cursor?.[0] ?? 0;
        for (let at = start + 1; at <= 2; at++) {
          if (stall && at === 2) {
            reached = true;
            await gate;
          }
          if (signal.aborted) return { kind: 'paused', cursor: Uint8Array.of(at - 1) };
          await store.checkpoint(Uint8Array.of(at), 1);
          if ((await store.status()) !== 'Running') return { kind: 'paused', cursor: Uint8Array.of(at) };
        }
        return completed();
      },
    });
    const lease = { leaseMs: 2_000, heartbeatMs: 300, janitorIntervalMs: 200 };
    const findings = new PgFindingStore({ pool: db.pool });
    const logA = new CapturingLogger();
    const a = new RecoverableEngine({ pool: db.pool, logger: logA, nodeId: 'host-a:101:aaaaaa', ...lease });
    a.register(checkJob(slowCheck(true), { findings, logger: logA }));
    const b = new RecoverableEngine({
      pool: db.pool,
      logger: new CapturingLogger(),
      nodeId: 'host-b:202:bbbbbb',
      ...lease,
    });
    b.register(checkJob(slowCheck(false), { findings, logger: new CapturingLogger() }));

    const { run_id } = await a.trigger('leased_consistency');
    const deadline = Date.now() + 10_000;
    while (!reached && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(reached).toBe(true);
    // A stalls; its lease is made to pass: B's janitor pauses the run and a trigger on B takes it over.
    await db.pool.query(
      `UPDATE jobs.recoverable_runs SET lease_until = now() - interval '1 second' WHERE id = $1`,
      [run_id],
    );
    expect(await b.pauseLostRuns()).toEqual([
      { run_id, job: 'leased_consistency', owner_node: 'host-a:101:aaaaaa' },
    ]);
    expect(await b.trigger('leased_consistency')).toMatchObject({ run_id, resumed: true });
    await b.whenIdle();
    release();
    await a.whenIdle();

    const ofRun = logA.lines.filter((l) => l.fields['run_id'] === run_id);
    expect(ofRun.filter((l) => l.fields['event'] === 'run.lease_lost')).toHaveLength(1);
    expect(ofRun.find((l) => l.fields['event'] === 'run.lease_lost')?.message).toMatch(
      /lost its lease.*stops/,
    );
    // Nothing on A reads like an outcome of the run: no outcome field, no paused / completed / failed line.
    expect(ofRun.filter((l) => 'outcome' in l.fields)).toEqual([]);
    expect(ofRun.filter((l) => /\b(paused|completed|failed)\b/.test(l.message ?? ''))).toEqual([]);
    expect(
      (await db.pool.query('SELECT status, owner_node FROM jobs.recoverable_runs WHERE id = $1', [run_id]))
        .rows,
    ).toEqual([{ status: 'Completed', owner_node: 'host-b:202:bbbbbb' }]);
    await a.shutdown({ timeoutMs: 100 });
    await b.shutdown({ timeoutMs: 100 });
  });
});
