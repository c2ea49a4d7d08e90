import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BatchWrites,
  completed,
  type JobStoreFactory,
  PgJobStoreFactory,
  type RecoverableJobHandler,
  type RecoverableTables,
  type RunRecord,
  runBatches,
  runOrResume,
} from '../src/index.js';
import { MAX_PROGRESS_SAMPLES } from '../src/progress.js';
import { CapturingLogger, decodeCursor, encodeCursor, Gate, runRow, walker } from './support.js';

let db: TestDatabase;
let factory: PgJobStoreFactory;
const kysely = () => new Kysely<RecoverableTables>({ dialect: new PostgresDialect({ pool: db.pool }) });

beforeAll(async () => {
  db = await createTestDatabase();
  factory = new PgJobStoreFactory(kysely());
});
afterAll(async () => {
  await db?.drop();
});

describe('PgJobStore.checkpoint', () => {
  it('one UPDATE: cursor, count, scanned_count, counters, total_estimate, progress samples, last_progress_at', async () => {
    const record = (await factory.insertRunning('cp_job', { a: 1 }))!;
    const store = factory.storeFor(record, { a: 1 });
    expect(store.params).toEqual({ a: 1 });
    expect(await store.status()).toBe('Running');
    expect(await store.loadCursor()).toBeNull();

    await store.checkpoint(encodeCursor(7), 2, {
      scanned: 7,
      totalEstimate: 70,
      counters: { failed_blobs: 1 },
    });
    await store.checkpoint(encodeCursor(9), 1, { counters: { failed_blobs: 2, bytes_copied: 10.5 } });
    const row = await runRow(db.pool, record.runId);
    expect(decodeCursor(row!.cursor)).toBe(9);
    expect(decodeCursor(await store.loadCursor())).toBe(9);
    expect(row!.stats).toMatchObject({
      count: 3,
      scanned_count: 8,
      total_estimate: 70,
      failed_blobs: 3,
      bytes_copied: 10.5,
    });
    const samples = row!.stats['progress_samples'] as Array<[number, number]>;
    // Two checkpoints within the sample spacing: the first sample and the newest.
    expect(samples.map((s) => s[1])).toEqual([7, 8]);
    const { rows } = await db.pool.query(
      'SELECT last_progress_at > started_at AS moved FROM jobs.recoverable_runs WHERE id = $1',
      [record.runId],
    );
    expect(rows[0].moved).toBe(true);
  });

  it('status() right after a checkpoint is the status that UPDATE read; the next one reads the row', async () => {
    const record = (await factory.insertRunning('cp_status_job', {}))!;
    const store = factory.storeFor(record, {});
    await db.pool.query("UPDATE jobs.recoverable_runs SET status = 'CancelRequested' WHERE id = $1", [
      record.runId,
    ]);
    await store.checkpoint(encodeCursor(1), 1);
    // A status change after the checkpoint is not seen by the status() that follows it...
    await db.pool.query("UPDATE jobs.recoverable_runs SET status = 'Running' WHERE id = $1", [record.runId]);
    expect(await store.status()).toBe('CancelRequested');
    // ...but by the next one (one batch later, at the latest).
    expect(await store.status()).toBe('Running');
  });

  it('keeps at most MAX_PROGRESS_SAMPLES samples, spaced apart', async () => {
    const record = (await factory.insertRunning('sample_job', {}))!;
    const spaced = Array.from({ length: 40 }, (_, i) => [i * 3_000, i * 10]);
    await db.pool.query(
      `UPDATE jobs.recoverable_runs SET stats = jsonb_build_object('progress_samples', $2::jsonb) WHERE id = $1`,
      [record.runId, JSON.stringify(spaced)],
    );
    await factory.storeFor(record, {}).checkpoint(encodeCursor(1), 1);
    const samples = (await runRow(db.pool, record.runId))!.stats['progress_samples'] as number[][];
    expect(samples).toHaveLength(MAX_PROGRESS_SAMPLES);
    expect(samples.at(-1)?.[1]).toBe(1);
    expect(samples[0]).toEqual(spaced[40 - MAX_PROGRESS_SAMPLES + 1]);
  });

  it('rejects reserved counters and bad numbers', async () => {
    const record = (await factory.insertRunning('bad_cp_job', {}))!;
    const store = factory.storeFor(record, {});
    await expect(store.checkpoint(encodeCursor(1), 1, { counters: { count: 1 } })).rejects.toMatchObject({
      code: 'INVALID_CHECKPOINT',
    });
    await expect(store.checkpoint(encodeCursor(1), -1)).rejects.toMatchObject({ code: 'INVALID_CHECKPOINT' });
    await expect(store.checkpoint(encodeCursor(1), Number.NaN)).rejects.toMatchObject({
      code: 'INVALID_CHECKPOINT',
    });
    expect((await runRow(db.pool, record.runId))!.stats).toEqual({});
  });
});

