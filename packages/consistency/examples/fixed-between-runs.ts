// A check's whole life without the OxiCloud server: run it, fix the fault, run it again,
// and the finding goes open → fixed. Needs DATABASE_URL. Run: npx tsx examples/fixed-between-runs.ts
import {
  type ConsistencyCheck,
  checkJob,
  migrate as migrateFindings,
  PgFindingLedger,
  PgFindingStore,
} from '@oxicloud/consistency';
import { completed, migrate as migrateRuns, RecoverableEngine } from '@oxicloud/recoverable';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env['DATABASE_URL'] });
// The schemas, in this order: findings reference runs.
await migrateRuns(pool);
await migrateFindings(pool);

// What your system holds: invoices that point at customers; i2's customer is missing.
const customers = new Set(['c1', 'c2']);
const invoices = [
  { id: 'i1', customer: 'c1' },
  { id: 'i2', customer: 'c9' },
];

const invoicesCheck: ConsistencyCheck = {
  name: 'invoices_consistency',
  subsystem: 'billing',
  order: 100,
  countMeaning: 'findings this run found: invoices whose customer is gone',
  // Every kind the check records, with its severity: a finding of another kind fails the run.
  kinds: [{ kind: 'invoice_without_customer', severity: 'Drift', meaning: "the invoice's customer is gone" }],
  graceWindowMs: () => 0, // no grace: a run examines every invoice, however young
  concurrentSafe: () => true,
  async runResumable(store) {
    for (const invoice of invoices) {
      if (!customers.has(invoice.customer)) {
        store.recordFinding({
          kind: 'invoice_without_customer',
          severity: 'Drift',
          resourceId: invoice.id,
          detail: { customer: invoice.customer },
        });
      }
    }
    // One batch: its findings are written with this checkpoint, in one transaction.
    await store.checkpoint(new Uint8Array([1]), invoices.length);
    return completed();
  },
};

// checkJob owns the run's whole life: it begins the run, writes the findings with each
// checkpoint and, once the run is Completed, closes it (what it examined and found
// consistent becomes `fixed`) before runOrResume resolves.
const findings = new PgFindingStore({ pool });
const ledger = new PgFindingLedger({ pool });
const engine = new RecoverableEngine({ pool });
engine.register(checkJob(invoicesCheck, { findings }));

const stateOfI2 = async () =>
  (await ledger.list({ check: 'invoices_consistency' })).items.find((f) => f.resourceId === 'i2')?.state;

const first = await engine.runOrResume('invoices_consistency'); // awaited: the run's JobOutcome
const afterFirst = await stateOfI2();

customers.add('c9'); // the fault is fixed between the two runs

const second = await engine.runOrResume('invoices_consistency');
const afterSecond = await stateOfI2();
const secondRun = second.kind === 'ok' ? String(second.extra['run_id']) : '';
const changes = await ledger.runChanges(secondRun); // what the second run changed: i2 fixed
await pool.end();

if (
  first.kind !== 'ok' ||
  second.kind !== 'ok' ||
  afterFirst !== 'open' ||
  afterSecond !== 'fixed' ||
  changes.counts.fixed !== 1 ||
  changes.fixed[0]?.resourceId !== 'i2'
) {
  throw new Error(`unexpected: ${JSON.stringify({ first, second, afterFirst, afterSecond, changes })}`);
}
console.log(`consistency fixed-between-runs ok: i2 ${afterFirst} → ${afterSecond}`);
