import { describe, expect, it } from 'vitest';
import {
  type BatchWrites,
  batchParamsSchema,
  type CheckpointProgress,
  decodePhaseCursor,
  encodePhaseCursor,
  hashCursor,
  type ItemWalk,
  itemBatch,
  type JobStore,
  parseParams,
  processPrefix,
  RecoverableError,
  type RunFacts,
  type RunOptions,
  type RunStatus,
  type RunTransaction,
  runBatches,
  scanBatch,
  serialCursor,
  uuidCursor,
} from '../src/index.js';

const hex = (b: Uint8Array | null) => (b === null ? null : Buffer.from(b).toString('hex'));

/** A JobStore over memory; its facts are live so a test can resume by running again. */
class MemoryJobStore implements JobStore {
  readonly runId = '00000000-0000-7000-8000-000000000001';
  readonly startedAt = new Date('2026-01-01T00:00:00Z');
  readonly params = {};
  readonly options: RunOptions = { force: false, deep: false };
  readonly checkpoints: Array<{ cursor: Uint8Array; deltaCount: number; progress?: CheckpointProgress }> = [];
  readonly stats: Record<string, number> = {};
  statuses: RunStatus[] = ['Running'];
  polls = 0;
  connectionRetryMs: number | undefined = undefined;
  /** Throws this from the next checkpoint after running its writes, applying nothing (a rolled-back transaction). */
  failNextCheckpoint: Error | undefined = undefined;
  constructor(public cursor: Uint8Array | null = null) {}
  get facts(): RunFacts {
    return { attempt: 1, attemptStartedAt: this.startedAt, cursor: this.cursor, counters: this.stats };
  }
  async status(): Promise<RunStatus> {
    return this.statuses[Math.min(this.polls++, this.statuses.length - 1)] ?? 'Running';
  }
  async loadCursor() {
    return this.cursor;
  }
  async checkpoint(
    cursor: Uint8Array,
    deltaCount: number,
    progress?: CheckpointProgress,
    writes?: BatchWrites,
  ) {
    const added = await writes?.({} as RunTransaction);
    const failure = this.failNextCheckpoint;
    this.failNextCheckpoint = undefined;
    if (failure) throw failure;
    const counters = { ...progress?.counters };
    for (const [k, v] of Object.entries(added?.counters ?? {})) counters[k] = (counters[k] ?? 0) + v;
    deltaCount += added?.count ?? 0;
    this.checkpoints.push({ cursor, deltaCount, progress: { ...progress, counters } });
    this.cursor = cursor;
    this.stats['count'] = (this.stats['count'] ?? 0) + deltaCount;
    for (const [k, v] of Object.entries(counters)) this.stats[k] = (this.stats[k] ?? 0) + v;
  }
}

const keys = Array.from({ length: 10 }, (_, i) => (i + 1).toString(16).padStart(64, '0'));

function items(overrides: Partial<ItemWalk<string>> = {}): ItemWalk<string> {
  return {
    codec: hashCursor,
    keyOf: (k) => k,
    fetchPage: async (after, limit) => keys.filter((k) => after === null || k > after).slice(0, limit),
    processItem: async (_k, tally) => {
      tally.count += 1;
      tally.add('seen');
    },
    counterNames: ['seen', 'other'],
    concurrency: 2,
    ...overrides,
  };
}

const never = new AbortController().signal;

