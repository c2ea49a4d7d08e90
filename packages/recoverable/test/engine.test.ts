import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  failed,
  itemBatch,
  PgJobStoreFactory,
  RecoverableEngine,
  RecoverableError,
  type RecoverableJobHandler,
  type RunFinishedEvent,
  runBatches,
  runOrResume,
  type TerminalRun,
  uuidCursor,
} from '../src/index.js';
import { CapturingLogger, decodeCursor, Gate, runRow, sleep, waitFor, walker } from './support.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ max: 20 });
});
afterAll(async () => {
  await db?.drop();
});

function engine(logger = new CapturingLogger(), onRunFinished?: (e: RunFinishedEvent) => void) {
  return new RecoverableEngine({ pool: db.pool, logger, ...(onRunFinished ? { onRunFinished } : {}) });
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (e) {
    if (e instanceof RecoverableError) return e.code;
    throw e;
  }
  throw new Error('expected a RecoverableError, nothing was thrown');
}

describe('fresh run and idempotent trigger (Verification Part 2, items 2 and 3)', () => {
  it('inserts a Running row with cursor NULL, and a second trigger returns the same run_id', async () => {
    const gate = new Gate();
    const job = walker('fresh_job', { total: 30, batch: 10, gate });
    const log = new CapturingLogger();
    const e = engine(log);
    e.register(job);

    const first = await e.trigger('fresh_job');
    expect(first).toMatchObject({ status: 'Running', resumed: false, already_running: false });
    const row = await runRow(db.pool, first.run_id);
    expect(row?.status).toBe('Running');
    expect(row?.cursor).toBeNull();
    expect(row?.params).toEqual({ force: false, deep: false });

    const second = await e.trigger('fresh_job', { force: true });
    expect(second).toEqual({
      run_id: first.run_id,
      status: 'Running',
      resumed: false,
      already_running: true,
      // The active run keeps its own options: the answer says the force asked for was not applied.
      params: { force: false, deep: false },
      params_not_applied: { force: true },
    });

    gate.open();
    await e.whenIdle();
    const done = await runRow(db.pool, first.run_id);
    expect(done?.status).toBe('Completed');
    expect(done?.completed_at).not.toBeNull();
    expect(done?.stats['count']).toBe(30);
    expect(decodeCursor(done?.cursor ?? null)).toBe(30);
    const runLines = log.events('job.run', 'fresh_job');
    expect(runLines).toHaveLength(1);
    expect(runLines[0]?.fields).toMatchObject({
      target: 'oxicloud::scheduler',
      outcome: 'ok',
      count: 30,
      source: 'trigger',
      completed: true,
      run_id: first.run_id,
    });
    expect(typeof runLines[0]?.fields['elapsed_ms']).toBe('number');
  });

  it('50 concurrent triggers from 50 engines give one run_id and one row', async () => {
    const gate = new Gate();
    const engines = Array.from({ length: 50 }, () => {
      const e = engine();
      e.register(walker('crowded_job', { total: 10, batch: 10, gate }));
      return e;
    });
    const results = await Promise.all(engines.map((e) => e.trigger('crowded_job')));
    const ids = new Set(results.map((r) => r.run_id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => !r.already_running)).toHaveLength(1);
    const { rows } = await db.pool.query(
      "SELECT count(*)::int AS n FROM jobs.recoverable_runs WHERE job_name = 'crowded_job'",
    );
    expect(rows[0].n).toBe(1);
    gate.open();
    await Promise.all(engines.map((e) => e.whenIdle()));
    expect((await runRow(db.pool, [...ids][0]!))?.status).toBe('Completed');
  });
});

