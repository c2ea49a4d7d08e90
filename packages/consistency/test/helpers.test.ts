import type { RunOutcome } from '@oxicloud/recoverable';
import type { Logger } from '@oxicloud/scheduler';
import { describe, expect, it } from 'vitest';
import {
  auditedFindingSink,
  type Batch,
  type ConsistencyCheck,
  type ConsistencyError,
  ConsistencyRegistry,
  checkJob,
  encodePhaseCursor,
  type Inconsistency,
  runBatches,
  type StatefulAdapter,
  twoPass,
} from '../src/index.js';
import { MemoryCheckStore } from './memory-check-store.js';

const finding = (resourceId: string, kind = 'thing_missing'): Inconsistency => ({
  kind,
  severity: 'DataLoss',
  resourceId,
  detail: { resourceId },
});

function recordingLogger(): Logger & { lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const push = (fields: object, msg?: string) => lines.push({ ...fields, msg });
  return { lines, info: push, warn: push, error: push, debug: push };
}

describe('twoPass', () => {
  it('records what Pass 2 confirms, drops what transitioned, and counts only new findings', async () => {
    const store = new MemoryCheckStore();
    await store.recordFinding(finding('b')); // recorded before a resume
    const tally = await twoPass(
      store,
      [
        { kind: 'thing_missing', resourceId: 'a' },
        { kind: 'thing_missing', resourceId: 'b' },
        { kind: 'thing_missing', resourceId: 'c' },
      ],
      async (cs) => {
        expect(cs).toHaveLength(3);
        // 'a' still broken; 'b' healed since; 'c' still broken; 'z' was never a candidate.
        return [finding('c'), finding('a'), finding('z')];
      },
    );
    expect(tally).toEqual({ recorded: 2, dropped: 1, byKind: { thing_missing: 2 } });
    expect([...store.findings.keys()]).toEqual(['thing_missing/c', 'thing_missing/a']);
    // A replay records nothing new.
    const again = await twoPass(store, [{ kind: 'thing_missing', resourceId: 'a' }], async () => [
      finding('a'),
    ]);
    expect(again).toEqual({ recorded: 0, dropped: 0, byKind: {} });
  });

  it('does not call Pass 2 for no candidates', async () => {
    const tally = await twoPass(new MemoryCheckStore(), [], async () => expect.unreachable());
    expect(tally.recorded).toBe(0);
  });
});

/** A space of `n` numbered rows; every row divisible by 10 is an anomaly. */
function numberedSpace(n: number) {
  const fetched: Array<{ after: number; limit: number }> = [];
  const fetchBatch = async (cursor: Uint8Array | null, limit: number): Promise<Batch<number>> => {
    const after = cursor === null ? 0 : (cursor[1] as number) * 256 + (cursor[2] as number);
    fetched.push({ after, limit });
    const rows: number[] = [];
    for (let i = after + 1; i <= Math.min(n, after + limit); i++) rows.push(i);
    const last = rows.at(-1) ?? after;
    return {
      scanned: rows.length,
      items: rows.filter((r) => r % 10 === 0),
      cursor: encodePhaseCursor(0, Uint8Array.of(last >> 8, last & 255)),
      done: last >= n,
    };
  };
  return { fetched, fetchBatch };
}

