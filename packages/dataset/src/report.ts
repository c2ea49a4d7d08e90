import type { ExpectedFinding, FaultExpectation, FaultName } from './faults.js';
import type { ResolvedDatasetOptions } from './options.js';

/** One resource a fault touched. */
export interface FaultResource {
  readonly type: 'user' | 'drive' | 'folder' | 'file' | 'blob' | 'grant';
  /** UUID, or the blob hash for `blob`: exactly the `resource_id` the expected finding carries. */
  readonly id: string;
  /** A stable human label (username, drive, path, file name): the same for the same seed, unlike ids. */
  readonly label: string;
  /** What was changed: stored vs expected values, previous hashes, affected file ids. */
  readonly detail: Readonly<Record<string, unknown>>;
}

/**
 * One injected fault: which job must find it, and exactly which resources.
 *
 * A check run over the dataset must report one finding of `expect.kind` per
 * id in `resourceIds`, and (for the faults below) nothing else.
 *
 * Side effects that are inherent, and how each fault keeps other checks quiet:
 * - `drive_used_bytes_drift`: moves `delta` bytes from one drive of a
 *   two-drive user to the other (+delta / -delta), so both drives drift while
 *   the user's total stays right under either definition of the envelope
 *   (sum of drives, or sum of files). Both drive ids are listed.
 * - `user_used_bytes_drift`: raises `users.storage_used_bytes` only.
 * - `live_folder_under_trashed_parent`: inserts a new, empty, live folder under
 *   a trashed folder (no files, so no accounting change).
 * - `live_file_under_trashed_folder`: un-trashes a file inside a trashed
 *   folder (trashed files count toward `used_bytes` too, so no drift).
 * - `wrong_folder_path` / `wrong_folder_lpath`: corrupt the column of a live
 *   LEAF folder, so no child's reconstruction is affected.
 * - `missing_blob_row`: repoints a live, non-media file to the BLAKE3 hash of
 *   fresh bytes of the same size whose row and bytes never exist (as if its
 *   row and bytes were deleted). The old blob's `ref_count` is kept right by
 *   the triggers and the file's size is unchanged, so only `files_consistency`
 *   reports it (no orphan on disk, no drift). A job that reads the file's
 *   bytes would fail: non-media files are picked so reextract jobs skip them.
 * - `blob_size_mismatch`: raises `files.size` of a live, non-media file and
 *   the same delta on its drive's `used_bytes` and its user's envelope, so
 *   only the mismatch remains.
 * - `orphan_blob_on_disk`: writes bytes with no row, backdated through
 *   `backdateBlob` when given (else they are as young as the run, and
 *   `storage_consistency` sees them only once older than its grace window).
 * - `blob_bytes_missing`: deletes the bytes of a referenced non-media blob
 *   whose row stays. Inherent: a download or `storage_migration` of that
 *   blob fails too; `detail.fileIds` lists the files that point at it.
 * - `expired_grants`: inserts grants that expired 2+ days ago.
 * - `old_trash`: backdates `trashed_at` to 45+ days (past the 30-day
 *   retention) for whole trashed subtrees (every folder and file in them
 *   is listed) and for standalone trashed files.
 * - `blob_ref_count_drift`: raises `ref_count` of a referenced blob by 2
 *   (never lowers it, so `dedup_gc` is never tempted).
 * - `blob_orphaned_at_unset`: a new unreferenced blob row, bytes on disk
 *   (backdated), whose `orphaned_at` is cleared: only `blobs_consistency`
 *   reports it (`storage_consistency` leaves the never-marked row to it).
 * - `dangling_grant`: a grant on a file id that does not exist.
 * - `lingering_expired_grant`: a grant expired 30 days ago (past
 *   `grant_cleanup`'s grace + the 7-day margin). Inherent: `grant_cleanup`
 *   deletes it too.
 * - `folder_under_other_drive`: moves a live LEAF folder under a top-level
 *   folder of another user's drive (paths recomputed by the triggers; its
 *   files keep its drive, so only the folder is reported).
 * - `folder_parent_cycle`: adds a folder B under a live leaf folder A, then
 *   points A's `parent_id` at B with the path cascade trigger disabled (a
 *   bad restore): both are `orphan_root`, and nothing else (a cycle has no
 *   path to compare).
 * - `file_in_other_drive_folder`: moves a live non-media file's `drive_id`
 *   to another drive (its folder stays), moving its size between the two
 *   drives' `used_bytes` and the owners' envelopes, so only the mismatch remains.
 * - `file_mime_mismatch`: sets a live non-media file's `mime_type` to
 *   `application/x-oxicloud-fault` (its blob keeps a known content type).
 *
 * Every fault works in drives no other fault touched.
 */
