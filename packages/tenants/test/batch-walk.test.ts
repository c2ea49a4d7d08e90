import { describe, expect, it } from 'vitest';
import { type BatchWalk, processPrefix, runBatchWalk } from '../src/batch-walk/batch-walk.js';
import { hashCursor, uuidCursor } from '../src/batch-walk/cursor-codec.js';
import { hex, MemoryJobStore } from './fixtures/part2-fakes.js';

const keys = Array.from({ length: 10 }, (_, i) => (i + 1).toString(16).padStart(64, '0'));

function walk(store: MemoryJobStore, overrides: Partial<BatchWalk<string>> = {}): BatchWalk<string> {
  return {
    jobName: 'test_walk',
    store,
    signal: new AbortController().signal,
    cursor: hashCursor,
    keyOf: (k) => k,
    fetchPage: async (after, limit) => keys.filter((k) => after === null || k > after).slice(0, limit),
    processItem: async (_k, tally) => {
      tally.count += 1;
      tally.add('seen');
    },
    counterNames: ['seen', 'other'],
    batchSize: 4,
    concurrency: 2,
    throttleMs: 0,
    ...overrides,
  };
}

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

describe('runBatchWalk through a database outage', () => {
  it('retries a batch whose database step lost the connection, replaying its items, and completes', async () => {
    const store = new MemoryJobStore({});
    let fetches = 0;
    const replays: boolean[] = [];
    const outcome = await runBatchWalk(
      walk(store, {
        fetchPage: async (after, limit) => {
          fetches++;
          if (fetches === 2 || fetches === 3) throw refused();
          return keys.filter((k) => after === null || k > after).slice(0, limit);
        },
        processItem: async (_k, tally, context) => {
          replays.push(context.replay);
          tally.count += 1;
        },
      }),
    );
    expect(outcome).toEqual({ kind: 'completed' });
    expect(store.stats['count']).toBe(10);
    expect(store.checkpoints.map((c) => hex(c.cursor))).toEqual([keys[3], keys[7], keys[9]]);
  });

  it('past connectionRetryMs it pauses at the last checkpoint with "database unreachable", never failed', async () => {
    const store = Object.assign(new MemoryJobStore({}), { connectionRetryMs: 100 });
    let fetches = 0;
    const outcome = await runBatchWalk(
      walk(store, {
        fetchPage: async (after, limit) => {
          if (++fetches > 1) throw refused();
          return keys.filter((k) => after === null || k > after).slice(0, limit);
        },
      }),
    );
    expect(outcome).toMatchObject({ kind: 'paused', reason: 'database unreachable' });
    expect(hex((outcome as { cursor: Uint8Array }).cursor)).toBe(keys[3]);
  });

  it('any other error still fails the run', async () => {
    const outcome = await runBatchWalk(
      walk(new MemoryJobStore({}), {
        fetchPage: async () => {
          throw Object.assign(new Error('syntax error'), { code: '42601' });
        },
      }),
    );
    expect(outcome).toMatchObject({ kind: 'failed' });
  });
});

describe('runBatchWalk', () => {
  it('checkpoints after each page with the last key, reporting every counter, and completes on a short page', async () => {
    const store = new MemoryJobStore({});
    expect(await runBatchWalk(walk(store))).toEqual({ kind: 'completed' });
    expect(store.checkpoints.map((c) => [hex(c.cursor), c.deltaCount, c.progress])).toEqual([
      [keys[3], 4, { scanned: 4, counters: { seen: 4, other: 0 } }],
      [keys[7], 4, { scanned: 4, counters: { seen: 4, other: 0 } }],
      [keys[9], 2, { scanned: 2, counters: { seen: 2, other: 0 } }],
    ]);
    expect(store.polls).toBe(2);
  });

  it('ends a batch after maxBatchMs even when the page is not done', async () => {
    let clock = 0;
    const store = new MemoryJobStore({});
    const outcome = await runBatchWalk(
      walk(store, {
        batchSize: 100,
        concurrency: 1,
        maxBatchMs: 25,
        now: () => clock,
        processItem: async (_k, tally) => {
          clock += 10;
          tally.count += 1;
        },
      }),
    );
    expect(outcome).toEqual({ kind: 'completed' });
    expect(store.checkpoints.map((c) => c.deltaCount)).toEqual([3, 3, 3, 1]);
  });

  it('treats an empty stored cursor as a fresh start', async () => {
    const store = new MemoryJobStore({}, new Uint8Array(0));
    await runBatchWalk(walk(store));
    expect(store.stats['count']).toBe(10);
  });

  it('returns paused with an empty cursor when the signal fired before anything was done', async () => {
    const controller = new AbortController();
    controller.abort();
    const outcome = await runBatchWalk(walk(new MemoryJobStore({}), { signal: controller.signal }));
    expect(outcome).toEqual({ kind: 'paused', cursor: new Uint8Array(0) });
  });

  it('turns an unexpected throw into failed, naming the last checkpointed key; nothing of the batch is checkpointed', async () => {
    const store = new MemoryJobStore({});
    const outcome = await runBatchWalk(
      walk(store, {
        processItem: async (k, tally) => {
          if (k === keys[6]) throw new Error('index corrupted');
          tally.count += 1;
        },
      }),
    );
    expect(outcome).toEqual({
      kind: 'failed',
      message: `test_walk failed after blob hash ${keys[3]}: index corrupted`,
    });
    expect(store.checkpoints).toHaveLength(1);
  });

  it('waits throttle_ms between batches', async () => {
    const store = new MemoryJobStore({});
    const started = performance.now();
    await runBatchWalk(walk(store, { throttleMs: 40 }));
    expect(performance.now() - started).toBeGreaterThanOrEqual(75);
  });
});

describe('processPrefix', () => {
  it('runs at most `concurrency` items at once and reports the finished prefix when told to stop', async () => {
    let inFlight = 0;
    let peak = 0;
    const done: number[] = [];
    const count = await processPrefix(
      [0, 1, 2, 3, 4, 5, 6, 7],
      3,
      async (n) => {
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        await new Promise((r) => setTimeout(r, 5 + (n % 3)));
        inFlight -= 1;
        done.push(n);
      },
      (index) => index >= 5,
    );
    expect(peak).toBe(3);
    expect(count).toBe(5);
    expect(done.sort()).toEqual([0, 1, 2, 3, 4]);
  });
});

describe('cursor codecs', () => {
  it('round-trip hashes and UUIDs and refuse foreign cursors', () => {
    const hash = 'ab'.repeat(32);
    expect(hashCursor.decode(hashCursor.encode(hash))).toBe(hash);
    const id = '0190a000-0000-7000-8000-00000000abcd';
    expect(uuidCursor.encode(id)).toHaveLength(16);
    expect(uuidCursor.decode(uuidCursor.encode(id.toUpperCase()))).toBe(id);
    expect(() => hashCursor.decode(new Uint8Array(16))).toThrow(/32 bytes, got 16/);
    expect(() => uuidCursor.decode(new Uint8Array(32))).toThrow(/16 bytes, got 32/);
    expect(() => hashCursor.encode('xyz')).toThrow(/64 lowercase hex/);
  });
});