describe('cancel and resume (Verification Part 2, item 4)', () => {
  it('cancel lands Paused with the cursor; trigger resumes from it, keeps params, count keeps accumulating', async () => {
    const gate = new Gate();
    let reached = 0;
    const job = walker('resume_job', {
      total: 100,
      batch: 10,
      gate,
      onBatch: (p) => {
        reached = p;
        if (p === 30) gate.close();
      },
      validateParams: (raw) => {
        const r = raw as Record<string, unknown>;
        return typeof r['label'] === 'string' || r['label'] === undefined
          ? { ok: true, params: r }
          : { ok: false, message: 'label must be a string' };
      },
    });
    const log = new CapturingLogger();
    const finished: RunFinishedEvent[] = [];
    const e = engine(log, (ev) => {
      finished.push(ev);
    });
    e.register(job);

    const { run_id } = await e.trigger('resume_job', { params: { label: 'first' }, deep: true });
    gate.open();
    await waitFor(() => reached === 30);
    const cancel = await e.cancel('resume_job');
    expect(cancel).toEqual({ run_id, status: 'CancelRequested' });
    expect((await runRow(db.pool, run_id))?.status).toBe('CancelRequested');
    // A trigger during the cancel does not start a parallel run.
    expect(await e.trigger('resume_job')).toMatchObject({
      run_id,
      already_running: true,
      status: 'CancelRequested',
      params_not_applied: {},
    });
    gate.open();
    await e.whenIdle();

    const pausedRow = await runRow(db.pool, run_id);
    expect(pausedRow?.status).toBe('Paused');
    expect(decodeCursor(pausedRow?.cursor ?? null)).toBe(30);
    expect(pausedRow?.stats['count']).toBe(30);
    expect(pausedRow?.completed_at).toBeNull();
    const pausedLine = log.events('job.run', 'resume_job').at(-1);
    expect(pausedLine?.fields).toMatchObject({
      outcome: 'ok',
      count: 30,
      paused: true,
      cursor_hex: '0000001e',
      run_id,
    });
    expect(finished.at(-1)).toMatchObject({ job: 'resume_job', run_id, status: 'Paused' });

    // Cancelling a paused run answers with the run as it is.
    expect(await e.cancel('resume_job')).toEqual({ run_id, status: 'Paused' });

    // New params, even ones the job would refuse, never block a resume: the stored ones win,
    // and the answer and the log say which params the run uses and which were not applied.
    const resumed = await e.trigger('resume_job', { params: { label: 42 }, force: true, deep: true });
    expect(resumed).toEqual({
      run_id,
      status: 'Running',
      resumed: true,
      already_running: false,
      params: { label: 'first', force: false, deep: true },
      params_not_applied: { label: 42, force: true },
    });
    const resumedLine = log.events('run.resumed', 'resume_job').at(-1);
    expect(resumedLine?.fields).toMatchObject({
      run_id,
      params: { label: 'first', force: false, deep: true },
      params_not_applied: { label: 42, force: true },
    });
    expect(resumedLine?.message).toBe(
      `resume_job run ${run_id} resumed with its stored params {"deep":true,"force":false,"label":"first"}; ` +
        'not applied: {"label":42,"force":true} (a resume keeps the stored params)',
    );
    await e.whenIdle();
    const done = await runRow(db.pool, run_id);
    expect(done?.status).toBe('Completed');
    expect(done?.stats['count']).toBe(100);
    expect(done?.params).toEqual({ label: 'first', force: false, deep: true });
    expect(job.seen.map((s) => [s.runId, s.startCursor])).toEqual([
      [run_id, 0],
      [run_id, 30],
    ]);
    // The handler sees its own params and the typed options apart (stored together, shown together).
    expect(job.seen[1]?.params).toEqual({ label: 'first' });
    expect(job.seen[1]?.options).toEqual({ force: false, deep: true });
    expect(finished.at(-1)).toMatchObject({ status: 'Completed', outcome: { kind: 'ok', count: 100 } });
  });

  it('cancel with no active run is NO_ACTIVE_RUN; unknown jobs are UNKNOWN_JOB', async () => {
    const e = engine();
    e.register(walker('idle_job', { total: 1, batch: 1 }));
    expect(await codeOf(e.cancel('idle_job'))).toBe('NO_ACTIVE_RUN');
    expect(await codeOf(e.cancel('nope'))).toBe('UNKNOWN_JOB');
    expect(await codeOf(e.trigger('nope'))).toBe('UNKNOWN_JOB');
  });
});

