import { type FreshnessTarget, OVERDUE_FACTOR } from './freshness-policy.js';
import type { JobFreshnessRecord } from './job-freshness-store.js';

/** A job held to a cadence, at one instant. */
export interface FreshnessState {
  readonly job: string;
  readonly deep: boolean;
  readonly maxAgeMs: number;
  /** The last success counted for this cadence (deep runs only for the deep one); `null` = never. */
  readonly lastSuccessAt: Date | null;
  readonly firstRegisteredAt: Date;
  /** Last success (else first registration) + 1.5 × the cadence: overdue from then on. */
  readonly dueBy: Date;
  readonly overdue: boolean;
  /** When this overdue episode was mailed (`null` = not yet, or not overdue). */
  readonly alertedAt: Date | null;
}

/**
 * Evaluates every target against what the database records: a job is
 * overdue when its last success (or, never having succeeded, its first
 * registration on this database) is older than 1.5 × its cadence. A target
 * whose job has no row yet is measured from `now` (it is being registered).
 */
export function evaluateFreshness(
  targets: readonly FreshnessTarget[],
  records: readonly JobFreshnessRecord[],
  now: Date,
): FreshnessState[] {
  const byJob = new Map(records.map((r) => [r.job, r]));
  return targets.map((target) => {
    const record = byJob.get(target.job);
    const lastSuccessAt = (target.deep ? record?.lastDeepSuccessAt : record?.lastSuccessAt) ?? null;
    const firstRegisteredAt = record?.firstRegisteredAt ?? now;
    const from = lastSuccessAt ?? firstRegisteredAt;
    const dueBy = new Date(from.getTime() + OVERDUE_FACTOR * target.maxAgeMs);
    const overdue = now.getTime() > dueBy.getTime();
    const alerted = (target.deep ? record?.deepOverdueAlertedAt : record?.overdueAlertedAt) ?? null;
    return {
      job: target.job,
      deep: target.deep,
      maxAgeMs: target.maxAgeMs,
      lastSuccessAt,
      firstRegisteredAt,
      dueBy,
      overdue,
      alertedAt: overdue ? alerted : null,
    };
  });
}