describe('a checkpoint lost in a Postgres crash (checkpoints do not wait for the disk)', () => {
  /** What a crash does to an asynchronously committed checkpoint: the row goes back to an earlier state. */
  async function loseCheckpointsSince(runId: string, saved: { cursor: Buffer | null; stats: unknown }) {
    await db.pool.query('UPDATE jobs.recoverable_runs SET cursor = $2, stats = $3 WHERE id = $1', [
      runId,
      saved.cursor,
      JSON.stringify(saved.stats),
    ]);
  }

  it('the next checkpoint fails with CHECKPOINT_LOST and writes nothing; after loadCursor() it lands', async () => {
    await db.pool.query('CREATE TABLE IF NOT EXISTS public.lost_cp_writes (item int PRIMARY KEY)');
    const record = (await factory.insertRunning('lost_cp_job', {}))!;
    const store = factory.storeFor(record, {});
    await store.checkpoint(encodeCursor(5), 5);
    const saved = (await runRow(db.pool, record.runId))!;
    await store.checkpoint(encodeCursor(7), 2);
    await loseCheckpointsSince(record.runId, saved);

    const write: BatchWrites = async (tx) => {
      await sql`INSERT INTO public.lost_cp_writes VALUES (8)`.execute(tx);
      return {};
    };
    await expect(store.checkpoint(encodeCursor(9), 2, {}, write)).rejects.toMatchObject({
      code: 'CHECKPOINT_LOST',
    });
    // Nothing of that batch landed: its own writes rolled back with it, the row is as the crash left it.
    expect((await db.pool.query('SELECT item FROM public.lost_cp_writes')).rows).toEqual([]);
    expect(decodeCursor((await runRow(db.pool, record.runId))!.cursor)).toBe(5);

    expect(decodeCursor(await store.loadCursor())).toBe(5);
    await store.checkpoint(encodeCursor(9), 4);
    const row = (await runRow(db.pool, record.runId))!;
    expect(decodeCursor(row.cursor)).toBe(9);
    expect(row.stats['count']).toBe(9);
  });

  it('runBatches reloads the stored cursor and replays the lost batches: every item counted once', async () => {
    await db.pool.query('CREATE TABLE IF NOT EXISTS public.lost_cp_items (item int PRIMARY KEY)');
    const record = (await factory.insertRunning('lost_cp_loop', {}))!;
    const store = factory.storeFor(record, {});
    const ITEMS = 50;
    const BATCH = 5;
    let saved: Awaited<ReturnType<typeof runRow>> | undefined;
    let batches = 0;
    const outcome = await runBatches({
      name: 'lost_cp_loop',
      store,
      signal: new AbortController().signal,
      batchSize: BATCH,
      async batch(cursor, { limit }) {
        batches++;
        // After 3 checkpoints keep the row; after 6, a "crash" takes the last 3 away.
        if (batches === 4) saved = await runRow(db.pool, record.runId);
        if (batches === 7 && saved) {
          // The crash takes the lost batches' own writes too (they were in the checkpoints' transactions).
          await loseCheckpointsSince(record.runId, saved);
          await db.pool.query('DELETE FROM public.lost_cp_items WHERE item > $1', [
            decodeCursor(saved.cursor),
          ]);
        }
        const from = cursor === null ? 0 : decodeCursor(cursor) + 1;
        const items = Array.from({ length: Math.min(limit, ITEMS - from) }, (_, i) => from + i);
        const last = items.at(-1);
        return {
          cursor: last === undefined ? null : encodeCursor(last),
          done: from + items.length >= ITEMS,
          scanned: items.length,
          writes: async (tx) => {
            for (const item of items) {
              const { rows } = await sql`INSERT INTO public.lost_cp_items VALUES (${item})
                ON CONFLICT DO NOTHING RETURNING item`.execute(tx);
              if (rows.length === 0) throw new Error(`item ${item} written twice`);
            }
            return { count: items.length };
          },
        };
      },
    });
    expect(outcome.kind).toBe('completed');
    // 10 batches + the 3 lost ones replayed + the one whose checkpoint found the loss.
    expect(batches).toBe(ITEMS / BATCH + 3 + 1);
    const row = (await runRow(db.pool, record.runId))!;
    expect(row.stats['count']).toBe(ITEMS);
    expect(row.stats['scanned_count']).toBe(ITEMS);
    expect((await db.pool.query('SELECT count(*)::int AS n FROM public.lost_cp_items')).rows[0].n).toBe(
      ITEMS,
    );
  });
});

