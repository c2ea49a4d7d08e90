import type { CheckpointProgress, RunStatus } from '@oxicloud/recoverable';
import type { CheckStore, Inconsistency } from '../src/index.js';

/** An in-memory CheckStore for unit tests of the helpers (the Postgres one is tested on real Postgres). */
export class MemoryCheckStore implements CheckStore {
  readonly runId = '00000000-0000-7000-8000-000000000001';
  readonly startedAt = new Date('2026-01-01T12:00:00Z');
  params: Record<string, unknown> = {};
  connectionRetryMs: number | undefined = undefined;
  statusValue: RunStatus = 'Running';
  cursor: Uint8Array | null = null;
  count = 0;
  scanned = 0;
  counters: Record<string, number> = {};
  checkpoints: Uint8Array[] = [];
  findings = new Map<string, Inconsistency>();
  /** Called after every checkpoint (a test can flip the status here). */
  onCheckpoint: (n: number) => void = () => undefined;

  async status(): Promise<RunStatus> {
    return this.statusValue;
  }
  async loadCursor(): Promise<Uint8Array | null> {
    return this.cursor;
  }
  async checkpoint(cursor: Uint8Array, deltaCount: number, progress?: CheckpointProgress): Promise<void> {
    this.cursor = cursor;
    this.checkpoints.push(cursor);
    this.count += deltaCount;
    this.scanned += progress?.scanned ?? deltaCount;
    for (const [k, v] of Object.entries(progress?.counters ?? {}))
      this.counters[k] = (this.counters[k] ?? 0) + v;
    this.onCheckpoint(this.checkpoints.length);
  }
  async recordFinding(finding: Inconsistency): Promise<boolean> {
    const key = `${finding.kind}/${finding.resourceId}`;
    const isNew = !this.findings.has(key);
    this.findings.set(key, finding);
    return isNew;
  }
  async dropFinding(kind: string, resourceId: string): Promise<boolean> {
    return this.findings.delete(`${kind}/${resourceId}`);
  }
}
