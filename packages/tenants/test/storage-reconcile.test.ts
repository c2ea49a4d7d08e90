import { defaultRunArgs, type JobOutcomeOk } from '@oxicloud/scheduler';
import { describe, expect, it } from 'vitest';
import type {
  UsageCorrection,
  UsageReconcileResult,
  UsageRepository,
} from '../src/ports/usage-repository.js';
import { createStorageReconcileJob } from '../src/storage-reconcile/index.js';
import { liveSignal, recordingLogger } from './part1-support.js';

function correction(kind: 'drive' | 'user', id: string, before: number, after: number): UsageCorrection {
  return { id, kind, before, after, delta: after - before };
}

function fakeUsage(drives: UsageReconcileResult, users: UsageReconcileResult) {
  const order: string[] = [];
  const tops: number[] = [];
  const repository: UsageRepository = {
    async reconcileDriveUsage(top) {
      order.push('drives');
      tops.push(top);
      return drives;
    },
    async reconcileUserUsage(top) {
      order.push('users');
      tops.push(top);
      return users;
    },
  };
  return { repository, order, tops };
}

describe('storage_reconcile', () => {
  it('reconciles drives before users; count = rows corrected; extra lists the 10 largest |delta|', async () => {
    const driveFixes = Array.from({ length: 8 }, (_, i) =>
      correction('drive', `d${i}`, 100, 100 + (i + 1) * 10),
    );
    const userFixes = [
      correction('user', 'u0', 5000, 0),
      correction('user', 'u1', 0, 15),
      correction('user', 'u2', 70, 69),
      correction('user', 'u3', 0, 1),
    ];
    const { repository, order, tops } = fakeUsage(
      { corrected: 12, largest: driveFixes },
      { corrected: 4, largest: userFixes },
    );
    const logger = recordingLogger();
    const job = createStorageReconcileJob({ repository, config: { intervalMs: 600_000 }, logger });
    expect(job.name).toBe('storage_reconcile');
    expect(job.intervalMs).toBe(600_000);
    const outcome = (await job.run(defaultRunArgs, liveSignal())) as JobOutcomeOk;
    expect(order).toEqual(['drives', 'users']);
    expect(tops).toEqual([10, 10]);
    expect(outcome.count).toBe(16);
    expect(outcome.extra['drives_corrected']).toBe(12);
    expect(outcome.extra['users_corrected']).toBe(4);
    const largest = outcome.extra['largest'] as UsageCorrection[];
    expect(largest).toHaveLength(10);
    expect(largest[0]).toEqual({ id: 'u0', kind: 'user', before: 5000, after: 0, delta: -5000 });
    expect(largest.map((c) => Math.abs(c.delta))).toEqual([5000, 80, 70, 60, 50, 40, 30, 20, 15, 10]);
    expect(logger.lines.some((l) => l.fields['event'] === 'storage_reconcile.corrected')).toBe(true);
  });

  it('reports 0 and an empty list when nothing drifted', async () => {
    const { repository } = fakeUsage({ corrected: 0, largest: [] }, { corrected: 0, largest: [] });
    const outcome = await createStorageReconcileJob({ repository, config: { intervalMs: null } }).run(
      defaultRunArgs,
      liveSignal(),
    );
    expect(outcome).toEqual({
      kind: 'ok',
      count: 0,
      extra: { drives_corrected: 0, users_corrected: 0, largest: [] },
    });
  });

  it('honours the signal: nothing done when already aborted, users skipped when it fires after drives', async () => {
    const first = fakeUsage({ corrected: 1, largest: [] }, { corrected: 1, largest: [] });
    const aborted = AbortSignal.abort(new Error('shutdown'));
    const job = createStorageReconcileJob({ repository: first.repository, config: { intervalMs: null } });
    expect(await job.run(defaultRunArgs, aborted)).toMatchObject({
      kind: 'err',
      message: expect.stringContaining('shutdown'),
    });
    expect(first.order).toEqual([]);

    const controller = new AbortController();
    const order: string[] = [];
    const repository: UsageRepository = {
      async reconcileDriveUsage() {
        order.push('drives');
        controller.abort(new Error('timeout'));
        return { corrected: 3, largest: [] };
      },
      async reconcileUserUsage() {
        order.push('users');
        return { corrected: 0, largest: [] };
      },
    };
    const outcome = await createStorageReconcileJob({ repository, config: { intervalMs: null } }).run(
      defaultRunArgs,
      controller.signal,
    );
    expect(order).toEqual(['drives']);
    expect(outcome).toEqual({
      kind: 'err',
      message: 'storage_reconcile aborted (timeout) after correcting 3 drives; users not reconciled',
    });
  });
});
