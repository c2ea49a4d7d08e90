import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DATABASE_UNREACHABLE,
  isConnectionLoss,
  paused,
  RecoverableEngine,
  type RecoverableJobHandler,
  withConnectionRetry,
} from '../src/index.js';
import { CapturingLogger, runRow, sleep } from './support.js';

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

describe('isConnectionLoss', () => {
  it('knows socket errors, SQLSTATE 08xxx and 57P01–57P03, pg and pg-pool messages, causes and AggregateErrors', () => {
    expect(isConnectionLoss(refused())).toBe(true);
    expect(isConnectionLoss(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBe(true);
    expect(isConnectionLoss(Object.assign(new Error('terminating connection'), { code: '57P01' }))).toBe(
      true,
    );
    expect(isConnectionLoss(Object.assign(new Error('starting up'), { code: '57P03' }))).toBe(true);
    expect(isConnectionLoss(Object.assign(new Error('x'), { code: '08006' }))).toBe(true);
    expect(isConnectionLoss(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isConnectionLoss(new Error('Cannot use a pool after calling end on the pool'))).toBe(true);
    expect(isConnectionLoss(new Error('wrapped', { cause: refused() }))).toBe(true);
    expect(isConnectionLoss(new AggregateError([refused(), refused()], ''))).toBe(true);
  });

  it('a query error is not a connection loss', () => {
    expect(isConnectionLoss(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
    expect(isConnectionLoss(Object.assign(new Error('syntax error'), { code: '42601' }))).toBe(false);
    expect(isConnectionLoss(new Error('disk on fire'))).toBe(false);
    expect(isConnectionLoss(undefined)).toBe(false);
  });
});

describe('withConnectionRetry', () => {
  it('retries a lost connection with backoff until the operation succeeds', async () => {
    let calls = 0;
    const delays: number[] = [];
    const value = await withConnectionRetry(
      async () => {
        calls++;
        if (calls < 4) throw refused();
        return 'ok';
      },
      { initialDelayMs: 5, onRetry: ({ delayMs }) => delays.push(delayMs) },
    );
    expect(value).toBe('ok');
    expect(calls).toBe(4);
    expect(delays).toEqual([5, 10, 20]);
  });

  it('throws the loss once retryForMs has passed, and any other error at once', async () => {
    let calls = 0;
    const retries: { delayMs: number; elapsedMs: number }[] = [];
    const started = performance.now();
    await expect(
      withConnectionRetry(
        async () => {
          calls++;
          throw refused();
        },
        {
          retryForMs: 120,
          initialDelayMs: 10,
          maxDelayMs: 20,
          onRetry: ({ delayMs, elapsedMs }) => retries.push({ delayMs, elapsedMs }),
        },
      ),
    ).rejects.toThrow(/ECONNREFUSED/);
    // How many attempts fit in 120 ms depends on the timers of a busy machine;
    // what holds on any machine: it retried, each wait within the cap, each
    // retry begun inside the window (elapsedMs is rounded: 119.6 reads 120),
    // and the loss thrown only after it.
    expect(performance.now() - started).toBeGreaterThanOrEqual(110);
    expect(retries.length).toBeGreaterThanOrEqual(1);
    expect(calls).toBe(retries.length + 1);
    expect(retries[0]?.delayMs).toBe(10);
    for (const r of retries) {
      expect(r.delayMs).toBeLessThanOrEqual(20);
      expect(r.elapsedMs).toBeLessThanOrEqual(120);
    }

    let other = 0;
    await expect(
      withConnectionRetry(async () => {
        other++;
        throw new Error('duplicate key');
      }),
    ).rejects.toThrow('duplicate key');
    expect(other).toBe(1);
  });

  it('stops retrying as soon as the signal fires', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const started = performance.now();
    await expect(
      withConnectionRetry(
        async () => {
          throw refused();
        },
        { signal: controller.signal, initialDelayMs: 1_000 },
      ),
    ).rejects.toThrow(/ECONNREFUSED/);
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('the engine lands a run that lost the database Paused, not Failed', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ max: 10 });
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('a thrown connection loss → Paused at the last checkpoint, reason "database unreachable", no error_message', async () => {
    const e = new RecoverableEngine({ pool: db.pool, logger: new CapturingLogger() });
    const job: RecoverableJobHandler = {
      name: 'loses_db',
      async runResumable(store) {
        await store.checkpoint(Uint8Array.of(1), 1);
        await sleep(30);
        await store.checkpoint(Uint8Array.of(2), 1);
        throw new Error('batch failed', { cause: refused() });
      },
    };
    e.register(job);
    const { run_id } = await e.trigger('loses_db');
    await e.whenIdle();
    const row = await runRow(db.pool, run_id);
    expect(row).toMatchObject({ status: 'Paused', error_message: null });
    expect(row?.cursor?.toString('hex')).toBe('02');
    const summary = await e.getRun('loses_db', run_id);
    expect(summary.pause_reason).toBe(DATABASE_UNREACHABLE);
    expect(summary.active_ms).toBeGreaterThanOrEqual(25);
    expect(summary.wall_ms).toBeGreaterThanOrEqual(summary.active_ms - 5);
  });

  it('a loop that returns paused(…, "database unreachable") is landed at the last checkpoint that landed', async () => {
    const e = new RecoverableEngine({ pool: db.pool, logger: new CapturingLogger() });
    e.register({
      name: 'loop_pauses',
      async runResumable(store) {
        await store.checkpoint(Uint8Array.of(7), 1);
        return paused(Uint8Array.of(9, 9), DATABASE_UNREACHABLE);
      },
    });
    const { run_id } = await e.trigger('loop_pauses');
    await e.whenIdle();
    expect((await runRow(db.pool, run_id))?.cursor?.toString('hex')).toBe('07');
    const second = await e.trigger('loop_pauses');
    expect(second).toMatchObject({ run_id, resumed: true });
    await e.whenIdle();
    const summary = await e.getRun('loop_pauses', run_id);
    expect(summary.pauses.map((p) => p.reason)).toEqual([DATABASE_UNREACHABLE, DATABASE_UNREACHABLE]);
  });

  it('a cancel or shutdown pause carries its own reason', async () => {
    const e = new RecoverableEngine({ pool: db.pool, logger: new CapturingLogger() });
    e.register({
      name: 'waits_for_cancel',
      async runResumable(store, signal) {
        while (!signal.aborted && (await store.status()) === 'Running') await sleep(10);
        return paused(Uint8Array.of(3));
      },
    });
    const { run_id } = await e.trigger('waits_for_cancel');
    await e.cancel('waits_for_cancel');
    await e.whenIdle();
    expect((await e.getRun('waits_for_cancel', run_id)).pause_reason).toBe('cancel requested');
    await e.trigger('waits_for_cancel');
    await e.shutdown({ timeoutMs: 2_000 });
    expect((await e.getRun('waits_for_cancel', run_id)).pauses.map((p) => p.reason)).toEqual([
      'cancel requested',
      'server shutdown',
    ]);
  });
});