describe('runBatches over an item walk', () => {
  it('checkpoints after each page with the last key, reporting every counter, and completes on a short page', async () => {
    const store = new MemoryJobStore();
    const outcome = await runBatches({
      name: 'test_walk',
      store,
      signal: never,
      batchSize: 4,
      batch: itemBatch(items()),
    });
    expect(outcome).toEqual({ kind: 'completed' });
    expect(store.checkpoints.map((c) => [hex(c.cursor), c.deltaCount, c.progress])).toEqual([
      [keys[3], 4, { scanned: 4, counters: { seen: 4, other: 0 } }],
      [keys[7], 4, { scanned: 4, counters: { seen: 4, other: 0 } }],
      [keys[9], 2, { scanned: 2, counters: { seen: 2, other: 0 } }],
    ]);
    expect(store.polls).toBe(2);
  });

  it('ends a batch at the deadline even when the page is not done, and halves the next batch', async () => {
    const store = new MemoryJobStore();
    const outcome = await runBatches({
      name: 'test_walk',
      store,
      signal: never,
      batchSize: 100,
      maxBatchMs: 25,
      batch: itemBatch(
        items({
          concurrency: 1,
          processItem: async (_k, tally) => {
            await new Promise((r) => setTimeout(r, 10));
            tally.count += 1;
          },
        }),
      ),
    });
    expect(outcome).toEqual({ kind: 'completed' });
    expect(store.checkpoints.length).toBeGreaterThan(1);
    expect(store.stats['count']).toBe(10);
  });

  it('treats an empty stored cursor as a fresh start', async () => {
    const store = new MemoryJobStore(new Uint8Array(0));
    await runBatches({ name: 'w', store, signal: never, batch: itemBatch(items()) });
    expect(store.stats['count']).toBe(10);
  });

  it('returns paused with the empty cursor when the signal fired before anything was done', async () => {
    const controller = new AbortController();
    controller.abort();
    const outcome = await runBatches({
      name: 'w',
      store: new MemoryJobStore(),
      signal: controller.signal,
      emptyCursor: Uint8Array.of(2),
      batch: itemBatch(items()),
    });
    expect(outcome).toEqual({ kind: 'paused', cursor: Uint8Array.of(2) });
  });

  it('turns an unexpected throw into failed, naming the last checkpointed key; nothing of the batch is checkpointed', async () => {
    const store = new MemoryJobStore();
    const outcome = await runBatches({
      name: 'test_walk',
      store,
      signal: never,
      batchSize: 4,
      describeCursor: (c) => `after blob hash ${hashCursor.decode(c)}`,
      batch: itemBatch(
        items({
          processItem: async (k, tally) => {
            if (k === keys[6]) throw new Error('index corrupted');
            tally.count += 1;
          },
        }),
      ),
    });
    expect(outcome).toEqual({
      kind: 'failed',
      message: `test_walk: batch after blob hash ${keys[3]} failed: index corrupted`,
    });
    expect(store.checkpoints).toHaveLength(1);
  });

  it('waits throttle_ms between batches', async () => {
    const started = performance.now();
    await runBatches({
      name: 'w',
      store: new MemoryJobStore(),
      signal: never,
      batchSize: 4,
      throttleMs: 40,
      batch: itemBatch(items()),
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(75);
  });
});

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

describe('runBatches through a database outage', () => {
  it('retries a batch whose fetch lost the connection, and completes with every item counted once', async () => {
    const store = new MemoryJobStore();
    let fetches = 0;
    const outcome = await runBatches({
      name: 'test_walk',
      store,
      signal: never,
      batchSize: 4,
      batch: itemBatch(
        items({
          fetchPage: async (after, limit) => {
            fetches++;
            if (fetches === 2 || fetches === 3) throw refused();
            return keys.filter((k) => after === null || k > after).slice(0, limit);
          },
        }),
      ),
    });
    expect(outcome).toEqual({ kind: 'completed' });
    expect(store.stats['count']).toBe(10);
    expect(store.checkpoints.map((c) => hex(c.cursor))).toEqual([keys[3], keys[7], keys[9]]);
  });

  it('replays a batch whose checkpoint transaction lost the connection: its writes count once', async () => {
    const store = new MemoryJobStore();
    let checkpointsTried = 0;
    const writes: BatchWrites = async () => ({ count: 1, counters: { written: 1 } });
    const outcome = await runBatches({
      name: 'test_scan',
      store,
      signal: never,
      batchSize: 5,
      batch: async (cursor) => {
        const at = cursor === null ? 0 : (cursor[0] as number);
        if (++checkpointsTried === 2) store.failNextCheckpoint = refused();
        return { cursor: Uint8Array.of(at + 5), done: at + 5 >= 15, scanned: 5, writes };
      },
    });
    expect(outcome).toEqual({ kind: 'completed' });
    expect(store.checkpoints.map((c) => c.cursor[0])).toEqual([5, 10, 15]);
    expect(store.stats['count']).toBe(3);
    expect(store.stats['written']).toBe(3);
  });

  it('past connectionRetryMs it pauses at the last checkpoint with "database unreachable", never failed', async () => {
    const store = new MemoryJobStore();
    store.connectionRetryMs = 100;
    let fetches = 0;
    const outcome = await runBatches({
      name: 'test_walk',
      store,
      signal: never,
      batchSize: 4,
      batch: itemBatch(
        items({
          fetchPage: async (after, limit) => {
            if (++fetches > 1) throw refused();
            return keys.filter((k) => after === null || k > after).slice(0, limit);
          },
        }),
      ),
    });
    expect(outcome).toMatchObject({ kind: 'paused', reason: 'database unreachable' });
    expect(hex((outcome as { cursor: Uint8Array }).cursor)).toBe(keys[3]);
  });

  it('any other error still fails the run', async () => {
    const outcome = await runBatches({
      name: 'test_walk',
      store: new MemoryJobStore(),
      signal: never,
      batch: async () => {
        throw Object.assign(new Error('syntax error'), { code: '42601' });
      },
    });
    expect(outcome).toMatchObject({ kind: 'failed' });
  });
});

describe('runBatches over a scan', () => {
  const scan = (total: number) =>
    scanBatch<number>(
      async (cursor, limit) => {
        const from = cursor === null ? 0 : cursor[0]!;
        const to = Math.min(total, from + limit);
        return {
          scanned: to - from,
          items: to - from > 0 ? [from] : [],
          cursor: Uint8Array.of(to),
          done: to >= total,
        };
      },
      async () => undefined,
    );

  it('returns paused with the cursor on CancelRequested, and a resume finishes from it', async () => {
    const store = new MemoryJobStore();
    store.statuses = ['CancelRequested'];
    const first = await runBatches({ name: 's', store, signal: never, batchSize: 3, batch: scan(9) });
    expect(first).toEqual({ kind: 'paused', cursor: Uint8Array.of(3) });
    store.statuses = ['Running'];
    expect(await runBatches({ name: 's', store, signal: never, batchSize: 3, batch: scan(9) })).toEqual({
      kind: 'completed',
    });
    expect(store.checkpoints.map((c) => c.cursor[0])).toEqual([3, 6, 9]);
  });

  it("runs the batch's own writes with its checkpoint and adds what they return", async () => {
    const store = new MemoryJobStore();
    const seen: unknown[] = [];
    let committed = 0;
    const outcome = await runBatches({
      name: 's',
      store,
      signal: never,
      batch: async () => ({
        cursor: Uint8Array.of(1),
        done: true,
        scanned: 5,
        writes: async (tx) => {
          seen.push(tx);
          return { count: 2, counters: { findings: 2 } };
        },
        committed: () => {
          committed += 1;
        },
      }),
    });
    expect(outcome).toEqual({ kind: 'completed' });
    expect(seen).toHaveLength(1);
    expect(committed).toBe(1);
    expect(store.stats).toMatchObject({ count: 2, findings: 2 });
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

describe('cursor codecs and phase cursors', () => {
  it('round-trip hashes and UUIDs (byte order = key order) and refuse foreign cursors', () => {
    const hash = 'ab'.repeat(32);
    expect(hashCursor.decode(hashCursor.encode(hash))).toBe(hash);
    const id = '0190a000-0000-7000-8000-00000000abcd';
    expect(uuidCursor.encode(id)).toHaveLength(16);
    expect(uuidCursor.decode(uuidCursor.encode(id.toUpperCase()))).toBe(id);
    expect(() => hashCursor.decode(new Uint8Array(16))).toThrow(/32 bytes, got 16/);
    expect(() => uuidCursor.decode(new Uint8Array(32))).toThrow(/16 bytes, got 32/);
    expect(() => hashCursor.encode('ABC')).toThrow(RecoverableError);
    expect(() => hashCursor.encode('xyz')).toThrow(/64 lowercase hex/);
  });

  it('serialCursor: 8 big-endian bytes, byte order = numeric order, only whole numbers up to 2^63 - 1', () => {
    const keys = ['0', '9', '10', '255', '256', '9007199254740993', '9223372036854775807'];
    for (const k of keys) expect(serialCursor.decode(serialCursor.encode(k))).toBe(k);
    const hexes = keys.map((k) => hex(serialCursor.encode(k)) as string);
    expect([...hexes].sort()).toEqual(hexes);
    for (const bad of ['-1', '1.5', '01', 'x', '9223372036854775808']) {
      expect(() => serialCursor.encode(bad), bad).toThrow(/not a serial id/);
    }
    expect(() => serialCursor.decode(new Uint8Array(4))).toThrow(/8 bytes, got 4/);
  });

  it('prepend a phase byte, and refuse unknown phases, wrong key lengths and empty cursors', () => {
    const c = encodePhaseCursor(2, Uint8Array.of(1, 2), Uint8Array.of(3));
    expect([...c]).toEqual([2, 1, 2, 3]);
    expect(decodePhaseCursor(encodePhaseCursor(1), { 1: 16 }).key).toHaveLength(0);
    expect(() => decodePhaseCursor(c, { 1: 3 })).toThrow(/phase 2 is unknown/);
    expect(() => decodePhaseCursor(c, { 2: 16 })).toThrow(/must be empty or 16 bytes, got 3/);
    expect(() => decodePhaseCursor(new Uint8Array())).toThrow(/empty cursor/);
    expect(() => encodePhaseCursor(256)).toThrow(/0\.\.255/);
  });
});

describe('batch params', () => {
  it('accept integers in range, and name each bad field with what is allowed', () => {
    expect(parseParams(batchParamsSchema, { batch_size: 500, throttle_ms: 0 })).toEqual({
      ok: true,
      params: { batch_size: 500, throttle_ms: 0 },
    });
    const bad = parseParams(batchParamsSchema, { batch_size: 0, throttle_ms: 60_001 });
    expect(bad).toEqual({
      ok: false,
      message:
        'batch_size: expected >=1 (1..10000), got 0; throttle_ms: expected <=60000 (0..60000), got 60001',
    });
    expect(parseParams(batchParamsSchema, { batch_size: 1.5 }).ok).toBe(false);
    expect(parseParams(batchParamsSchema, { batch_size: 'text' })).toMatchObject({
      ok: false,
      message: /number/,
    });
  });
});
