// Quick start of @oxicloud/consistency: your own check, recording findings.
// Needs DATABASE_URL. Run: npx tsx examples/custom-check.ts
import {
  type ConsistencyCheck,
  checkJob,
  migrate as migrateFindings,
  PgFindingStore,
} from '@oxicloud/consistency';
import { completed, migrate as migrateRuns, RecoverableEngine } from '@oxicloud/recoverable';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env['DATABASE_URL'] });
// The schemas, in this order: findings reference runs.
await migrateRuns(pool);
await migrateFindings(pool);

// What your system holds: orders that point at customers, some of which are gone.
const customers = new Set(['c1', 'c2']);
const orders = [
  { id: 'o1', customer: 'c1' },
  { id: 'o2', customer: 'c9' },
  { id: 'o3', customer: 'c8' },
];

const ordersCheck: ConsistencyCheck = {
  name: 'orders_consistency',
  subsystem: 'orders',
  order: 100, // its place in a batch of checks
  countMeaning: 'findings this run found: orders whose customer is gone',
  // Every kind it records, with its severity and meaning: the one list of them (API, CLI, page).
  kinds: [{ kind: 'order_without_customer', severity: 'Drift', meaning: "the order's customer is gone" }],
  graceWindowMs: () => 0,
  concurrentSafe: () => true,
  async runResumable(store) {
    for (const order of orders) {
      if (!customers.has(order.customer)) {
        store.recordFinding({
          kind: 'order_without_customer',
          severity: 'Drift',
          resourceId: order.id,
          detail: { customer: order.customer },
        });
      }
    }
    // The findings are written with the checkpoint that covers them, in one transaction.
    await store.checkpoint(new Uint8Array([1]), orders.length);
    return completed();
  },
};

const findings = new PgFindingStore({ pool });
const engine = new RecoverableEngine({ pool });
engine.register(checkJob(ordersCheck, { findings }));

const outcome = await engine.runOrResume('orders_consistency'); // awaited: the run's JobOutcome
const run = await engine.latestRun('orders_consistency');
const summary = run === null ? [] : await findings.summarize(run.run_id);
const listed = run === null ? [] : await findings.list(run.run_id);
await pool.end();

if (
  outcome.kind !== 'ok' ||
  summary[0]?.count !== 2 ||
  listed
    .map((f) => f.resourceId)
    .sort()
    .join() !== 'o2,o3'
) {
  throw new Error(`unexpected: ${JSON.stringify({ outcome, summary, listed })}`);
}
console.log(`consistency quick start ok: ${summary[0]?.count} ${summary[0]?.kind} finding(s)`);