describe('boot sweep (Verification Part 2, item 5)', () => {
  it('pauses rows left Running or CancelRequested, never resumes, and a trigger resumes from the cursor', async () => {
    const a = randomUUID();
    const b = randomUUID();
    const done = randomUUID();
    await db.pool.query(
      `INSERT INTO jobs.recoverable_runs (id, job_name, status, started_at, last_progress_at, cursor, stats, params, error_message)
       VALUES ($1, 'crashed_job', 'Running', now(), now(), '\\x00000014', '{"count": 20, "scanned_count": 20}', '{}', NULL),
              ($2, 'crashed_other', 'CancelRequested', now(), now(), NULL, '{}', '{}', 'earlier note'),
              ($3, 'crashed_done', 'Completed', now(), now(), NULL, '{}', '{}', NULL)`,
      [a, b, done],
    );
    const log = new CapturingLogger();
    const e = engine(log);
    const job = walker('crashed_job', { total: 50, batch: 10 });
    e.register(job);

    expect(await e.sweep()).toBe(2);
    // The pause is history (reason + time) and, while Paused for it, the error_message (a stale one replaced).
    expect(await runRow(db.pool, a)).toMatchObject({
      status: 'Paused',
      error_message: 'server restart mid-run',
      pauses: [{ reason: 'server restart mid-run' }],
    });
    expect(await runRow(db.pool, b)).toMatchObject({
      status: 'Paused',
      error_message: 'server restart mid-run',
      pauses: [{ reason: 'server restart mid-run' }],
    });
    expect((await e.getRun('crashed_job', a)).pause_reason).toBe('server restart mid-run');
    expect((await runRow(db.pool, done))?.status).toBe('Completed');
    expect(job.seen).toHaveLength(0);
    const warn = log.events('run.boot_sweep');
    expect(warn).toHaveLength(1);
    expect(warn[0]).toMatchObject({ level: 'warn', fields: { count: 2, target: 'oxicloud::recoverable' } });
    expect(await e.sweep()).toBe(0);
    expect(log.events('run.boot_sweep')).toHaveLength(1);

    const resumed = await e.trigger('crashed_job');
    expect(resumed).toMatchObject({ run_id: a, resumed: true });
    await e.whenIdle();
    expect(job.seen[0]?.startCursor).toBe(20);
    const row = await runRow(db.pool, a);
    expect(row?.status).toBe('Completed');
    expect(row?.stats['count']).toBe(50);
    // Completed: no error; the pause stays in the history, with its time.
    const summary = await e.getRun('crashed_job', a);
    expect(summary).toMatchObject({ error_message: null, pause_reason: null });
    expect(summary.pauses).toHaveLength(1);
    expect(Number.isNaN(Date.parse(summary.pauses[0]?.at ?? ''))).toBe(false);
  });
});

