import type {
  BatchWrites,
  CheckpointProgress,
  JobStore,
  RunFacts,
  RunOptions,
  RunStatus,
} from '@oxicloud/recoverable';
import type { CheckStore } from './consistency-check.js';
import type { FindingBatch } from './finding-batch.js';
import { assertDeclaredFinding, type FindingKind } from './finding-kind.js';
import type { Inconsistency } from './inconsistency.js';

/**
 * Composes the engine's {@link JobStore} and a {@link FindingBatch} into the
 * {@link CheckStore} a check runs against: findings are staged, and each
 * checkpoint writes the staged findings in its own transaction (the batch's
 * own writes), then logs them once committed. With `declared`, a finding
 * whose kind the job does not declare, or with another severity, throws
 * `UNDECLARED_FINDING` instead of being staged.
 */
export function checkStore(
  jobStore: JobStore,
  findings: FindingBatch,
  declared?: { readonly job: string; readonly declared: ReadonlyMap<string, FindingKind> },
): CheckStore {
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
    get options(): RunOptions {
      return jobStore.options;
    },
    get facts(): RunFacts {
      return jobStore.facts;
    },
    get connectionRetryMs(): number | undefined {
      return jobStore.connectionRetryMs;
    },
    status: (): Promise<RunStatus> => jobStore.status(),
    loadCursor: (): Promise<Uint8Array | null> => jobStore.loadCursor(),
    async checkpoint(
      cursor: Uint8Array,
      deltaCount: number,
      progress?: CheckpointProgress,
      writes?: BatchWrites,
    ): Promise<void> {
      if (!findings.pending) return jobStore.checkpoint(cursor, deltaCount, progress, writes);
      const own = writes;
      await jobStore.checkpoint(cursor, deltaCount, progress, async (tx) => {
        const a = (await own?.(tx)) ?? {};
        const b = (await findings.writes(tx)) ?? {};
        const counters = { ...a.counters };
        for (const [k, v] of Object.entries(b.counters ?? {})) counters[k] = (counters[k] ?? 0) + v;
        return { count: (a.count ?? 0) + (b.count ?? 0), counters };
      });
      findings.committed();
    },
    recordFinding(finding: Inconsistency, options?: { readonly countIfNew?: string }): void {
      if (declared !== undefined) assertDeclaredFinding(declared.job, declared.declared, finding);
      findings.recordFinding(finding, options);
    },
    dropFinding: (kind: string, resourceId: string): void => findings.dropFinding(kind, resourceId),
  };
}
