import type { JobSummaryJson } from '../../routes/wire-types.ts';

/** Field name → what it means. */
export type FieldMeanings = Readonly<Record<string, string>>;

/* What the fields of a last outcome mean: job-specific first, then the recoverable bridge's. */
export const COMMON_FIELDS: FieldMeanings = {
  kind: 'ok: the run finished without error; err: it failed (see message).',
  count: "The job's primary number (what it counts is listed below).",
  message: 'Why the run failed.',
  completed: 'true: the run scanned everything; false: it stopped early.',
  paused: 'true: the run stopped at a batch boundary with its cursor saved; Run resumes it.',
  cursor_hex: 'Where a paused run resumes (the stored cursor, hex).',
  skipped: 'Why nothing ran: already_running = a run of this job was in flight.',
  run_id: 'The recoverable run this outcome belongs to.',
  at: 'When the run ended.',
  cause: 'Why it failed: handler (threw or returned err), timeout, panicked.',
  elapsed_ms: 'How long the run took, in milliseconds.',
  source: 'What started it: tick (the schedule) or trigger (an operator).',
};
const JOB_FIELDS: Readonly<Record<string, FieldMeanings>> = {
  trash_cleanup: {
    count: 'Rows purged: trashed folders (with their subtree) plus trashed files.',
    folders: 'Trashed folders purged.',
    files: 'Trashed files purged.',
    batches: 'Delete batches run.',
    retention_days: 'Days an item stays in the trash before it is purged.',
    cutoff: 'Items trashed before this were purged.',
  },
  storage_reconcile: {
    count: 'Rows corrected: drives plus users whose used bytes had drifted.',
    drives_corrected: 'Drives whose used_bytes was rewritten.',
    users_corrected: 'Users whose storage_used_bytes was rewritten.',
    largest: 'The 10 largest corrections (before, after, delta in bytes).',
  },
  dedup_gc: {
    count: 'Blobs deleted.',
    blobs_deleted: 'Unreferenced blobs deleted (bytes and row).',
    bytes_freed: 'Bytes freed on the blob backend.',
    blobs_kept: 'Candidates kept because they gained a reference meanwhile.',
    grace_seconds: 'How long a blob must stay orphaned before it is deleted.',
    forced: 'true: run with force (grace 0).',
  },
  grant_cleanup: {
    count: 'Expired grants deleted.',
    grace_seconds: 'How long after expiry a grant is kept.',
    forced: 'true: run with force (grace 0).',
    cutoff: 'Grants that expired before this were deleted.',
  },
  consistency_batch: {
    count: 'Checks that completed their whole scan.',
    per_check: "Each check's own outcome, by job name.",
    checks: 'The checks run, in order.',
    completed: 'Checks that scanned everything.',
    paused: 'Checks that stopped with their cursor saved.',
    failed: 'Checks that failed (the batch itself still reports ok).',
    skipped: 'Checks not started (aborted, or already running).',
    deep: 'true: bytes were re-hashed and mime types sniffed.',
    force: 'true: grace windows were 0.',
  },
  storage_migration: { count: 'Blobs copied to the target backend.' },
  reextract_audio: { count: 'Audio files whose tags were written.' },
  reextract_image: { count: 'Images and videos whose capture date was written.' },
};

/** The consistency checks of the listing, in their catalog order (`check.order`). */
export function orderedChecks(jobs: readonly JobSummaryJson[]): JobSummaryJson[] {
  return jobs
    .filter((job) => job.check)
    .sort((a, b) => (a.check?.order ?? 0) - (b.check?.order ?? 0) || (a.name < b.name ? -1 : 1));
}

/**
 * What the fields of `job`'s last outcome mean: the job's own meanings over
 * the common ones. A consistency check's `count` meaning comes from the
 * listing (`check.count_meaning`), and `consistency_batch`'s `checks` names
 * the checks in their order.
 */
export function fieldMeanings(job: JobSummaryJson, jobs: readonly JobSummaryJson[]): FieldMeanings {
  const own: Record<string, string> = { ...JOB_FIELDS[job.name] };
  if (job.check) own['count'] = job.check.count_meaning;
  if (job.name === 'consistency_batch') {
    const checks = orderedChecks(jobs).map((check) => check.name);
    if (checks.length > 0) own['checks'] = `The checks run, in order (${checks.join(', ')}).`;
  }
  return { ...COMMON_FIELDS, ...own };
}