describe('bridge log lines (Verification Part 2, item 7)', () => {
  it('failed → outcome=err cause=handler; a throwing handler is Failed with its message', async () => {
    const log = new CapturingLogger();
    const finished: RunFinishedEvent[] = [];
    const e = engine(log, (ev) => {
      finished.push(ev);
    });
    const says: RecoverableJobHandler = {
      name: 'says_failed',
      runResumable: async () => failed('disk on fire'),
    };
    const throws: RecoverableJobHandler = {
      name: 'throws_job',
      runResumable: async () => {
        throw new Error('kaboom');
      },
    };
    e.register(says);
    e.register(throws);

    const outcome = await e.runOrResume('says_failed');
    expect(outcome).toEqual({ kind: 'err', message: 'disk on fire' });
    const line = log.events('job.run', 'says_failed')[0];
    expect(line).toMatchObject({
      level: 'info',
      fields: {
        target: 'oxicloud::scheduler',
        outcome: 'err',
        cause: 'handler',
        error: 'disk on fire',
        count: 0,
      },
    });
    const runId = line?.fields['run_id'] as string;
    expect(await runRow(db.pool, runId)).toMatchObject({ status: 'Failed', error_message: 'disk on fire' });
    expect((await runRow(db.pool, runId))?.completed_at).not.toBeNull();

    const thrown = await e.runOrResume('throws_job');
    expect(thrown).toEqual({ kind: 'err', message: 'kaboom' });
    const summary = (await e.listRuns('throws_job'))[0];
    expect(summary).toMatchObject({ status: 'Failed', error_message: 'kaboom' });
    expect(finished.map((f) => [f.job, f.status])).toEqual([
      ['says_failed', 'Failed'],
      ['throws_job', 'Failed'],
    ]);
    // After Failed, a trigger starts a fresh run.
    const again = await e.trigger('throws_job');
    expect(again.run_id).not.toBe(summary?.run_id);
    await e.whenIdle();
  });

  it('a batch that throws is logged once: one line at info or above carries its message, once in that message', async () => {
    const log = new CapturingLogger();
    const e = engine(log);
    const keys = ['k1', 'k2', 'k3'];
    e.register({
      name: 'batch_breaks',
      runResumable: (store, signal) =>
        runBatches({
          name: 'batch_breaks',
          store,
          signal,
          logger: log,
          batchSize: 2,
          batch: itemBatch({
            codec: uuidCursor,
            keyOf: (k: string) => `00000000-0000-7000-8000-00000000000${k.slice(1)}`,
            fetchPage: async (after, limit) =>
              keys
                .filter((k) => after === null || `00000000-0000-7000-8000-00000000000${k.slice(1)}` > after)
                .slice(0, limit),
            processItem: async (k, tally) => {
              if (k === 'k3') throw new Error('index corrupted');
              tally.count += 1;
            },
            counterNames: [],
            concurrency: 1,
          }),
        }),
    });
    const outcome = await e.runOrResume('batch_breaks');
    expect(outcome).toMatchObject({ kind: 'err' });
    const loud = log.lines.filter((l) => l.level !== 'debug');
    const mentioning = loud.filter((l) =>
      `${l.message} ${JSON.stringify(l.fields)}`.includes('index corrupted'),
    );
    expect(mentioning.map((l) => l.fields['event'])).toEqual(['job.run']);
    expect(mentioning[0]?.message?.match(/index corrupted/g)).toHaveLength(1);
    expect(mentioning[0]?.message).toMatch(
      /^job batch_breaks failed \(handler\): batch_breaks: batch .* failed: index corrupted \(\d+ ms\)$/,
    );
    // The stack stays for debugging, below the default level.
    expect(log.events('recoverable.batch_failed')[0]).toMatchObject({ level: 'debug' });
  });

  it('a throwing onRunFinished hook is contained', async () => {
    const log = new CapturingLogger();
    const e = engine(log, () => {
      throw new Error('smtp down');
    });
    e.register(walker('hooked_job', { total: 5, batch: 5 }));
    const outcome = await e.runOrResume('hooked_job');
    expect(outcome).toMatchObject({ kind: 'ok', count: 5, extra: { completed: true } });
    expect(log.events('run.finished_hook_failed')[0]?.fields['error']).toBe('smtp down');
  });
});