describe('runBatches', () => {
  const processBatch = (store: MemoryCheckStore) => async (items: readonly number[]) =>
    twoPass(
      store,
      items.map((i) => ({ kind: 'thing_missing', resourceId: String(i) })),
      async (cs) => cs.map((c) => finding(c.resourceId)),
    );

  it('walks every batch, checkpoints each with findings as count and rows as scanned, and completes', async () => {
    const store = new MemoryCheckStore();
    const space = numberedSpace(95);
    const outcome = await runBatches({
      store,
      signal: new AbortController().signal,
      batchSize: 20,
      fetchBatch: space.fetchBatch,
      processBatch: processBatch(store),
    });
    expect(outcome).toEqual({ kind: 'completed' });
    expect(space.fetched.map((f) => f.after)).toEqual([0, 20, 40, 60, 80]);
    expect(store.checkpoints).toHaveLength(5);
    expect(store.scanned).toBe(95);
    expect(store.count).toBe(9);
    expect(store.counters).toEqual({ findings: 9, findings_thing_missing: 9 });
  });

  it('rides out a lost connection (the batch is retried, same findings), and past the bound pauses with "database unreachable"', async () => {
    const refused = () =>
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const store = new MemoryCheckStore();
    const space = numberedSpace(95);
    let calls = 0;
    const outcome = await runBatches({
      store,
      signal: new AbortController().signal,
      batchSize: 20,
      fetchBatch: (cursor, limit) =>
        ++calls === 3 ? Promise.reject(refused()) : space.fetchBatch(cursor, limit),
      processBatch: processBatch(store),
    });
    expect(outcome).toEqual({ kind: 'completed' });
    expect(store.scanned).toBe(95);
    expect(store.count).toBe(9);

    const down = new MemoryCheckStore();
    down.connectionRetryMs = 100;
    let fetched = 0;
    const paused = await runBatches({
      store: down,
      signal: new AbortController().signal,
      batchSize: 20,
      fetchBatch: (cursor, limit) =>
        ++fetched > 2 ? Promise.reject(refused()) : space.fetchBatch(cursor, limit),
      processBatch: processBatch(down),
    });
    expect(paused).toMatchObject({ kind: 'paused', reason: 'database unreachable' });
    expect((paused as { cursor: Uint8Array }).cursor).toEqual(down.checkpoints[1]);
  });

  it('returns paused with the cursor on CancelRequested, and a resume finishes without duplicates', async () => {
    const store = new MemoryCheckStore();
    store.onCheckpoint = (n) => {
      if (n === 2) store.statusValue = 'CancelRequested';
    };
    const space = numberedSpace(95);
    const first = await runBatches({
      store,
      signal: new AbortController().signal,
      batchSize: 20,
      fetchBatch: space.fetchBatch,
      processBatch: processBatch(store),
    });
    expect(first.kind).toBe('paused');
    expect((first as Extract<RunOutcome, { kind: 'paused' }>).cursor).toEqual(
      encodePhaseCursor(0, Uint8Array.of(0, 40)),
    );
    expect(store.scanned).toBe(40);
    store.statusValue = 'Running';
    // Replay the last batch as a crash would: the cursor goes one batch back.
    store.cursor = encodePhaseCursor(0, Uint8Array.of(0, 20));
    const second = await runBatches({
      store,
      signal: new AbortController().signal,
      batchSize: 20,
      fetchBatch: space.fetchBatch,
      processBatch: processBatch(store),
    });
    expect(second.kind).toBe('completed');
    expect(store.findings.size).toBe(9);
    expect(store.count).toBe(9);
  });

  it('returns paused when the shutdown signal fires', async () => {
    const store = new MemoryCheckStore();
    const controller = new AbortController();
    const space = numberedSpace(95);
    const outcome = await runBatches({
      store,
      signal: controller.signal,
      batchSize: 20,
      fetchBatch: async (c, l) => {
        controller.abort();
        return space.fetchBatch(c, l);
      },
      processBatch: processBatch(store),
    });
    expect(outcome.kind).toBe('paused');
    expect(store.checkpoints).toHaveLength(1);
  });

  it('halves a batch that took too long and grows it back', async () => {
    const store = new MemoryCheckStore();
    const space = numberedSpace(200);
    let calls = 0;
    await runBatches({
      store,
      signal: new AbortController().signal,
      batchSize: 40,
      maxBatchMs: 20,
      fetchBatch: async (c, l) => {
        calls++;
        if (calls <= 2) await new Promise((r) => setTimeout(r, 30));
        return space.fetchBatch(c, l);
      },
      processBatch: processBatch(store),
    });
    expect(space.fetched.slice(0, 5).map((f) => f.limit)).toEqual([40, 20, 10, 20, 40]);
  });

  it('sleeps throttle_ms between batches', async () => {
    const store = new MemoryCheckStore();
    const space = numberedSpace(60);
    const t0 = performance.now();
    await runBatches({
      store,
      signal: new AbortController().signal,
      batchSize: 20,
      throttleMs: 40,
      fetchBatch: space.fetchBatch,
      processBatch: processBatch(store),
    });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(75);
  });

  it('turns a throwing batch into failed, without checkpointing it', async () => {
    const store = new MemoryCheckStore();
    const logger = recordingLogger();
    const outcome = await runBatches({
      store,
      signal: new AbortController().signal,
      name: 'demo_consistency',
      logger,
      fetchBatch: async () => {
        throw new Error('connection reset');
      },
      processBatch: processBatch(store),
    });
    expect(outcome).toEqual({
      kind: 'failed',
      message: 'demo_consistency: batch after cursor (start) failed: connection reset',
    });
    expect(store.checkpoints).toHaveLength(0);
    expect(logger.lines[0]).toMatchObject({
      target: 'oxicloud::consistency',
      event: 'consistency.batch_failed',
    });
  });
});

function demoCheck(name: string, run?: ConsistencyCheck['runResumable']): ConsistencyCheck {
  return {
    name,
    subsystem: 'demo',
    graceWindowMs: () => 3_600_000,
    concurrentSafe: () => true,
    runResumable: run ?? (async () => ({ kind: 'completed' })),
  };
}

