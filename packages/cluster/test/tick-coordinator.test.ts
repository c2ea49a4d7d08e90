import { JobRegistry, ok, silentLogger } from '@oxicloud/scheduler';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, PgPeriodicHistory, PgTickCoordinator } from '../src/index.js';

function coordinator(db: TestDatabase, nodeId: string, leaseMs = 30_000): PgTickCoordinator {
  return new PgTickCoordinator({ pool: db.pool, node: { nodeId, offsetMs: 0 }, leaseMs });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('PgTickCoordinator on real Postgres', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
    expect((await migrate(db.pool)).applied).toEqual(['001_cluster.sql']);
  });
  afterAll(async () => {
    await db.drop();
  });

  it('twelve concurrent claims of one slot: exactly one winner', async () => {
    const interval = 3_600_000;
    const nodes = Array.from({ length: 12 }, (_, i) => coordinator(db, `n${i}`));
    const claims = await Promise.all(nodes.map((c) => c.claimSlot('race_job', interval)));
    const slots = new Set(claims.map((c) => c.slot.getTime()));
    expect(slots.size).toBe(1);
    expect(claims.filter((c) => c.won)).toHaveLength(1);
    expect([...slots][0]! % interval).toBe(0);
    // The slot is taken: a later claim of the same slot loses too.
    expect((await nodes[0]!.claimSlot('race_job', interval)).won).toBe(false);
  });

  it('counts the slots nobody claimed; a once job catches up at start, a skip job does not', async () => {
    const interval = 60_000;
    const c = coordinator(db, 'boot-node');
    for (const job of ['late_once', 'late_skip']) {
      await db.pool.query(
        `INSERT INTO jobs.periodic_state (job, last_slot) VALUES ($1,
           to_timestamp(((floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint / $2 - 5) * $2) / 1000.0))`,
        [job, interval],
      );
    }
    const ran: string[] = [];
    const registry = new JobRegistry({ logger: silentLogger, coordinator: c });
    for (const [name, misfire] of [
      ['late_once', 'once'],
      ['late_skip', 'skip'],
    ] as const) {
      registry.register(
        {
          name,
          run: async () => {
            ran.push(name);
            return ok(1);
          },
        },
        interval,
        null,
        { misfire },
      );
    }
    registry.start();
    await sleep(500);
    await registry.stop();
    expect(ran).toEqual(['late_once']);
    const states = new Map((await new PgPeriodicHistory({ pool: db.pool }).states()).map((s) => [s.job, s]));
    expect(states.get('late_once')?.missedSlots).toBe(4);
    expect(states.get('late_skip')?.missedSlots).toBe(0);
    // The skip job counts its misses at its next claim (the current slot and the four before it).
    const claim = await c.claimSlot('late_skip', interval);
    expect(claim).toMatchObject({ won: true, missed: 4 });
    const runs = await new PgPeriodicHistory({ pool: db.pool }).runs('late_once', { limit: 10 });
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ source: 'tick', node: 'boot-node', outcome: 'ok', count: 1 });
    expect(runs[0]!.slot?.getTime()).toBe(claim.slot.getTime());
  });

  it('a job runs on one node at a time: the others hear which node holds it; an expired lease frees it', async () => {
    const a = coordinator(db, 'node-a', 1_000);
    const b = coordinator(db, 'node-b', 1_000);
    expect(await a.acquire('held_job')).toEqual({ acquired: true });
    const refused = await b.acquire('held_job');
    expect(refused).toMatchObject({ acquired: false, owner: 'node-a' });
    await a.release('held_job');
    expect(await b.acquire('held_job')).toEqual({ acquired: true });
    expect(await a.renew('held_job')).toBe(false);
    await sleep(1_200);
    // b's lease ran out without a renewal: a may take it, and b learns it lost it.
    expect(await a.acquire('held_job')).toEqual({ acquired: true });
    expect(await b.renew('held_job')).toBe(false);
    await a.release('held_job');
  });

  it('a manual trigger while another node runs the job answers already_running with that node', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = {
      name: 'slow_job',
      run: async () => {
        await gate;
        return ok(7);
      },
    };
    const nodeA = new JobRegistry({ logger: silentLogger, coordinator: coordinator(db, 'node-a') });
    const nodeB = new JobRegistry({ logger: silentLogger, coordinator: coordinator(db, 'node-b') });
    nodeA.register(slow, null, null);
    nodeB.register(slow, null, null);
    const first = nodeA.trigger('slow_job', { force: false });
    await sleep(200);
    const second = await nodeB.trigger('slow_job', { force: false });
    expect(second).toMatchObject({
      kind: 'ok',
      count: 0,
      extra: { skipped: 'already_running', node: 'node-a' },
    });
    release();
    expect(await first).toMatchObject({ kind: 'ok', count: 7 });
    // Released at the end: node B may run it now, and both runs are history.
    expect(await nodeB.trigger('slow_job', { force: false })).toMatchObject({ kind: 'ok', count: 7 });
    const runs = await new PgPeriodicHistory({ pool: db.pool }).runs('slow_job', { limit: 10 });
    expect(runs.map((r) => [r.node, r.source, r.slot])).toEqual([
      ['node-b', 'trigger', null],
      ['node-a', 'trigger', null],
    ]);
  });

  it('three registries ticking every 500 ms: one run per slot, none doubled', async () => {
    const nodes = ['t1', 't2', 't3'].map(
      (id) => new JobRegistry({ logger: silentLogger, coordinator: coordinator(db, id) }),
    );
    for (const registry of nodes) {
      registry.register({ name: 'fast_tick', run: async () => ok(1) }, 500, null);
      registry.start();
    }
    await sleep(3_300);
    await Promise.all(nodes.map((r) => r.stop()));
    const { rows } = await db.pool.query(
      `SELECT slot, count(*)::int AS n FROM jobs.periodic_runs WHERE job = 'fast_tick' GROUP BY slot ORDER BY slot`,
    );
    expect(rows.every((r) => r.n === 1)).toBe(true);
    const slots = rows.map((r) => (r.slot as Date).getTime());
    expect(slots.length).toBeGreaterThanOrEqual(5);
    for (let i = 1; i < slots.length; i++) expect(slots[i]! - slots[i - 1]!).toBe(500);
  });
});