describe("the job's afterTerminal step", () => {
  /** A walker with an afterTerminal step that records what it saw, including the row as the database has it then. */
  function closing(
    name: string,
    options: Parameters<typeof walker>[1],
    step?: (run: TerminalRun) => Promise<void>,
  ) {
    const seen: Array<TerminalRun & { rowStatus: string | undefined }> = [];
    const job: RecoverableJobHandler = {
      ...walker(name, options),
      async afterTerminal(run) {
        seen.push({ ...run, rowStatus: (await runRow(db.pool, run.runId))?.status });
        await step?.(run);
      },
    };
    return { job, seen };
  }

  it('runs after the terminal write and before job.run and onRunFinished, which see what it wrote', async () => {
    await db.pool.query('CREATE TABLE IF NOT EXISTS public.after_terminal_marks (run_id uuid PRIMARY KEY)');
    const order: string[] = [];
    const log = new CapturingLogger();
    const e = engine(log, async (event) => {
      const { rows } = await db.pool.query('SELECT 1 FROM public.after_terminal_marks WHERE run_id = $1', [
        event.run_id,
      ]);
      order.push(`finished:${event.status}:${rows.length === 1 ? 'marked' : 'unmarked'}`);
      order.push(`job.run lines:${log.events('job.run', 'closing_job').length}`);
    });
    const { job, seen } = closing('closing_job', { total: 20, batch: 10 }, async (run) => {
      await db.pool.query('INSERT INTO public.after_terminal_marks VALUES ($1)', [run.runId]);
      order.push(`after:${run.status}:job.run lines:${log.events('job.run', 'closing_job').length}`);
    });
    e.register(job);
    const outcome = await e.runOrResume('closing_job', { deep: true });
    expect(outcome).toMatchObject({ kind: 'ok', count: 20, extra: { completed: true } });
    const runId = (outcome.kind === 'ok' ? outcome.extra['run_id'] : '') as string;
    expect(seen).toEqual([
      {
        runId,
        status: 'Completed',
        rowStatus: 'Completed',
        startedAt: expect.any(Date),
        stats: expect.objectContaining({ count: 20 }),
        options: { force: false, deep: true },
      },
    ]);
    expect(order).toEqual([
      'after:Completed:job.run lines:0',
      'finished:Completed:marked',
      'job.run lines:1',
    ]);
  });

  it('is told Paused and Failed too; trigger + whenIdle waits for it', async () => {
    const gate = new Gate();
    let release: () => void = () => undefined;
    const slow = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { job, seen } = closing('closing_paused', { total: 30, batch: 10, gate }, () => slow);
    const e = engine();
    e.register(job);
    const { run_id } = await e.trigger('closing_paused');
    await e.cancel('closing_paused');
    gate.open();
    await waitFor(() => seen.length === 1);
    expect(seen[0]).toMatchObject({ runId: run_id, status: 'Paused', rowStatus: 'Paused' });
    // The run is not done while its step is pending.
    expect(e.activeRuns()).toEqual([{ run_id, job: 'closing_paused' }]);
    let idle = false;
    const waiting = e.whenIdle().then(() => {
      idle = true;
    });
    await sleep(50);
    expect(idle).toBe(false);
    release();
    await waiting;
    expect(e.activeRuns()).toEqual([]);

    const failing = closing('closing_failed', { total: 1, batch: 1 });
    e.register({ ...failing.job, runResumable: async () => failed('no disk') });
    expect(await e.runOrResume('closing_failed')).toEqual({ kind: 'err', message: 'no disk' });
    expect(failing.seen.map((r) => [r.status, r.rowStatus])).toEqual([['Failed', 'Failed']]);
  });

  it('a throwing step is logged and changes nothing: the run stays Completed, listeners still hear of it', async () => {
    const log = new CapturingLogger();
    const finished: RunFinishedEvent[] = [];
    const e = engine(log, (event) => {
      finished.push(event);
    });
    const { job } = closing('closing_throws', { total: 5, batch: 5 }, async () => {
      throw new Error('ledger away');
    });
    e.register(job);
    const outcome = await e.runOrResume('closing_throws');
    expect(outcome).toMatchObject({ kind: 'ok', count: 5, extra: { completed: true } });
    const runId = (outcome.kind === 'ok' ? outcome.extra['run_id'] : '') as string;
    expect((await runRow(db.pool, runId))?.status).toBe('Completed');
    expect(log.events('run.after_terminal_failed')[0]?.fields).toMatchObject({
      job: 'closing_throws',
      run_id: runId,
      error: 'ledger away',
    });
    expect(finished.map((f) => [f.run_id, f.status])).toEqual([[runId, 'Completed']]);
  });

  it('standalone runOrResume runs it the same way', async () => {
    const { job, seen } = closing('closing_standalone', { total: 4, batch: 2 });
    const factory = new PgJobStoreFactory(new Kysely({ dialect: new PostgresDialect({ pool: db.pool }) }));
    const outcome = await runOrResume(job, factory, { logRunLine: false });
    expect(outcome).toMatchObject({ kind: 'ok', count: 4, extra: { completed: true } });
    expect(seen.map((r) => [r.status, r.rowStatus])).toEqual([['Completed', 'Completed']]);
  });

  it('register refuses an afterTerminal that is not a function', () => {
    const e = engine();
    expect(() =>
      e.register({ ...walker('closing_bad', { total: 1, batch: 1 }), afterTerminal: 'close' as never }),
    ).toThrow(/closing_bad: afterTerminal must be a method/);
  });
});