describe('ConsistencyRegistry', () => {
  it('collects the checks of every adapter and describes itself for the boot line', () => {
    const a = demoCheck('drives_consistency');
    const b = demoCheck('folders_consistency');
    const adapter = (subsystem: string, checks: ConsistencyCheck[]): StatefulAdapter => ({
      subsystem: () => subsystem,
      consistencyChecks: () => checks,
    });
    const registry = new ConsistencyRegistry();
    const usage = adapter('used_bytes', [a]);
    registry
      .register(usage)
      .register(adapter('folder_tree', [b]))
      .register(adapter('cache', []));
    registry.register(usage);
    expect(registry.adapters()).toHaveLength(3);
    expect(registry.allChecks().map((c) => c.name)).toEqual(['drives_consistency', 'folders_consistency']);
    expect(registry.get('folders_consistency')).toBe(b);
    expect(registry.get('nope')).toBeUndefined();
    expect(registry.describe()).toBe('consistency: 3 adapter(s) registered, 2 check(s) available');
    try {
      registry.register(adapter('other', [demoCheck('drives_consistency')]));
      expect.unreachable();
    } catch (e) {
      expect((e as ConsistencyError).code).toBe('DUPLICATE_CHECK');
      expect((e as Error).message).toMatch(/"other" contributes a check named "drives_consistency"/);
    }
  });
});

describe('auditedFindingSink', () => {
  it('double-logs a new finding to audit and oxicloud::consistency, a replay only to the latter', async () => {
    const logger = recordingLogger();
    const store = new MemoryCheckStore();
    const sink = auditedFindingSink(store, { runId: 'r1', checkName: 'files_consistency', logger });
    expect(await sink.recordFinding(finding('h1', 'missing_blob'))).toBe(true);
    expect(await sink.recordFinding(finding('h1', 'missing_blob'))).toBe(false);
    expect(await sink.dropFinding('missing_blob', 'h1')).toBe(true);
    expect(logger.lines.map((l) => [l['target'], l['event']])).toEqual([
      ['audit', 'consistency.files_consistency.finding'],
      ['oxicloud::consistency', 'consistency.files_consistency.finding'],
      ['oxicloud::consistency', 'consistency.files_consistency.finding'],
      ['oxicloud::consistency', 'consistency.files_consistency.finding_dropped'],
    ]);
    expect(logger.lines[0]).toEqual({
      target: 'audit',
      event: 'consistency.files_consistency.finding',
      run_id: 'r1',
      check: 'files_consistency',
      kind: 'missing_blob',
      severity: 'DataLoss',
      resource_id: 'h1',
      msg: 'consistency finding',
    });
    expect(logger.lines[2]).toMatchObject({ replayed: true });
  });
});

describe('checkJob', () => {
  it('hands the check its options from params and a store that writes findings through the sink', async () => {
    const store = new MemoryCheckStore();
    store.params = { force: true, batch_size: 10 };
    const logger = recordingLogger();
    let seen: unknown;
    const job = checkJob(
      demoCheck('demo_consistency', async (checkStore, options) => {
        seen = options;
        expect(checkStore.runId).toBe(store.runId);
        expect(checkStore.startedAt).toBe(store.startedAt);
        await checkStore.recordFinding(finding('x'));
        return { kind: 'completed' };
      }),
      { sinkFactory: () => store, logger },
    );
    expect(job.name).toBe('demo_consistency');
    expect(job.validateParams({ batch_size: 0 }).ok).toBe(false);
    const outcome = await job.runResumable(store, new AbortController().signal);
    expect(outcome).toEqual({ kind: 'completed' });
    expect(seen).toEqual({ force: true, deep: false, batchSize: 10 });
    expect(store.findings.size).toBe(1);
    expect(logger.lines.some((l) => l['target'] === 'audit')).toBe(true);
  });

  it('fails the run on invalid stored params and on a throwing check', async () => {
    const store = new MemoryCheckStore();
    store.params = { throttle_ms: -1 };
    const job = checkJob(demoCheck('demo_consistency'), { sinkFactory: () => store });
    expect(await job.runResumable(store, new AbortController().signal)).toEqual({
      kind: 'failed',
      message: 'invalid consistency check params: throttle_ms must be an integer in 0..60000, got -1',
    });
    store.params = {};
    const throwing = checkJob(
      demoCheck('demo_consistency', async () => {
        throw new Error('boom');
      }),
      { sinkFactory: () => store },
    );
    expect(await throwing.runResumable(store, new AbortController().signal)).toEqual({
      kind: 'failed',
      message: 'demo_consistency: boom',
    });
  });
});