class BarrierFactory implements JobStoreFactory {
  inserts: Array<RunRecord | null> = [];
  #first = true;
  #inserted!: () => void;
  /** Settles once this factory's first INSERT has returned (won or refused). */
  readonly inserted = new Promise<void>((r) => {
    this.#inserted = r;
  });
  constructor(
    private readonly inner: PgJobStoreFactory,
    private readonly barrier: { arrive(): Promise<void> },
  ) {}
  latestRun(jobName: string) {
    return this.inner.latestRun(jobName);
  }
  async insertRunning(jobName: string, params: Readonly<Record<string, unknown>>) {
    if (this.#first) {
      this.#first = false;
      await this.barrier.arrive(); // both racers are at their INSERT before either sends it
    }
    const r = await this.inner.insertRunning(jobName, params);
    this.inserts.push(r);
    this.#inserted();
    return r;
  }
  resumePaused(runId: string) {
    return this.inner.resumePaused(runId);
  }
  storeFor(record: RunRecord, params: Readonly<Record<string, unknown>>) {
    return this.inner.storeFor(record, params);
  }
  recordTotalEstimate(...args: Parameters<PgJobStoreFactory['recordTotalEstimate']>) {
    return this.inner.recordTotalEstimate(...args);
  }
  finishRun(...args: Parameters<PgJobStoreFactory['finishRun']>) {
    return this.inner.finishRun(...args);
  }
}

function barrier(parties: number) {
  let arrived = 0;
  let release!: () => void;
  const all = new Promise<void>((r) => {
    release = r;
  });
  return {
    arrive() {
      arrived += 1;
      if (arrived === parties) release();
      return all;
    },
  };
}

