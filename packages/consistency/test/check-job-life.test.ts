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
});