describe('params, listing and lookups', () => {
  it('INVALID_PARAMS carries the validator message; force/deep are stored in params', async () => {
    const e = engine();
    e.register(
      walker('strict_job', {
        total: 1,
        batch: 1,
        validateParams: (raw) => {
          const r = raw as Record<string, unknown>;
          return Object.keys(r).every((k) => k === 'limit') &&
            (r['limit'] === undefined || Number.isInteger(r['limit']))
            ? { ok: true, params: r }
            : { ok: false, message: 'only "limit" (an integer) is allowed' };
        },
      }),
    );
    const error = await e.trigger('strict_job', { params: { limit: 'ten' } }).catch((x: unknown) => x);
    expect(error).toBeInstanceOf(RecoverableError);
    expect((error as RecoverableError).code).toBe('INVALID_PARAMS');
    expect((error as RecoverableError).message).toContain('only "limit" (an integer) is allowed');
    const { rows } = await db.pool.query("SELECT 1 FROM jobs.recoverable_runs WHERE job_name = 'strict_job'");
    expect(rows).toHaveLength(0);

    const ok = await e.trigger('strict_job', { params: { limit: 3 }, force: true });
    await e.whenIdle();
    expect((await runRow(db.pool, ok.run_id))?.params).toEqual({ limit: 3, force: true, deep: false });
  });

  it('validateTriggerParams is the rule of a fresh run only: a stored run resumes under validateParams', async () => {
    const id = randomUUID();
    await db.pool.query(
      `INSERT INTO jobs.recoverable_runs (id, job_name, status, started_at, last_progress_at, cursor, stats, params)
       VALUES ($1, 'two_rules_job', 'Paused', now(), now(), '\\x00000001', '{"count": 1}', '{"extra": "old", "force": false, "deep": false}')`,
      [id],
    );
    const e = engine();
    const job = walker('two_rules_job', {
      total: 3,
      batch: 1,
      validateParams: (raw) => ({ ok: true, params: raw as Record<string, unknown> }),
      validateTriggerParams: (raw) =>
        Object.keys(raw as object).length === 0
          ? { ok: true, params: {} }
          : { ok: false, message: `unknown keys: ${Object.keys(raw as object).join(', ')}` },
    });
    e.register(job);
    // The stored run resumes with its unknown key, whatever the new params say.
    expect(await e.trigger('two_rules_job', { params: { extra: 'new' } })).toMatchObject({
      run_id: id,
      resumed: true,
    });
    await e.whenIdle();
    expect(job.seen[0]?.params).toEqual({ extra: 'old' });
    expect(job.seen[0]?.options).toEqual({ force: false, deep: false });
    expect((await runRow(db.pool, id))?.status).toBe('Completed');
    // A fresh run follows the strict rule.
    expect(await codeOf(e.trigger('two_rules_job', { params: { extra: 'new' } }))).toBe('INVALID_PARAMS');
    // force / deep in the params are JSON booleans or absent.
    const error = await e.trigger('two_rules_job', { params: { force: 'maybe' } }).catch((x: unknown) => x);
    expect((error as RecoverableError).code).toBe('INVALID_PARAMS');
    expect((error as RecoverableError).message).toContain(
      'force must be true or false (a JSON boolean), got "maybe"',
    );
    const fresh = await e.trigger('two_rules_job', { params: { deep: true } });
    await e.whenIdle();
    expect((await runRow(db.pool, fresh.run_id))?.params).toEqual({ force: false, deep: true });
  });

  it('listRuns is newest first with paging; getRun validates the id', async () => {
    const e = engine();
    e.register(walker('listed_job', { total: 2, batch: 1 }));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await e.trigger('listed_job')).run_id);
      await e.whenIdle();
    }
    const runs = await e.listRuns('listed_job', { limit: 10 });
    expect(runs.map((r) => r.run_id)).toEqual([...ids].reverse());
    expect((await e.listRuns('listed_job', { limit: 1, offset: 1 })).map((r) => r.run_id)).toEqual([ids[1]]);
    expect(await codeOf(e.listRuns('listed_job', { limit: 0 }))).toBe('INVALID_PAGINATION');
    expect(await codeOf(e.listRuns('listed_job', { offset: -1 }))).toBe('INVALID_PAGINATION');

    const run = await e.getRun('listed_job', ids[0]!);
    expect(run).toMatchObject({
      run_id: ids[0],
      job_name: 'listed_job',
      status: 'Completed',
      cursor_hex: '00000002',
      error_message: null,
      params: { force: false, deep: false },
      progress: { processed: 2, fraction: 1, eta_seconds: 0 },
    });
    expect(run.stats).toMatchObject({ count: 2, scanned_count: 2 });
    expect(run.stats).not.toHaveProperty('progress_samples');
    expect(new Date(run.started_at).toISOString()).toBe(run.started_at);
    expect(typeof run.completed_at).toBe('string');
    expect(await codeOf(e.getRun('listed_job', 'not-a-uuid'))).toBe('INVALID_RUN_ID');
    expect(await codeOf(e.getRun('listed_job', "1' OR '1'='1"))).toBe('INVALID_RUN_ID');
    expect(await codeOf(e.getRun('listed_job', randomUUID()))).toBe('RUN_NOT_FOUND');
    expect(await codeOf(e.getRun('unknown_job', randomUUID()))).toBe('UNKNOWN_JOB');
    expect((await e.latestRun('listed_job'))?.run_id).toBe(ids[2]);
  });

  it('rejects bad and duplicate job names', () => {
    const e = engine();
    e.register(walker('named_job', { total: 1, batch: 1 }));
    expect(() => e.register(walker('named_job', { total: 1, batch: 1 }))).toThrow(
      expect.objectContaining({ code: 'DUPLICATE_JOB' }),
    );
    expect(() => e.register(walker('Bad-Name', { total: 1, batch: 1 }))).toThrow(
      expect.objectContaining({ code: 'INVALID_JOB_NAME' }),
    );
    expect(e.has('named_job')).toBe(true);
    expect(e.names()).toEqual(['named_job']);
  });
});

