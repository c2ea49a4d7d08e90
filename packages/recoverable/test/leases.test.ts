import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  completed,
  createNodeId,
  DATABASE_UNREACHABLE,
  type JobStore,
  leaseSettings,
  PgJobStoreFactory,
  parseNodeId,
  paused,
  RecoverableEngine,
  type RecoverableJobHandler,
  type RecoverableTables,
} from '../src/index.js';
import { CapturingLogger, encodeCursor, Gate, runRow, sleep, waitFor } from './support.js';

/** Short leases so the tests stay fast: trust window 1667 ms. */
const LEASE = { leaseMs: 2_000, heartbeatMs: 300, janitorIntervalMs: 200 };

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ max: 20 });
  await db.pool.query('CREATE TABLE public.lease_side_writes (run_id uuid, node text, position int)');
});
afterAll(async () => {
  await db?.drop();
});

function engine(nodeId: string, logger = new CapturingLogger(), repository?: PgJobStoreFactory) {
  return new RecoverableEngine({
    pool: db.pool,
    logger,
    nodeId,
    ...LEASE,
    ...(repository ? { repository } : {}),
  });
}

async function leaseRow(runId: string) {
  const { rows } = await db.pool.query(
    'SELECT owner_node, lease_until, attempt, status, now() AS db_now FROM jobs.recoverable_runs WHERE id = $1',
    [runId],
  );
  return rows[0] as {
    owner_node: string | null;
    lease_until: Date | null;
    attempt: number;
    status: string;
    db_now: Date;
  };
}

/**
 * A job that walks 0..total, waits at `gate` before each batch, and writes a
 * side row per batch inside its checkpoint's transaction (like findings).
 */
function sideWriter(name: string, node: string, total: number, gate?: Gate): RecoverableJobHandler {
  return {
    name,
    async runResumable(store: JobStore, signal: AbortSignal) {
      let position = store.facts.cursor
        ? new DataView(store.facts.cursor.buffer, store.facts.cursor.byteOffset).getUint32(0)
        : 0;
      while (position < total) {
        await gate?.wait();
        if (signal.aborted) return paused(encodeCursor(position));
        position += 1;
        const at = position;
        await store.checkpoint(encodeCursor(at), 1, {}, async (tx) => {
          await sql`INSERT INTO public.lease_side_writes VALUES (${store.runId}, ${node}, ${at})`.execute(tx);
          return undefined;
        });
        if ((await store.status()) !== 'Running') return paused(encodeCursor(at));
      }
      return completed();
    },
  };
}

describe('node ids', () => {
  it('createNodeId() is host:pid:6 hex, a new suffix each time; parseNodeId reads it back', () => {
    const id = createNodeId();
    expect(id).toMatch(new RegExp(`:${process.pid}:[0-9a-f]{6}$`));
    expect(createNodeId()).not.toBe(id);
    expect(parseNodeId(id)).toMatchObject({ host: hostname(), pid: process.pid });
    expect(parseNodeId('not a node id')).toBeNull();
  });
});

