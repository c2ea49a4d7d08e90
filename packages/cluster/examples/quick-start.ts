// Quick start of @oxicloud/cluster: a periodic job on several processes, each slot run once.
// Needs DATABASE_URL. Run: npx tsx examples/quick-start.ts
import { migrate, NodeMembership, PgTickCoordinator } from '@oxicloud/cluster';
import { JobRegistry, ok, silentLogger } from '@oxicloud/scheduler';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env['DATABASE_URL'] });
await migrate(pool); // jobs.nodes, jobs.periodic_state, jobs.periodic_runs

// Each process does this; two nodes in one process stand here for two servers.
const ranOn: string[] = [];
async function startNode(name: string) {
  const node = new NodeMembership({ pool, version: '1.0.0', logger: silentLogger });
  await node.start(); // a row in jobs.nodes, heartbeat every 5 s
  const registry = new JobRegistry({
    logger: silentLogger,
    coordinator: new PgTickCoordinator({ pool, node }),
  });
  const hello = {
    name: 'hello',
    run: async () => {
      ranOn.push(name); // your work here
      return ok(1);
    },
  };
  registry.register(hello, 1_000, null, { misfire: 'skip' }); // every second, cluster-wide
  registry.start();
  return { node, registry };
}
const nodes = [await startNode('a'), await startNode('b')];
await new Promise((resolve) => setTimeout(resolve, 4_500));

// on shutdown
for (const { registry, node } of nodes) {
  await registry.stop();
  await node.stop();
}
const { rows } = await pool.query<{ slots: number; distinct_slots: number }>(
  `SELECT count(*)::int AS slots, count(DISTINCT slot)::int AS distinct_slots
     FROM jobs.periodic_runs WHERE job = 'hello' AND source = 'tick'`,
);
await pool.end();

const history = rows[0];
if (
  !history ||
  ranOn.length < 3 ||
  history.slots !== ranOn.length ||
  history.distinct_slots !== ranOn.length
) {
  throw new Error(`unexpected: ${JSON.stringify({ ranOn, history })}`);
}
console.log(
  `cluster quick start ok: ${ranOn.length} slots, each run once (nodes ${[...new Set(ranOn)].join(', ')})`,
);