describe('runOrResume', () => {
  it('unique-index race: two factories INSERT at once, the index refuses one; the loser reads the winner', async () => {
    const gate = new Gate();
    const job = walker('race_job', { total: 10, batch: 10, gate });
    const b = barrier(2);
    const left = new BarrierFactory(new PgJobStoreFactory(kysely()), b);
    const right = new BarrierFactory(new PgJobStoreFactory(kysely()), b);
    const racers = [runOrResume(job, left), runOrResume(job, right)] as const;
    const outcomes = Promise.all(racers);
    // Exactly one INSERT wins; the loser reads the winner (Running) and short-circuits, then the winner's
    // run is let through. The gate opens only once the loser has settled: opened earlier (after a timer,
    // or once both INSERTs returned) the loser could read the winner already finished and start a run.
    const first = await Promise.race(racers);
    expect(first.kind === 'ok' ? first.extra : first).toMatchObject({ skipped: 'already_running' });
    gate.open();
    const [l, r] = await outcomes;
    const inserts = [...left.inserts, ...right.inserts];
    expect(inserts).toHaveLength(2);
    const winner = inserts.find((i) => i !== null)!;
    expect(inserts.filter((i) => i === null)).toHaveLength(1);
    const results = [l, r].map((o) => (o.kind === 'ok' ? o.extra : o));
    expect(results).toContainEqual({ completed: true, run_id: winner.runId });
    expect(results).toContainEqual({ skipped: 'already_running', run_id: winner.runId });
    const { rows } = await db.pool.query(
      "SELECT count(*)::int AS n FROM jobs.recoverable_runs WHERE job_name = 'race_job'",
    );
    expect(rows[0].n).toBe(1);
  });

  it('a fresh run is three statements: INSERT, its checkpoint (carrying the estimate), the terminal write', async () => {
    const statements: string[] = [];
    const counted = new PgJobStoreFactory(
      new Kysely<RecoverableTables>({
        dialect: new PostgresDialect({ pool: db.pool }),
        log: (event) => {
          if (event.level === 'query') statements.push(event.query.sql.trim().split(/\s+/)[0]!.toLowerCase());
        },
      }),
    );
    const lean = (name: string, checkpoints: number): RecoverableJobHandler => ({
      name,
      estimateTotal: async () => 10,
      runResumable: async (store) => {
        for (let i = 1; i <= checkpoints; i++) await store.checkpoint(encodeCursor(i), 5);
        return completed();
      },
    });
    const first = await runOrResume(lean('lean_job', 1), counted, { logRunLine: false });
    expect(first).toMatchObject({ kind: 'ok', count: 5, extra: { completed: true } });
    // No read before the INSERT, no estimate UPDATE of its own: the WITH … UPDATE is the checkpoint.
    expect(statements).toEqual(['insert', 'with', 'update']);
    const runId = (first.kind === 'ok' ? first.extra['run_id'] : '') as string;
    expect((await runRow(db.pool, runId))?.stats).toMatchObject({ total_estimate: 10, count: 5 });

    // A second checkpoint does not write the estimate again; a run that never checkpoints still records it.
    statements.length = 0;
    await runOrResume(lean('lean_job', 2), counted, { logRunLine: false });
    expect(statements).toEqual(['insert', 'with', 'with', 'update']);
    statements.length = 0;
    const none = await runOrResume(lean('lean_none', 0), counted, { logRunLine: false });
    expect(statements).toEqual(['insert', 'update', 'update']);
    const noneId = (none.kind === 'ok' ? none.extra['run_id'] : '') as string;
    expect((await runRow(db.pool, noneId))?.stats).toMatchObject({ total_estimate: 10 });
  });

  it('logs job.run for completed, skipped and rejects invalid params without a row', async () => {
    const log = new CapturingLogger();
    const job: RecoverableJobHandler = {
      name: 'plain_job',
      validateParams: (raw) =>
        (raw as Record<string, unknown>)['bad'] ? { ok: false, message: 'no bad' } : { ok: true, params: {} },
      runResumable: async (store) => {
        await store.checkpoint(encodeCursor(1), 4);
        return completed();
      },
    };
    const outcome = await runOrResume(job, factory, { logger: log, force: true });
    expect(outcome).toMatchObject({ kind: 'ok', count: 4, extra: { completed: true } });
    expect(log.events('job.run')[0]?.fields).toMatchObject({ outcome: 'ok', count: 4, completed: true });
    expect(await runOrResume(job, factory, { params: { bad: true } })).toEqual({
      kind: 'err',
      message: 'invalid params for plain_job: no bad',
    });
    const { rows } = await db.pool.query(
      "SELECT count(*)::int AS n FROM jobs.recoverable_runs WHERE job_name = 'plain_job'",
    );
    expect(rows[0].n).toBe(1);
  });
});