describe('leases and fencing of runs', () => {
  it('validates the lease settings with a message saying what is allowed', () => {
    expect(() => leaseSettings({ leaseMs: 3_000, heartbeatMs: 2_000 })).toThrow(
      /heartbeatMs \(2000\) must be at most half of the lease's trust window \(2500 ms of a 3000 ms lease\)/,
    );
    expect(() => leaseSettings({ leaseMs: 500 })).toThrow(
      /leaseMs must be a whole number of milliseconds of at least 1000/,
    );
    expect(leaseSettings({})).toEqual({
      leaseMs: 30_000,
      heartbeatMs: 10_000,
      janitorIntervalMs: 10_000,
      trustMs: 25_000,
    });
  });

  it('a Running run records its owner and a lease the heartbeat renews; the terminal write ends the lease', async () => {
    const gate = new Gate();
    const node = `${hostname()}:${process.pid}:a1a1a1`;
    const e = engine(node);
    e.register(sideWriter('lease_renew', node, 3, gate));
    const { run_id } = await e.trigger('lease_renew');
    const first = await leaseRow(run_id);
    expect(first).toMatchObject({ owner_node: node, attempt: 1, status: 'Running' });
    expect(first.lease_until!.getTime() - first.db_now.getTime()).toBeGreaterThan(1_500);
    await sleep(900);
    const later = await leaseRow(run_id);
    expect(later.lease_until!.getTime()).toBeGreaterThan(first.lease_until!.getTime());
    gate.open();
    await e.whenIdle();
    expect(await leaseRow(run_id)).toMatchObject({
      owner_node: node,
      lease_until: null,
      status: 'Completed',
    });
    const summary = await e.getRun('lease_renew', run_id);
    expect(summary).toMatchObject({ owner_node: node, attempt: 1, lease_until: null });
  });

  it('the stale writer: after a takeover its checkpoint is refused, rolled back with its batch writes, and it logs run.lease_lost', async () => {
    const gate = new Gate();
    const nodeA = 'host-a:101:aaaaaa';
    const nodeB = 'host-b:202:bbbbbb';
    const logA = new CapturingLogger();
    const a = engine(nodeA, logA);
    a.register(sideWriter('lease_stale', nodeA, 5, gate));
    const { run_id } = await a.trigger('lease_stale');
    // A stalls (its gate closed) and its lease is made to pass; B's janitor pauses the run, a trigger on B takes it over.
    await db.pool.query(
      `UPDATE jobs.recoverable_runs SET lease_until = now() - interval '1 second' WHERE id = $1`,
      [run_id],
    );
    const b = engine(nodeB);
    b.register(sideWriter('lease_stale', nodeB, 5));
    expect(await b.pauseLostRuns()).toEqual([{ run_id, job: 'lease_stale', owner_node: nodeA }]);
    expect((await b.getRun('lease_stale', run_id)).pause_reason).toBe(`node ${nodeA} lost mid-run`);
    expect(await runRow(db.pool, run_id)).toMatchObject({
      status: 'Paused',
      error_message: `node ${nodeA} lost mid-run`,
    });
    const taken = await b.trigger('lease_stale');
    expect(taken).toMatchObject({ run_id, resumed: true });
    // The resume clears the reason: a running run holds no stale error_message.
    expect((await runRow(db.pool, run_id))?.error_message).toBeNull();
    await b.whenIdle();
    gate.open();
    await a.whenIdle();
    expect(logA.events('run.lease_lost')).toHaveLength(1);
    const row = await runRow(db.pool, run_id);
    expect(row).toMatchObject({ status: 'Completed' });
    expect(row?.stats['count']).toBe(5);
    expect(await leaseRow(run_id)).toMatchObject({ owner_node: nodeB, attempt: 2 });
    const { rows } = await db.pool.query(
      'SELECT node, position FROM public.lease_side_writes WHERE run_id = $1 ORDER BY position',
      [run_id],
    );
    // Every write is B's: A's refused checkpoint took its batch's write with it.
    expect(rows).toEqual([1, 2, 3, 4, 5].map((position) => ({ node: nodeB, position })));
  });

  it('the fenced UPDATE comes first in the checkpoint transaction: refused, it rolls back the batch writes (LEASE_LOST)', async () => {
    const kysely = new Kysely<RecoverableTables>({ dialect: new PostgresDialect({ pool: db.pool }) });
    const a = new PgJobStoreFactory(kysely, { nodeId: 'host-a:1:0a0a0a', leaseMs: 2_000 });
    const b = new PgJobStoreFactory(kysely, { nodeId: 'host-b:2:0b0b0b', leaseMs: 2_000 });
    const record = (await a.insertRunning('lease_fence_store', {}))!;
    const store = a.storeFor(record, {});
    await store.checkpoint(encodeCursor(1), 1);
    await db.pool.query(`UPDATE jobs.recoverable_runs SET status = 'Paused' WHERE id = $1`, [record.runId]);
    const takeover = (await b.resumePaused(record.runId))!;
    expect(takeover).toMatchObject({ ownerNode: 'host-b:2:0b0b0b', attempt: 2 });
    let wrote = false;
    await expect(
      store.checkpoint(encodeCursor(2), 1, {}, async (tx) => {
        wrote = true;
        await sql`INSERT INTO public.lease_side_writes VALUES (${record.runId}, 'stale', 2)`.execute(tx);
        return undefined;
      }),
    ).rejects.toMatchObject({ code: 'LEASE_LOST' });
    // Refused before the batch's writes ran; nothing of it is in the database.
    expect(wrote).toBe(false);
    await expect(store.checkpoint(encodeCursor(2), 1)).rejects.toMatchObject({ code: 'LEASE_LOST' });
    await expect(a.finishRun(record, completed())).rejects.toMatchObject({ code: 'LEASE_LOST' });
    const row = await runRow(db.pool, record.runId);
    expect(row?.cursor).toEqual(Buffer.from(encodeCursor(1)));
    expect(row?.status).toBe('Running');
    const { rowCount } = await db.pool.query('SELECT 1 FROM public.lease_side_writes WHERE run_id = $1', [
      record.runId,
    ]);
    expect(rowCount).toBe(0);
    // The new owner writes.
    await b.storeFor(takeover, {}).checkpoint(encodeCursor(2), 1);
    expect((await b.finishRun(takeover, completed())).status).toBe('Completed');
  });

  it('error_message holds the sweep reason only while Paused for it: the resume clears it, an own pause writes none, pauses keeps both', async () => {
    const kysely = new Kysely<RecoverableTables>({ dialect: new PostgresDialect({ pool: db.pool }) });
    const dead = `${hostname()}:2147484:0c0c0c`;
    const crashed = new PgJobStoreFactory(kysely, { nodeId: dead, leaseMs: 2_000 });
    const record = (await crashed.insertRunning('lease_reason_cleared', {}))!;
    const here = new PgJobStoreFactory(kysely, {
      nodeId: `${hostname()}:${process.pid}:0d0d0d`,
      leaseMs: 2_000,
    });
    expect(await here.sweep((owner) => owner === dead)).toEqual([
      { runId: record.runId, jobName: 'lease_reason_cleared' },
    ]);
    expect(await runRow(db.pool, record.runId)).toMatchObject({
      status: 'Paused',
      error_message: 'server restart mid-run',
    });
    const resumed = (await here.resumePaused(record.runId))!;
    expect(resumed.errorMessage).toBeNull();
    expect((await runRow(db.pool, record.runId))?.error_message).toBeNull();
    const again = await here.finishRun(resumed, paused(encodeCursor(3), 'cancel requested'));
    expect(again).toMatchObject({ status: 'Paused', errorMessage: null });
    expect((await runRow(db.pool, record.runId))?.pauses.map((p) => p.reason)).toEqual([
      'server restart mid-run',
      'cancel requested',
    ]);
  });

  it('boot sweep: only dead processes of this host; the janitor: only expired leases of other nodes, never resumed', async () => {
    const dead = `${hostname()}:2147483:cccccc`;
    const aliveHere = `${hostname()}:${process.ppid}:dddddd`;
    const otherLive = 'host-z:77:eeeeee';
    const otherGone = 'host-y:66:ffffff';
    const ids = {
      dead: randomUUID(),
      aliveHere: randomUUID(),
      otherLive: randomUUID(),
      otherGone: randomUUID(),
    };
    await db.pool.query(
      `INSERT INTO jobs.recoverable_runs (id, job_name, status, started_at, last_progress_at, stats, params, owner_node, lease_until)
       VALUES ($1, 'lease_sweep_dead', 'Running', now(), now(), '{}', '{}', $2, now() + interval '1 hour'),
              ($3, 'lease_sweep_alive', 'Running', now(), now(), '{}', '{}', $4, now() + interval '1 hour'),
              ($5, 'lease_sweep_live', 'Running', now(), now(), '{}', '{}', $6, now() + interval '1 hour'),
              ($7, 'lease_sweep_gone', 'CancelRequested', now(), now(), '{}', '{}', $8, now() - interval '1 second')`,
      [ids.dead, dead, ids.aliveHere, aliveHere, ids.otherLive, otherLive, ids.otherGone, otherGone],
    );
    const log = new CapturingLogger();
    const e = engine(`${hostname()}:${process.pid}:123456`, log);
    await e.start();
    await waitFor(async () => (await leaseRow(ids.otherGone)).status === 'Paused');
    await e.shutdown({ timeoutMs: 100 });
    const pauses = async (id: string) => (await runRow(db.pool, id))?.pauses.map((p) => p.reason);
    expect(await pauses(ids.dead)).toEqual(['server restart mid-run']);
    expect(await pauses(ids.otherGone)).toEqual([`node ${otherGone} lost mid-run`]);
    expect((await runRow(db.pool, ids.dead))?.error_message).toBe('server restart mid-run');
    expect((await runRow(db.pool, ids.otherGone))?.error_message).toBe(`node ${otherGone} lost mid-run`);
    expect((await leaseRow(ids.aliveHere)).status).toBe('Running');
    expect((await leaseRow(ids.otherLive)).status).toBe('Running');
    expect(log.events('run.node_lost')).toHaveLength(1);
    await db.pool.query('DELETE FROM jobs.recoverable_runs WHERE id = ANY($1)', [Object.values(ids)]);
  });

  it('trust window: no renewal (database unreachable) stops the run before its lease ends; it lands Paused at its last checkpoint', async () => {
    const node = 'host-t:303:abcdef';
    const kysely = new Kysely<RecoverableTables>({ dialect: new PostgresDialect({ pool: db.pool }) });
    class Unrenewable extends PgJobStoreFactory {
      override async renewLeases(): Promise<Array<{ runId: string; status: string }>> {
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      }
    }
    const log = new CapturingLogger();
    const e = engine(node, log, new Unrenewable(kysely, { nodeId: node, leaseMs: LEASE.leaseMs }));
    const gate = new Gate();
    let aborted = 0;
    e.register({
      name: 'lease_trust',
      async runResumable(store, signal) {
        await store.checkpoint(encodeCursor(1), 1);
        const t0 = performance.now();
        // One long batch: no checkpoint renews the lease; only the heartbeat could.
        while (!signal.aborted && performance.now() - t0 < 10_000) await sleep(20);
        aborted = performance.now() - t0;
        await gate.wait();
        // A write after the trust window is refused locally: nothing reaches the database.
        await store.checkpoint(encodeCursor(2), 1).catch(() => undefined);
        return paused(encodeCursor(2));
      },
    });
    const { run_id } = await e.trigger('lease_trust');
    await waitFor(() => aborted > 0, 5_000);
    const lease = await leaseRow(run_id);
    // Stopped before the lease in the database passed.
    expect(lease.lease_until!.getTime()).toBeGreaterThan(lease.db_now.getTime());
    expect(log.events('run.lease_untrusted')).toHaveLength(1);
    gate.open();
    await e.whenIdle();
    const row = await runRow(db.pool, run_id);
    expect(row?.status).toBe('Paused');
    expect(row?.cursor).toEqual(Buffer.from(encodeCursor(1)));
    expect(row?.pauses.at(-1)?.reason).toBe(DATABASE_UNREACHABLE);
  });
});
