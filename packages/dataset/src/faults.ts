import type { Severity } from '@oxicloud/consistency/severity';
import { DatasetError } from './errors.js';

/**
 * Every fault the generator can inject, in the order it injects them. Each
 * one is a named, deliberate inconsistency that a later check or job must
 * find; none is injected unless asked for.
 */
export const FAULT_NAMES = [
  'drive_used_bytes_drift',
  'user_used_bytes_drift',
  'live_folder_under_trashed_parent',
  'live_file_under_trashed_folder',
  'wrong_folder_path',
  'wrong_folder_lpath',
  'missing_blob_row',
  'blob_size_mismatch',
  'orphan_blob_on_disk',
  'blob_bytes_missing',
  'expired_grants',
  'old_trash',
  'blob_ref_count_drift',
  'blob_orphaned_at_unset',
  'dangling_grant',
  'lingering_expired_grant',
  'folder_under_other_drive',
  'folder_parent_cycle',
  'file_in_other_drive_folder',
  'file_mime_mismatch',
] as const;

/** One of {@link FAULT_NAMES}. */
export type FaultName = (typeof FAULT_NAMES)[number];

/** The job that must find (or act on) a fault, and the finding kind it records. */
export interface FaultExpectation {
  /** Job name: a consistency check (`files_consistency`, …) or a Part 1 job (`grant_cleanup`, `trash_cleanup`). */
  readonly job: string;
  /**
   * For a consistency check: the finding `kind` it records, one per faulted
   * resource id. For a Part 1 job: what it removes (`expired_grant`,
   * `expired_trash`), one per faulted resource id.
   */
  readonly kind: string;
  /** Severity the finding should carry (consistency checks only). */
  readonly severity?: Severity;
}

/**
 * Which job finds each fault and under which kind. The kinds follow
 * job-registry.md's tenant table (`parent_trashed_mismatch`, `path_mismatch`,
 * `lpath_mismatch`, `parent_folder_trashed`, `missing_blob`,
 * `blob_size_mismatch`); the others are this package's proposal
 * (`drive_used_bytes_drift`, `user_used_bytes_drift`, `orphan_blob`,
 * `missing_blob_bytes`) and must match what the checks record.
 */
export const FAULT_EXPECTATIONS = {
  drive_used_bytes_drift: { job: 'drives_consistency', kind: 'drive_used_bytes_drift', severity: 'Drift' },
  user_used_bytes_drift: { job: 'drives_consistency', kind: 'user_used_bytes_drift', severity: 'Drift' },
  live_folder_under_trashed_parent: {
    job: 'folders_consistency',
    kind: 'parent_trashed_mismatch',
    severity: 'DataLoss',
  },
  live_file_under_trashed_folder: {
    job: 'files_consistency',
    kind: 'parent_folder_trashed',
    severity: 'DataLoss',
  },
  wrong_folder_path: { job: 'folders_consistency', kind: 'path_mismatch', severity: 'Drift' },
  wrong_folder_lpath: { job: 'folders_consistency', kind: 'lpath_mismatch', severity: 'Drift' },
  missing_blob_row: { job: 'files_consistency', kind: 'missing_blob', severity: 'DataLoss' },
  blob_size_mismatch: { job: 'files_consistency', kind: 'blob_size_mismatch', severity: 'Drift' },
  orphan_blob_on_disk: { job: 'storage_consistency', kind: 'orphan_blob', severity: 'Reclaimable' },
  blob_bytes_missing: { job: 'storage_consistency', kind: 'missing_blob_bytes', severity: 'DataLoss' },
  expired_grants: { job: 'grant_cleanup', kind: 'expired_grant' },
  old_trash: { job: 'trash_cleanup', kind: 'expired_trash' },
  blob_ref_count_drift: { job: 'blobs_consistency', kind: 'ref_count_mismatch', severity: 'Drift' },
  blob_orphaned_at_unset: { job: 'blobs_consistency', kind: 'orphaned_at_mismatch', severity: 'Drift' },
  dangling_grant: { job: 'grants_consistency', kind: 'dangling_grant', severity: 'Reclaimable' },
  lingering_expired_grant: { job: 'grants_consistency', kind: 'expired_grant_lingering', severity: 'Drift' },
  folder_under_other_drive: {
    job: 'folders_consistency',
    kind: 'drive_id_parent_mismatch',
    severity: 'DataLoss',
  },
  folder_parent_cycle: { job: 'folders_consistency', kind: 'orphan_root', severity: 'DataLoss' },
  file_in_other_drive_folder: {
    job: 'files_consistency',
    kind: 'drive_id_parent_mismatch',
    severity: 'DataLoss',
  },
  file_mime_mismatch: { job: 'files_consistency', kind: 'mime_mismatch', severity: 'Drift' },
} as const satisfies Record<FaultName, FaultExpectation>;

/** One finding a consistency check must record for a fault. */
export interface ExpectedFinding {
  readonly job: string;
  readonly kind: string;
  readonly severity: 'DataLoss' | 'Reclaimable' | 'Regenerable' | 'Drift';
  readonly resourceId: string;
}

/**
 * Every finding a fault's resources must produce, from its expectation: one
 * per resource id, except `missing_blob`, which is one per blob hash the
 * files were repointed to (`detail.blobHash`). Empty for the faults a Part 1
 * job acts on (`expired_grants`, `old_trash`): those are removals, not findings.
 */
export function expectedFindings(
  fault: FaultName,
  resources: readonly { readonly id: string; readonly detail: Readonly<Record<string, unknown>> }[],
): ExpectedFinding[] {
  const expect: FaultExpectation = FAULT_EXPECTATIONS[fault];
  // A finding has a severity; a removal by a Part 1 job has none (no job-name test).
  if (expect.severity === undefined) return [];
  const { job, kind, severity } = expect;
  const ids = resources.map((r) => (kind === 'missing_blob' ? String(r.detail['blobHash']) : r.id));
  return [...new Set(ids)].map((resourceId) => ({ job, kind, severity, resourceId }));
}

/** Whether `value` is one of {@link FAULT_NAMES}. */
export function isFaultName(value: string): value is FaultName {
  return (FAULT_NAMES as readonly string[]).includes(value);
}

/**
 * Parses a comma-separated fault list (the `--faults` flag): `"all"` gives
 * every fault, `""` / `"none"` gives none; names may repeat (kept once) and
 * come back in {@link FAULT_NAMES} order.
 *
 * @throws DatasetError `INVALID_OPTIONS` naming the unknown entries and listing the allowed names.
 * @example
 * ```ts
 * parseFaults('missing_blob_row, old_trash'); // ['missing_blob_row', 'old_trash']
 * parseFaults('all').length === FAULT_NAMES.length;
 * ```
 */
export function parseFaults(text: string): FaultName[] {
  const entries = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (entries.length === 0 || (entries.length === 1 && entries[0] === 'none')) return [];
  if (entries.includes('all')) {
    if (entries.length > 1) {
      throw new DatasetError(
        'INVALID_OPTIONS',
        `faults ${JSON.stringify(text)} mixes "all" with other names: give "all" alone or a list of names`,
      );
    }
    return [...FAULT_NAMES];
  }
  const unknown = entries.filter((e) => !isFaultName(e));
  if (unknown.length > 0) {
    throw new DatasetError(
      'INVALID_OPTIONS',
      `unknown fault name${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => JSON.stringify(u)).join(', ')}: ` +
        `allowed are "all", "none" or a comma-separated list of ${FAULT_NAMES.join(', ')}`,
    );
  }
  return FAULT_NAMES.filter((name) => entries.includes(name));
}
