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
export type Severity = (typeof SEVERITIES)[number];

/**
 * Every severity, worst first: the triage order. The one list of them: the
 * admin API's `Severity` schema, the CLI's `--severity` choices, the alert
 * template, the page and the findings store's SQL order all read it (import
 * it from `@oxicloud/consistency/severity` where the whole package is too much).
 */
export const SEVERITIES = ['DataLoss', 'Reclaimable', 'Regenerable', 'Drift'] as const;

/** The rank of a severity in {@link SEVERITIES} (0 = worst); an unknown name ranks after all of them. */
export function severityRank(severity: string): number {
  const index = (SEVERITIES as readonly string[]).indexOf(severity);
  return index === -1 ? SEVERITIES.length : index;
}

/** `true` when `value` is one of {@link SEVERITIES}. */
export function isSeverity(value: unknown): value is Severity {
  return typeof value === 'string' && (SEVERITIES as readonly string[]).includes(value);
}