describe('corrupted rows', () => {
  it('a Paused row whose stored params fail validation ends Failed; the engine keeps serving other jobs', async () => {
    const id = randomUUID();
    await db.pool.query(
      `INSERT INTO jobs.recoverable_runs (id, job_name, status, started_at, last_progress_at, cursor, stats, params)
       VALUES ($1, 'picky_job', 'Paused', now(), now(), '\\x0000000a', '{"count": 10}', '{"batch": "abc"}')`,
      [id],
    );
    const log = new CapturingLogger();
    const e = engine(log);
    const picky = walker('picky_job', {
      total: 50,
      batch: 10,
      validateParams: (raw) => {
        const r = raw as Record<string, unknown>;
        return r['batch'] === undefined || typeof r['batch'] === 'number'
          ? { ok: true, params: r }
          : { ok: false, message: 'batch must be a number' };
      },
    });
    e.register(picky);
    e.register(walker('healthy_job', { total: 20, batch: 10 }));

    const t = await e.trigger('picky_job');
    expect(t).toMatchObject({ run_id: id, resumed: true });
    await e.whenIdle();
    const row = await runRow(db.pool, id);
    expect(row?.status).toBe('Failed');
    expect(row?.error_message).toBe(
      `stored params of run ${id} are not valid for picky_job: batch must be a number`,
    );
    expect(picky.seen).toHaveLength(0);
    expect(log.events('job.run', 'picky_job')[0]?.fields).toMatchObject({ outcome: 'err', cause: 'handler' });

    expect(await e.runOrResume('healthy_job')).toMatchObject({
      kind: 'ok',
      count: 20,
      extra: { completed: true },
    });
    // The failed run is terminal: the next trigger starts fresh with valid params.
    const fresh = await e.trigger('picky_job', { params: { batch: 5 } });
    expect(fresh.run_id).not.toBe(id);
    await e.whenIdle();
    expect((await runRow(db.pool, fresh.run_id))?.status).toBe('Completed');
  });

  it('params or stats that are not JSON objects, or a bad cursor, end the run Failed with a clear message', async () => {
    const [p, s, c] = [randomUUID(), randomUUID(), randomUUID()];
    await db.pool.query(
      `INSERT INTO jobs.recoverable_runs (id, job_name, status, started_at, last_progress_at, cursor, stats, params)
       VALUES ($1, 'bad_params', 'Paused', now(), now(), NULL, '{}', '"oops"'),
              ($2, 'bad_stats', 'Paused', now(), now(), NULL, '{"count": "many"}', '{}'),
              ($3, 'bad_cursor', 'Paused', now(), now(), '\\x0102', '{}', '{}')`,
      [p, s, c],
    );
    const e = engine();
    for (const name of ['bad_params', 'bad_stats', 'bad_cursor'])
      e.register(walker(name, { total: 5, batch: 5 }));
    expect(await e.runOrResume('bad_params')).toEqual({
      kind: 'err',
      message: `run ${p} of bad_params has a corrupted row: params must be a JSON object, found "oops"`,
    });
    expect(await e.runOrResume('bad_stats')).toEqual({
      kind: 'err',
      message: `run ${s} of bad_stats has a corrupted row: stats.count must be a non-negative number, found "many"`,
    });
    expect(await e.runOrResume('bad_cursor')).toEqual({
      kind: 'err',
      message: 'cursor must be 4 bytes, got 2',
    });
    for (const id of [p, s, c]) expect((await runRow(db.pool, id))?.status).toBe('Failed');
    // The summaries of corrupted rows still render.
    expect((await e.listRuns('bad_params'))[0]?.params).toEqual({ corrupted: 'oops' });
  });
});

