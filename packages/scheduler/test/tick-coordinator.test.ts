import { describe, expect, it, vi } from 'vitest';
import {
  JobRegistry,
  ok,
  type PeriodicRunRecord,
  SchedulerError,
  silentLogger,
  type TickCoordinator,
} from '../src/index.js';

/** A TickCoordinator port double: says who wins and who holds, records what the registry asks. */
function fakeCoordinator(options: { wins: boolean; holder?: string }) {
  const records: PeriodicRunRecord[] = [];
  const calls: string[] = [];
  const coordinator: TickCoordinator = {
    nodeId: 'me:1:abcdef',
    renewEveryMs: 1_000,
    async prepare(jobs) {
      calls.push(`prepare ${jobs.map((j) => `${j.name}/${j.misfire}`).join(',')}`);
    },
    nextWakeAt: (interval, now) => (Math.floor(now / interval) + 1) * interval,
    async claimSlot(job) {
      calls.push(`claim ${job}`);
      return { won: options.wins, slot: new Date(0), missed: 0 };
    },
    async claimCatchUp() {
      return { won: false, slot: new Date(0), missed: 0 };
    },
    async acquire(job) {
      calls.push(`acquire ${job}`);
      return options.holder === undefined
        ? { acquired: true }
        : { acquired: false, owner: options.holder, since: null };
    },
    async renew() {
      return true;
    },
    async release(job) {
      calls.push(`release ${job}`);
    },
    async record(run) {
      records.push(run);
    },
  };
  return { coordinator, records, calls };
}

describe('JobRegistry with a TickCoordinator', () => {
  it('a lost slot claim runs nothing; a won one runs, records and releases', async () => {
    for (const wins of [false, true]) {
      const fake = fakeCoordinator({ wins });
      let runs = 0;
      const registry = new JobRegistry({ logger: silentLogger, coordinator: fake.coordinator });
      registry.register({ name: 'tick_job', run: async () => ok(++runs) }, 100, null, { misfire: 'once' });
      registry.start();
      await new Promise((resolve) => setTimeout(resolve, 250));
      await registry.stop();
      expect(fake.calls[0]).toBe('prepare tick_job/once');
      if (wins) {
        expect(runs).toBeGreaterThanOrEqual(1);
        expect(fake.records[0]).toMatchObject({ job: 'tick_job', source: 'tick', slot: new Date(0) });
        expect(fake.calls).toContain('release tick_job');
      } else {
        expect(runs).toBe(0);
        expect(fake.records).toEqual([]);
        expect(fake.calls).not.toContain('acquire tick_job');
      }
    }
  });

  it('a trigger while another node holds the job answers already_running with that node', async () => {
    const fake = fakeCoordinator({ wins: true, holder: 'other:2:123456' });
    const registry = new JobRegistry({ logger: silentLogger, coordinator: fake.coordinator });
    registry.register({ name: 'held', run: async () => ok(1) }, null, null);
    expect(await registry.trigger('held')).toEqual(
      ok(0, { skipped: 'already_running', node: 'other:2:123456' }),
    );
    expect(fake.records).toEqual([]);
  });

  it('refuses a misfire policy other than skip or once', () => {
    const registry = new JobRegistry({ logger: silentLogger });
    expect(() =>
      registry.register({ name: 'x', run: async () => ok(1) }, 1000, null, { misfire: 'all' as never }),
    ).toThrow(
      new SchedulerError('INVALID_MISFIRE', `misfire policy of job 'x' must be 'skip' or 'once', got "all"`),
    );
  });
});

describe('a job this node is not ready for (RegisterOptions.ready)', () => {
  it('claims no slot and runs nothing while not ready, logging job.tick_declined with the reason; claims and runs once ready', async () => {
    const fake = fakeCoordinator({ wins: true });
    const lines: Array<Record<string, unknown>> = [];
    const logger = { ...silentLogger, warn: (fields: Record<string, unknown>) => void lines.push(fields) };
    let reason: string | null = 'the local store at /srv/oxicloud is not reachable';
    let runs = 0;
    const registry = new JobRegistry({ logger, coordinator: fake.coordinator });
    registry.register({ name: 'store_job', run: async () => ok(++runs) }, 50, null, {
      ready: async () => reason,
    });
    registry.start();
    await vi.waitFor(() =>
      expect(lines.filter((l) => l['event'] === 'job.tick_declined').length).toBeGreaterThanOrEqual(2),
    );
    expect(runs).toBe(0);
    expect(fake.calls.filter((c) => c.startsWith('claim'))).toEqual([]);
    expect(lines.find((l) => l['event'] === 'job.tick_declined')).toMatchObject({
      job: 'store_job',
      reason: 'the local store at /srv/oxicloud is not reachable',
    });
    reason = null;
    await vi.waitFor(() => expect(runs).toBeGreaterThanOrEqual(1));
    await registry.stop();
    expect(fake.calls).toContain('claim store_job');
  });

  it('answers a trigger with err and the reason, running nothing and taking no permit', async () => {
    const fake = fakeCoordinator({ wins: true });
    let runs = 0;
    const registry = new JobRegistry({ logger: silentLogger, coordinator: fake.coordinator });
    registry.register({ name: 'store_job', run: async () => ok(++runs) }, null, null, {
      ready: async () => 'no store here',
    });
    expect(await registry.trigger('store_job')).toEqual({
      kind: 'err',
      message: 'store_job was not run: no store here',
    });
    expect(runs).toBe(0);
    expect(fake.calls).toEqual([]);
  });

  it('refuses a ready that is not a function at registration, saying what is allowed', () => {
    const registry = new JobRegistry({ logger: silentLogger });
    expect(() =>
      registry.register({ name: 'bad_ready', run: async () => ok(0) }, null, null, {
        ready: 'yes' as unknown as () => Promise<null>,
      }),
    ).toThrow(/ready of job 'bad_ready' must be a function/);
  });
});
