import type { Logger } from '@oxicloud/scheduler';
import { describe, expect, it } from 'vitest';
import {
  type ConsistencyCheck,
  type ConsistencyError,
  ConsistencyRegistry,
  checkJob,
  FindingBatch,
  FindingKindCatalog,
  type Inconsistency,
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

/** Runs one batch's staged writes the way a checkpoint does. */
async function commit(store: MemoryCheckStore, batch: FindingBatch, cursor = Uint8Array.of(1)) {
  await store.checkpoint(cursor, 0, { scanned: 0 }, batch.writes);
  batch.committed();
}

describe('twoPass', () => {
  it('stages what Pass 2 confirms and drops what transitioned; the checkpoint counts only new findings', async () => {
    const store = new MemoryCheckStore();
    const batch = (): FindingBatch =>
      new FindingBatch({ runId: store.runId, checkName: 'demo', writer: store, tally: true });
    const earlier = batch();
    earlier.recordFinding(finding('b')); // recorded by an earlier batch
    await commit(store, earlier);
    const b = batch();
    const confirmed = await twoPass(
      b,
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
    expect(confirmed).toBe(2);
    expect(store.findings.size).toBe(1); // nothing written before the checkpoint
    await commit(store, b);
    expect([...store.findings.keys()]).toEqual(['thing_missing/c', 'thing_missing/a']);
    expect(store.count).toBe(3);
    expect(store.counters).toEqual({ findings: 3, findings_thing_missing: 3, findings_dropped: 1 });
    // The same finding in a later batch records nothing new.
    const again = batch();
    await twoPass(again, [{ kind: 'thing_missing', resourceId: 'a' }], async () => [finding('a')]);
    await commit(store, again);
    expect(store.count).toBe(3);
  });

  it('does not call Pass 2 for no candidates', async () => {
    const b = new FindingBatch({
      runId: 'r',
      checkName: 'demo',
      writer: new MemoryCheckStore(),
      tally: true,
    });
    expect(await twoPass(b, [], async () => expect.unreachable())).toBe(0);
    expect(b.pending).toBe(false);
  });
});

describe('FindingBatch', () => {
  it('after the commit, logs a new finding once (an audit record with its detail), a repeat once as replayed', async () => {
    const logger = recordingLogger();
    const store = new MemoryCheckStore();
    const batch = new FindingBatch({
      runId: 'r1',
      checkName: 'files_consistency',
      writer: store,
      logger,
      tally: true,
    });
    batch.recordFinding(finding('h1', 'missing_blob'));
    await store.checkpoint(Uint8Array.of(1), 0, {}, batch.writes);
    expect(logger.lines).toEqual([]);
    batch.committed();
    // One finding, one line.
    expect(logger.lines).toHaveLength(1);
    batch.recordFinding(finding('h1', 'missing_blob'));
    await commit(store, batch);
    batch.dropFinding('missing_blob', 'h1');
    await commit(store, batch);
    expect(logger.lines.map((l) => [l['target'], l['event']])).toEqual([
      ['audit', 'consistency.files_consistency.finding'],
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
      detail: finding('h1', 'missing_blob').detail,
      msg: 'files_consistency: DataLoss missing_blob on h1',
    });
    expect(logger.lines[1]).toMatchObject({
      replayed: true,
      msg: 'files_consistency: DataLoss missing_blob on h1 (replayed)',
    });
  });

  it('without tally adds only the countIfNew counters', async () => {
    const store = new MemoryCheckStore();
    const batch = new FindingBatch({
      runId: 'r1',
      checkName: 'storage_migration',
      writer: store,
      tally: false,
    });
    batch.recordFinding(finding('h1', 'migration_failed'), { countIfNew: 'failed_blobs' });
    await commit(store, batch);
    batch.recordFinding(finding('h1', 'migration_failed'), { countIfNew: 'failed_blobs' });
    await commit(store, batch);
    expect(store.count).toBe(0);
    expect(store.counters).toEqual({ failed_blobs: 1 });
  });
});

describe('checkJob', () => {
  it('hands the check its options (run options and params) and a store whose findings commit with the checkpoint', async () => {
    const store = new MemoryCheckStore();
    store.params = { batch_size: 10 };
    store.options = { force: true, deep: false };
    const logger = recordingLogger();
    let seen: unknown;
    const job = checkJob(
      demoCheck('demo_consistency', async (checkStore, options) => {
        seen = options;
        expect(checkStore.runId).toBe(store.runId);
        expect(checkStore.startedAt).toBe(store.startedAt);
        checkStore.recordFinding(finding('x'));
        await checkStore.checkpoint(Uint8Array.of(9), 0, { scanned: 1 });
        return { kind: 'completed' };
      }),
      { findings: store, logger },
    );
    expect(job.name).toBe('demo_consistency');
    expect(job.findingKinds).toEqual(DEMO_KINDS);
    // The check's declaration is the job's capabilities: what the catalog, API, CLI and batch read.
    expect(job.capabilities).toEqual({
      check: { order: 1, countMeaning: 'demo findings' },
      deep: false,
      alerts: ['consistency_findings'],
    });
    expect(job.validateParams({ batch_size: 0 }).ok).toBe(false);
    const outcome = await job.runResumable(store, new AbortController().signal);
    expect(outcome).toEqual({ kind: 'completed' });
    expect(seen).toEqual({ force: true, deep: false, batchSize: 10 });
    expect(store.findings.size).toBe(1);
    expect(store.count).toBe(1);
    expect(logger.lines.some((l) => l['target'] === 'audit')).toBe(true);
  });

  it('fails the run on invalid stored params and on a throwing check', async () => {
    const store = new MemoryCheckStore();
    store.params = { throttle_ms: -1 };
    const job = checkJob(demoCheck('demo_consistency'), { findings: store });
    expect(await job.runResumable(store, new AbortController().signal)).toEqual({
      kind: 'failed',
      message: 'invalid consistency check params: throttle_ms: expected >=0 (0..60000), got -1',
    });
    store.params = {};
    const throwing = checkJob(
      demoCheck('demo_consistency', async () => {
        throw new Error('boom');
      }),
      { findings: store },
    );
    expect(await throwing.runResumable(store, new AbortController().signal)).toEqual({
      kind: 'failed',
      message: 'demo_consistency: boom',
    });
  });

  it('fails the run on a finding its declaration does not have: an unknown kind, another severity', async () => {
    const recording = (f: Inconsistency) =>
      checkJob(
        demoCheck('demo_consistency', async (checkStore) => {
          checkStore.recordFinding(f);
          await checkStore.checkpoint(Uint8Array.of(1), 0);
          return { kind: 'completed' };
        }),
        { findings: new MemoryCheckStore() },
      );
    const store = new MemoryCheckStore();
    expect(
      await recording(finding('x', 'thing_gone')).runResumable(store, new AbortController().signal),
    ).toEqual({
      kind: 'failed',
      message:
        "demo_consistency: finding kind thing_gone is not declared by demo_consistency (declared: thing_missing); add it to the check's kinds",
    });
    expect(
      await recording({ ...finding('x'), severity: 'Drift' }).runResumable(
        store,
        new AbortController().signal,
      ),
    ).toEqual({
      kind: 'failed',
      message: 'demo_consistency: demo_consistency recorded thing_missing as Drift, but declares it DataLoss',
    });
    expect(store.findings.size).toBe(0);
  });

  it('refuses a check whose kinds are incomplete, naming what is wrong', () => {
    const refused = (kinds: unknown) => {
      try {
        checkJob({ ...demoCheck('demo_consistency'), kinds } as ConsistencyCheck, {
          findings: new MemoryCheckStore(),
        });
      } catch (e) {
        expect((e as ConsistencyError).code).toBe('INVALID_DECLARATION');
        return (e as Error).message;
      }
      return expect.unreachable();
    };
    expect(refused(undefined)).toMatch(/demo_consistency declares no finding kinds/);
    expect(refused([{ kind: 'Bad-Name', severity: 'Drift', meaning: 'x' }])).toMatch(/snake_case/);
    expect(refused([...DEMO_KINDS, ...DEMO_KINDS])).toMatch(/thing_missing twice/);
    expect(refused([{ kind: 'a', severity: 'Fatal', meaning: 'x' }])).toMatch(
      /a with severity "Fatal"; allowed: DataLoss, Reclaimable, Regenerable, Drift/,
    );
    expect(refused([{ kind: 'a', severity: 'Drift', meaning: ' ' }])).toMatch(/a without a meaning/);
    expect(refused([{ kind: 'a', severity: 'Drift', meaning: 'x', magnitude: 'mb' }])).toMatch(
      /allowed: bytes, count or null/,
    );
  });
});

describe('FindingKindCatalog', () => {
  it('collects the declared kinds of each job as it is registered, and refuses a name twice', () => {
    const kinds = new FindingKindCatalog();
    const job = checkJob(demoCheck('demo_consistency'), { findings: new MemoryCheckStore() });
    expect(kinds.add(job)).toBe(job);
    kinds.add({
      name: 'demo_migration',
      findingKinds: [{ kind: 'copy_failed', severity: 'DataLoss', meaning: 'x' }],
    });
    expect(kinds.jobs()).toEqual(['demo_consistency', 'demo_migration']);
    expect(kinds.kindsOf('demo_consistency')).toEqual(DEMO_KINDS);
    expect(kinds.kindsOf('trash_cleanup')).toEqual([]);
    expect(() => kinds.add(job)).toThrow(/already added/);
    expect(() =>
      kinds.add({ name: 'other', findingKinds: [{ kind: 'x', severity: 'Bad', meaning: 'x' }] } as never),
    ).toThrow(/other declares x with severity "Bad"/);
  });
});

const DEMO_KINDS = [
  { kind: 'thing_missing', severity: 'DataLoss', meaning: 'a demo thing is missing' },
] as const satisfies ConsistencyCheck['kinds'];

function demoCheck(name: string, run?: ConsistencyCheck['runResumable']): ConsistencyCheck {
  return {
    name,
    subsystem: 'demo',
    order: 1,
    countMeaning: 'demo findings',
    kinds: DEMO_KINDS,
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
