/**
 * How bad a finding is, so the admin UI can order results and operators can
 * dismiss the low-impact ones without hiding real risk.
 *
 * | Severity | Meaning | Examples |
 * |---|---|---|
 * | `DataLoss` | user-visible impact (a GET fails, user bytes are gone) | a live file whose blob is missing |
 * | `Reclaimable` | disk waste, no user impact | an orphan blob in storage |
 * | `Regenerable` | heals on the next request | a missing server-generated thumbnail |
 * | `Drift` | accounting mismatch, no user impact | `drives.used_bytes` against `SUM(size)` |
 *
 * Rule of thumb: if a human user notices, it is `DataLoss`; if only the disk
 * accountant notices, `Reclaimable` or `Drift`; if the next automatic
 * regeneration fixes it, `Regenerable`.
 */
export type Severity = 'DataLoss' | 'Reclaimable' | 'Regenerable' | 'Drift';

/** Every severity, worst first: the triage order. */
export const SEVERITIES: readonly Severity[] = ['DataLoss', 'Reclaimable', 'Regenerable', 'Drift'];
