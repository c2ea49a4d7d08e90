import type {
  BatchWrites,
  CheckpointProgress,
  JobStore,
  RunFacts,
  RunOptions,
  RunStatus,
  RunTransaction,
} from '@oxicloud/recoverable';
import type { FindingKey, FindingWriteResult, FindingWriter, Inconsistency } from '../src/index.js';

/**
 * An in-memory JobStore and FindingWriter for unit tests of the helpers (the
 * Postgres ones are tested on real Postgres). A checkpoint runs the batch's
 * own writes first, as the real one does inside its transaction.
 */
export class MemoryCheckStore implements JobStore, FindingWriter {
  readonly runId = '00000000-0000-7000-8000-000000000001';
  readonly startedAt = new Date('2026-01-01T12:00:00Z');
  params: Record<string, unknown> = {};
  options: RunOptions = { force: false, deep: false };
  connectionRetryMs: number | undefined = undefined;
  statusValue: RunStatus = 'Running';
  cursor: Uint8Array | null = null;
  count = 0;
  scanned = 0;
  counters: Record<string, number> = {};
  checkpoints: Uint8Array[] = [];
  findings = new Map<string, Inconsistency>();

  get facts(): RunFacts {
    return { attempt: 1, attemptStartedAt: this.startedAt, cursor: this.cursor, counters: this.counters };
  }
  async status(): Promise<RunStatus> {
    return this.statusValue;
  }
  async loadCursor(): Promise<Uint8Array | null> {
    return this.cursor;
  }
  async checkpoint(
    cursor: Uint8Array,
    deltaCount: number,
    progress?: CheckpointProgress,
    writes?: BatchWrites,
  ): Promise<void> {
    const added = await writes?.({} as RunTransaction);
    this.cursor = cursor;
    this.checkpoints.push(cursor);
    this.count += deltaCount + (added?.count ?? 0);
    this.scanned += progress?.scanned ?? deltaCount;
    for (const counters of [progress?.counters, added?.counters]) {
      for (const [k, v] of Object.entries(counters ?? {})) this.counters[k] = (this.counters[k] ?? 0) + v;
    }
  }
  async writeFindings(
    _tx: RunTransaction,
    _runId: string,
    records: readonly Inconsistency[],
    drops: readonly FindingKey[],
  ): Promise<FindingWriteResult> {
    const recordedNew = records.map((f) => {
      const key = `${f.kind}/${f.resourceId}`;
      const isNew = !this.findings.has(key);
      this.findings.set(key, f);
      return isNew;
    });
    return { recordedNew, dropped: drops.map((d) => this.findings.delete(`${d.kind}/${d.resourceId}`)) };
  }
}