export interface FaultRecord {
  readonly fault: FaultName;
  readonly expect: FaultExpectation;
  /** The resource ids the expected findings (or removals) carry. */
  readonly resourceIds: readonly string[];
  readonly resources: readonly FaultResource[];
  /**
   * Every finding the consistency checks must record for this fault, no more
   * and no fewer (`consistency_batch` with `force` over the dataset reports
   * exactly the union of these); empty for faults a Part 1 job acts on.
   */
  readonly findings: readonly ExpectedFinding[];
}

/** Per-phase progress, for a CLI progress line. */
export interface DatasetProgress {
  readonly phase: DatasetPhase;
  /** Units done in this phase (blobs, folders, files, …). */
  readonly done: number;
  readonly total: number;
  /** Milliseconds since the generation started. */
  readonly elapsedMs: number;
}

/** The phases, in order. */
export type DatasetPhase =
  | 'plan'
  | 'blob_bytes'
  | 'users'
  | 'drives'
  | 'folders'
  | 'blob_rows'
  | 'files'
  | 'usage'
  | 'grants'
  | 'faults'
  | 'commit'
  | 'storage_faults';

/** Counts of the CLEAN dataset (before faults). */
export interface DatasetCounts {
  readonly users: number;
  readonly drives: number;
  readonly folders: number;
  readonly trashedFolders: number;
  readonly files: number;
  readonly trashedFiles: number;
  readonly rootFiles: number;
  readonly audioFiles: number;
  readonly imageFiles: number;
  readonly blobs: number;
  /** Sum of the sizes of the distinct blobs written. */
  readonly blobBytes: number;
  /** Sum of `files.size` (what the drives' `used_bytes` add up to). */
  readonly fileBytes: number;
  readonly grants: number;
  /** Depth of the deepest folder over all drives. */
  readonly maxFolderDepth: number;
}

/** What {@link generateDataset} produced. */
export interface DatasetReport {
  readonly options: ResolvedDatasetOptions;
  /** Usernames are `<usernamePrefix>u0000001`, … */
  readonly usernamePrefix: string;
  readonly counts: DatasetCounts;
  /** One record per requested fault, in `FAULT_NAMES` order. */
  readonly faults: readonly FaultRecord[];
  /** Wall time per phase, in milliseconds. */
  readonly phaseMs: Readonly<Partial<Record<DatasetPhase, number>>>;
  readonly durationMs: number;
}

function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

/**
 * One line per fault, then one indented line per finding it must produce
 * (`job kind severity resource_id`), for the CLI; Part 1 faults say what
 * their job acts on.
 */
export function describeExpectedFindings(report: DatasetReport): string {
  const lines: string[] = [];
  for (const f of report.faults) {
    if (f.findings.length === 0) {
      lines.push(`${f.fault}: ${f.expect.job} acts on ${f.resourceIds.length} (${f.expect.kind})`);
      continue;
    }
    lines.push(`${f.fault}: ${f.findings.length} finding${f.findings.length === 1 ? '' : 's'}`);
    for (const x of f.findings) lines.push(`  ${x.job} ${x.kind} ${x.severity} ${x.resourceId}`);
  }
  return lines.join('\n');
}

/** A one-paragraph human summary of a report, for the CLI. */
export function describeDatasetReport(report: DatasetReport): string {
  const c = report.counts;
  const faults =
    report.faults.length === 0
      ? 'No faults injected.'
      : `Faults: ${report.faults
          .map((f) => `${f.fault} (${f.resourceIds.length} → ${f.expect.job}/${f.expect.kind})`)
          .join(', ')}.`;
  return (
    `Generated seed ${report.options.seed} in ${(report.durationMs / 1000).toFixed(1)} s: ` +
    `${c.users} users (${report.usernamePrefix}…), ${c.drives} drives, ` +
    `${c.folders} folders (${c.trashedFolders} trashed, depth up to ${c.maxFolderDepth}), ` +
    `${c.files} files (${c.trashedFiles} trashed, ${c.rootFiles} at a drive root, ${c.audioFiles} audio, ` +
    `${c.imageFiles} image; ${formatBytes(c.fileBytes)}), ` +
    `${c.blobs} blobs with bytes on disk (${formatBytes(c.blobBytes)}), ${c.grants} unexpired grants. ${faults}`
  );
}

/**
 * Which resources each fault touched, one line per resource under a line
 * per fault naming the finding a check must report: what a person checking
 * the checks compares a run's findings with (`oxijobs seed --list-resources`).
 */
export function describeFaultResources(report: DatasetReport): string {
  if (report.faults.length === 0) return 'No faults injected.';
  const lines: string[] = [];
  for (const f of report.faults) {
    lines.push(
      `${f.fault}: ${f.resources.length} resource(s); expect ${f.expect.job} to report ${f.expect.kind}`,
    );
    for (const r of f.resources) lines.push(`  ${r.type} ${r.id}  ${r.label}`);
  }
  return lines.join('\n');
}
