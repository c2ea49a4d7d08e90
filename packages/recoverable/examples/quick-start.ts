// Quick start of @oxicloud/recoverable: a resumable job on your own Postgres.
// Needs DATABASE_URL. Run: npx tsx examples/quick-start.ts
import {
  completed,
  type JobStore,
  migrate,
  paused,
  RecoverableEngine,
  type RecoverableJobHandler,
} from '@oxicloud/recoverable';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env['DATABASE_URL'] });
// 1. The schema: creates `jobs` and jobs.recoverable_runs (idempotent, versioned, under an advisory lock).
await migrate(pool);

// 2. A job that walks its keyspace in batches and checkpoints a cursor after each one.
// Enough batches that the cancel below lands mid-run even on a loaded machine.
const items = Array.from({ length: 200 }, (_, i) => i + 1);
const processed: number[] = [];
const encode = (n: number) => Uint8Array.from([n >> 8, n & 0xff]);
const decode = (bytes: Uint8Array | null) => (bytes === null ? 0 : ((bytes[0] ?? 0) << 8) | (bytes[1] ?? 0));

const countItems: RecoverableJobHandler = {
  name: 'count_items',
  async runResumable(store: JobStore, signal: AbortSignal) {
    let last = decode(await store.loadCursor()); // 0 on a fresh run, the checkpoint on a resume
    for (;;) {
      const batch = items.filter((i) => i > last).slice(0, 5);
      if (batch.length === 0) return completed();
      processed.push(...batch); // your work here
      last = batch.at(-1) ?? last;
      await store.checkpoint(encode(last), batch.length);
      if (signal.aborted || (await store.status()) === 'CancelRequested') return paused(encode(last));
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
  },
};

// 3. The engine: trigger returns at once, the run goes on in the background.
const engine = new RecoverableEngine({ pool });
engine.register(countItems);
await engine.sweep(); // at boot: runs a dead process left Running → Paused

const first = await engine.trigger('count_items');
while (processed.length < 10) await new Promise((resolve) => setTimeout(resolve, 5));
await engine.cancel('count_items'); // lands Paused at the next batch boundary, cursor kept
await engine.whenIdle();
const pausedRun = await engine.getRun('count_items', first.run_id);

const second = await engine.trigger('count_items'); // resumes the Paused run from its cursor
await engine.whenIdle();
const done = await engine.getRun('count_items', first.run_id);
await pool.end();

const once = new Set(processed).size === processed.length && processed.length === items.length;
if (pausedRun.status !== 'Paused' || !second.resumed || done.status !== 'Completed' || !once) {
  throw new Error(
    `unexpected: ${JSON.stringify({ paused: pausedRun.status, second, done: done.status, processed })}`,
  );
}
console.log(`recoverable quick start ok: ${processed.length} items, each once, run ${done.status}`);
