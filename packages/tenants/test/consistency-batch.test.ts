import { err, type JobOutcome, ok } from '@oxicloud/scheduler';
import { describe, expect, it } from 'vitest';
import {
  CONSISTENCY_BATCH_JOB_NAME,
  type ConsistencyBatchRunArgs,
  createConsistencyBatchJob,
} from '../src/consistency-batch/index.js';
import { isTenantsError } from '../src/errors.js';

const CHECKS = ['drives_consistency', 'folders_consistency', 'files_consistency', 'storage_consistency'];

function fakeEngine(behaviour: Record<string, (args: ConsistencyBatchRunArgs) => Promise<JobOutcome>> = {}) {
  const calls: Array<{ name: string; args: ConsistencyBatchRunArgs }> = [];
  return {
    calls,
    runOrResume: async (name: string, args: ConsistencyBatchRunArgs): Promise<JobOutcome> => {
      calls.push({ name, args });
      const custom = behaviour[name];
      if (custom) return custom(args);
      return ok(0, { completed: true, run_id: `run-${name}` });
    },
  };
}

const signal = () => new AbortController().signal;

describe('consistency_batch', () => {
  it('runs every check in the given order and counts the completed ones', async () => {
    const engine = fakeEngine();
    const job = createConsistencyBatchJob({ checks: () => CHECKS, runOrResume: engine.runOrResume });
    expect(job.name).toBe(CONSISTENCY_BATCH_JOB_NAME);
    const outcome = await job.run({ force: false }, signal());
    expect(engine.calls.map((c) => c.name)).toEqual(CHECKS);
    expect(outcome).toMatchObject({
      kind: 'ok',
      count: 4,
      extra: { completed: 4, failed: 0, checks: CHECKS },
    });
    if (outcome.kind !== 'ok') throw new Error('unreachable');
    expect(outcome.extra['per_check']).toEqual(
      Object.fromEntries(
        CHECKS.map((n) => [
          n,
          { outcome: ok(0, { completed: true, run_id: `run-${n}` }), run_id: `run-${n}` },
        ]),
      ),
    );
  });

  it('passes the typed deep and force options on, and the params as they are', async () => {
    const engine = fakeEngine();
    const job = createConsistencyBatchJob({ checks: () => CHECKS, runOrResume: engine.runOrResume });
    await job.run({ force: true, deep: true }, signal());
    for (const call of engine.calls) expect(call.args).toMatchObject({ force: true, deep: true });
    engine.calls.length = 0;
    // A trigger body's `deep` key is taken out as the option by the trigger (the admin API), once.
    await job.run({ force: false, deep: true, params: { throttle_ms: 5 } }, signal());
    for (const call of engine.calls) {
      expect(call.args).toMatchObject({ force: false, deep: true, params: { throttle_ms: 5 } });
      expect(call.args.params).not.toHaveProperty('deep');
    }
    engine.calls.length = 0;
    await job.run({ force: false }, signal());
    for (const call of engine.calls) {
      expect(call.args.deep).toBe(false);
      expect(call.args).not.toHaveProperty('params');
    }
  });

  it('always returns ok: a child err or a throw lands in per_check, the others still run', async () => {
    const engine = fakeEngine({
      folders_consistency: async () => err('folders_consistency: database is on fire'),
      files_consistency: async () => {
        throw new Error('UNKNOWN_JOB files_consistency');
      },
      storage_consistency: async () => ok(0, { paused: true, cursor_hex: '01', run_id: 'run-s' }),
    });
    const job = createConsistencyBatchJob({ checks: () => CHECKS, runOrResume: engine.runOrResume });
    const outcome = await job.run({ force: false }, signal());
    expect(engine.calls.map((c) => c.name)).toEqual(CHECKS);
    expect(outcome.kind).toBe('ok');
    if (outcome.kind !== 'ok') throw new Error('unreachable');
    expect(outcome.count).toBe(1);
    expect(outcome.extra).toMatchObject({ completed: 1, failed: 2, paused: 1 });
    const per = outcome.extra['per_check'] as Record<string, { outcome: JobOutcome; run_id?: string }>;
    expect(per['folders_consistency']?.outcome).toEqual(err('folders_consistency: database is on fire'));
    expect(per['files_consistency']?.outcome).toEqual(
      err('files_consistency: UNKNOWN_JOB files_consistency'),
    );
    expect(per['storage_consistency']).toEqual({
      outcome: ok(0, { paused: true, cursor_hex: '01', run_id: 'run-s' }),
      run_id: 'run-s',
    });
  });

  it('honours the signal between children: the rest are not started, the running one gets the signal', async () => {
    const controller = new AbortController();
    const engine = fakeEngine({
      folders_consistency: async (args) => {
        expect(args.signal).toBe(controller.signal);
        controller.abort(new Error('shutdown'));
        return ok(0, { paused: true, cursor_hex: '01', run_id: 'run-f' });
      },
    });
    const job = createConsistencyBatchJob({ checks: () => CHECKS, runOrResume: engine.runOrResume });
    const outcome = await job.run({ force: false }, controller.signal);
    expect(engine.calls.map((c) => c.name)).toEqual(['drives_consistency', 'folders_consistency']);
    expect(outcome).toMatchObject({
      kind: 'ok',
      count: 1,
      extra: {
        paused: 1,
        skipped: 2,
        per_check: {
          files_consistency: { outcome: null, skipped: 'aborted' },
          storage_consistency: { outcome: null, skipped: 'aborted' },
        },
      },
    });
  });

  it('a failing checks() list is contained too', async () => {
    const job = createConsistencyBatchJob({
      checks: () => {
        throw new Error('registry gone');
      },
      runOrResume: fakeEngine().runOrResume,
    });
    expect(await job.run({ force: false }, signal())).toMatchObject({
      kind: 'ok',
      count: 0,
      extra: { error: 'listing the checks failed: registry gone' },
    });
  });

  it('validates its options at creation', () => {
    let thrown: unknown;
    try {
      createConsistencyBatchJob({ checks: CHECKS as never, runOrResume: fakeEngine().runOrResume });
    } catch (error) {
      thrown = error;
    }
    expect(isTenantsError(thrown, 'INVALID_CONFIG')).toBe(true);
  });
});