describe('graceful shutdown', () => {
  it('lands own runs Paused with their cursor, refuses new runs, reports what did not land', async () => {
    let reached = 0;
    const e = engine();
    e.register(
      walker('long_job', {
        total: 1_000_000,
        batch: 10,
        delayMs: 5,
        onBatch: (p) => {
          reached = p;
        },
      }),
    );
    const stubbornGate = new Gate();
    e.register(walker('stubborn_job', { total: 20, batch: 10, gate: stubbornGate, stubborn: true }));
    const { run_id } = await e.trigger('long_job');
    const stubborn = await e.trigger('stubborn_job');
    await waitFor(() => reached >= 30);

    const result = await e.shutdown({ timeoutMs: 1_000 });
    expect(result.landed).toEqual([{ run_id, job: 'long_job', status: 'Paused' }]);
    expect(result.pending).toEqual([{ run_id: stubborn.run_id, job: 'stubborn_job' }]);
    const row = await runRow(db.pool, run_id);
    expect(row?.status).toBe('Paused');
    const cursor = decodeCursor(row?.cursor ?? null);
    expect(cursor).toBeGreaterThanOrEqual(30);
    expect(row?.stats['count']).toBe(cursor);
    expect((await runRow(db.pool, stubborn.run_id))?.status).toBe('CancelRequested');
    expect(await codeOf(e.trigger('long_job'))).toBe('SHUTTING_DOWN');

    stubbornGate.open();
    await e.whenIdle();
    expect((await runRow(db.pool, stubborn.run_id))?.status).toBe('Completed');
  });
});

describe('progress and ETA', () => {
  it('computes rate and ETA from stored samples, in any process, across pause and resume', async () => {
    const gate = new Gate();
    let reached = 0;
    const e = engine();
    e.register(
      walker('progress_job', {
        total: 1000,
        batch: 50,
        gate,
        estimate: 1000,
        delayMs: 20,
        onBatch: (p) => {
          reached = p;
          if (p === 400) gate.close();
        },
      }),
    );
    const { run_id } = await e.trigger('progress_job');
    gate.open();
    await waitFor(() => reached === 400);

    const other = engine(); // another process: reads the same row
    other.register(walker('progress_job', { total: 1, batch: 1 }));
    const running = await other.getRun('progress_job', run_id);
    expect(running.progress.processed).toBe(400);
    expect(running.progress.total).toBe(1000);
    expect(running.progress.fraction).toBeCloseTo(0.4);
    const rate = running.progress.rate_per_second;
    expect(rate).not.toBeNull();
    expect(rate!).toBeGreaterThan(50); // 50 items per >=20 ms batch: at most 2500/s, at least far above 50/s
    expect(rate!).toBeLessThan(2_600);
    expect(running.progress.eta_seconds).toBe(Math.ceil(600 / rate!));

    await e.cancel('progress_job');
    gate.open();
    await e.whenIdle();
    const pausedRun = await other.getRun('progress_job', run_id);
    expect(pausedRun.status).toBe('Paused');
    // A paused run is not moving: no current rate, no ETA; its counters stay.
    expect(pausedRun.progress).toMatchObject({ rate_per_second: null, eta_seconds: null });
    expect(pausedRun.progress.processed).toBe(running.progress.processed);

    await sleep(300); // the paused time must not count against the rate
    gate.close();
    reached = 0;
    await e.trigger('progress_job');
    gate.open();
    await waitFor(() => reached >= 500);
    gate.close();
    const afterResume = await other.getRun('progress_job', run_id);
    expect(afterResume.progress.processed).toBeGreaterThanOrEqual(500);
    expect(afterResume.progress.rate_per_second).not.toBeNull();
    expect(afterResume.progress.rate_per_second!).toBeGreaterThan(50);
    const stored = await runRow(db.pool, run_id);
    expect(Array.isArray(stored?.stats['progress_resumed_at_ms'])).toBe(true);
    gate.open();
    await e.whenIdle();
    const done = await other.getRun('progress_job', run_id);
    expect(done.progress).toMatchObject({ processed: 1000, total: 1000, fraction: 1, eta_seconds: 0 });
  });
});
