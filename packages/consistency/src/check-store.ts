import type { CheckpointProgress, JobStore, RunStatus } from '@oxicloud/recoverable';
import type { CheckStore } from './consistency-check.js';
import type { FindingSink } from './finding-sink.js';
import type { Inconsistency } from './inconsistency.js';

/**
 * Composes the engine's {@link JobStore} and a {@link FindingSink} into the
 * {@link CheckStore} a check runs against. Nothing is copied: every call goes
 * to the store or the sink it came from.
 */
export function checkStore(jobStore: JobStore, sink: FindingSink): CheckStore {
  return {
    get runId(): string {
      return jobStore.runId;
    },
    get startedAt(): Date {
      return jobStore.startedAt;
    },
    get params(): Readonly<Record<string, unknown>> {
      return jobStore.params;
    },
    get connectionRetryMs(): number | undefined {
      return jobStore.connectionRetryMs;
    },
    status: (): Promise<RunStatus> => jobStore.status(),
    loadCursor: (): Promise<Uint8Array | null> => jobStore.loadCursor(),
    checkpoint: (cursor: Uint8Array, deltaCount: number, progress?: CheckpointProgress): Promise<void> =>
      jobStore.checkpoint(cursor, deltaCount, progress),
    recordFinding: (finding: Inconsistency): Promise<boolean> => sink.recordFinding(finding),
    dropFinding: (kind: string, resourceId: string): Promise<boolean> => sink.dropFinding(kind, resourceId),
  };
}
