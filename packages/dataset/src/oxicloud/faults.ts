import type { Severity } from '@oxicloud/consistency/severity';
import { DatasetError } from '../errors.js';
import type { OxiCloudFaultResource } from './fault-injectors/fault-context.js';

/**
 * The faults the OxiCloud-shaped generator can inject, best first: each one
 * is one deliberate drift of one OXICLOUD.md §12 invariant, on resources no
 * other fault touched. The names of the old generator's faults are kept
 * where the meaning is the same (`missing_blob_row`, `blob_size_mismatch`,
 * …); the others are new to OxiCloud's content model.
 */
export const OXICLOUD_FAULT_NAMES = [
  'missing_manifest',
  'missing_chunk_row',
  'missing_blob_row',
  'blob_bytes_missing',
  'orphan_blob_on_disk',
  'blob_ref_count_drift',
  'one_chunk_ref_count_drift',
  'chunk_bytes_overwritten',
  'truncated_chunk',
  'manifest_ref_count_drift',
  'manifest_ref_count_high',
  'unreferenced_manifest',
  'manifest_shape_mismatch',
  'wrong_manifest_total',
  'manifest_chunks_reordered',
  'blob_orphaned_at_unset',
  'blob_size_mismatch',
  'drive_used_bytes_drift',
  'user_used_bytes_drift',
  'wrong_folder_path',
  'wrong_folder_lpath',
  'live_folder_under_trashed_parent',
  'live_file_under_trashed_folder',
  'live_folder_with_original_parent',
  'folder_under_other_drive',
  'root_without_drive',
  'file_in_other_drive_folder',
  'drive_without_owner',
  'media_sort_date_drift',
  'category_order_drift',
  'audio_metadata_missing',
  'dangling_grant',
  'dangling_user_grant',
  'dangling_group_grant',
  'dangling_token_grant',
  'dangling_favorite',
  'dangling_nextcloud_id',
  'drive_root_shared',
  'drive_root_not_root',
  'stale_face',
  'share_without_grant',
  'orphan_thumbnail',
  'orphan_file_thumbnail',
  'orphan_transcoded_image',
  'expired_grants',
  'lingering_expired_grant',
] as const;

/** One of {@link OXICLOUD_FAULT_NAMES}. */
export type OxiCloudFaultName = (typeof OXICLOUD_FAULT_NAMES)[number];

/** Where a fault is found: the §12 invariant it breaks, the check that reports it and the finding it records. */
export interface OxiCloudFaultExpectation {
  /** The OXICLOUD.md §12 item; `null` for the grant-expiry faults, which a cleanup acts on. */
  readonly invariant: number | null;
  /**
   * The check on OxiCloud's domain (`@oxicloud/storage/oxicloud` adapters,
   * run by `consistency_batch`) that records the finding; `null` when no
   * check does: a grant inside its cleanup grace (the purge's, not a drift),
   * or a §12 item no check covers yet (then `kind` is this package's
   * proposal and the batch reports nothing for the fault).
   */
  readonly check: string | null;
  /** The finding kind the check records (a proposal when `check` is `null`). */
  readonly kind: string;
  /** Severity of the finding; absent for `expired_grants`, which no check reports (the cleanup acts on it). */
  readonly severity?: Severity;
  /**
   * The finding's resource id, when it is not the record's resource id:
   * `file_hash`, the content hash the resource belongs to (its
   * `detail.fileHash`): a lost chunk row is reported on the file content
   * that no longer resolves. @defaultValue the record's resource id
   */
  readonly findingId?: 'file_hash';
  /**
   * `true` when only a deep run finds it (the check re-reads the bytes):
   * other bytes under a key. A run without `deep` reports nothing for it.
   */
  readonly deepOnly?: true;
  /**
   * The second finding a fault gives by its nature, on the record's
   * resources of type `on` (its other resources give the main one): two
   * drives naming one root are a shape problem of both drives
   * (drives_consistency) and a root folder a drive other than its own names
   * (folders_consistency, §12 item 3). Only `drive_root_shared` has one.
   */
  readonly also?: {
    readonly on: OxiCloudFaultResource['type'];
    readonly invariant: number;
    readonly check: string;
    readonly kind: string;
    readonly severity: Severity;
  };
}

/**
 * What each fault breaks and what the finding's resource id is (see
 * `OxiCloudFaultRecord.resourceIds`):
 *
 * - `missing_manifest`: a multi-chunk manifest deleted while its files
 *   remain, as `remove_manifest_reference` does when it trusts a low count
 *   (§5 hazard): its distinct chunks lose one reference each, stamped
 *   orphaned at 0, so only the files' content fails to resolve. Id: the file hash.
 * - `missing_chunk_row`: a chunk listed by one manifest loses its blobs row
 *   and its bytes (a GC that ignored the manifest). Id: the chunk hash; the
 *   finding's: the manifest's file hash (`findingId: 'file_hash'`).
 * - `missing_blob_row`: a legacy blob's row and bytes gone while live files
 *   use it. Id: the blob hash.
 * - `blob_bytes_missing`: a chunk's bytes gone, its row kept. Id: the chunk hash.
 * - `orphan_blob_on_disk`: bytes in the store with no row. Id: the hash.
 * - `blob_ref_count_drift`: a legacy blob's or a chunk's `ref_count` + 2. Id: the hash.
 * - `one_chunk_ref_count_drift`: a one-chunk content's chunk row counted one
 *   file too many (`copy_folder_tree` does +N on it, §5). Id: the hash.
 * - `chunk_bytes_overwritten`: other bytes of its size under a chunk's key;
 *   found by a deep run only (the batch the tests run is deep). Id: the chunk hash.
 * - `truncated_chunk`: other bytes of half its size under a chunk's key (a
 *   crash mid-write left a short object that a later identical upload
 *   keeps); found by every run from the object's size, and reported once by
 *   a deep run (an object of the wrong size is not re-hashed). Id: the chunk hash.
 * - `manifest_ref_count_drift`: a manifest used by two files or more counts
 *   one file too few (the dangerous direction). Id: the file hash.
 * - `manifest_ref_count_high`: a multi-chunk manifest counts one file more
 *   than name it (what every bulk delete leaves, §5). Id: the file hash.
 * - `unreferenced_manifest`: a two-chunk manifest no file names (its last
 *   file deleted by a bulk path, before OxiCloud's GC phase 1), its chunk
 *   rows counted for it and their bytes stored. Id: the file hash.
 * - `manifest_shape_mismatch`: a multi-chunk manifest's `chunk_count` one
 *   more than its arrays (what `verify_integrity` reports as a length
 *   mismatch; readers go by the arrays, so the bytes still resolve). Id: the file hash.
 * - `wrong_manifest_total`: a multi-chunk manifest's `total_size` 4 KiB
 *   more than its chunk sizes add up to, its files' `size` with it (usage
 *   follows), so only the manifest's shape is wrong. Id: the file hash.
 * - `manifest_chunks_reordered`: a multi-chunk manifest's first two chunks
 *   swapped in both arrays (shape and chunks intact, the whole reads other
 *   bytes than its hash); found by a deep run. Id: the file hash.
 * - `blob_orphaned_at_unset`: an unreferenced blob row (bytes present) with
 *   `ref_count` 0 and no `orphaned_at`. Id: the hash.
 * - `blob_size_mismatch`: a live file's `size` + delta (its drive's
 *   `used_bytes` and, on a personal drive, its owner's envelope follow, so
 *   only the mismatch remains). Id: the file id.
 * - `drive_used_bytes_drift`: a drive's `used_bytes` + delta (a shared
 *   drive when there is one, else a personal drive and its owner's
 *   envelope, so the envelope still adds up). Id: the drive id.
 * - `user_used_bytes_drift`: an internal user's envelope + delta. Id: the user id.
 * - `wrong_folder_path` / `wrong_folder_lpath`: the column of a live leaf
 *   folder changed without the trigger. Id: the folder id.
 * - `live_folder_under_trashed_parent`: a new live folder inside a trashed
 *   one (the pre-2026-06-17 state). Id: the new folder's id.
 * - `live_file_under_trashed_folder`: a file of a trashed subtree
 *   untrashed alone (usage follows). Id: the file id.
 * - `live_folder_with_original_parent`: a live leaf folder still carrying
 *   `original_parent_id` (a restore that did not clear it). Id: the folder id.
 * - `folder_under_other_drive`: a live leaf folder moved under another
 *   drive's root without its `drive_id` (its files keep its drive). Id: the folder id.
 * - `root_without_drive`: a personal drive repointed at a new root folder,
 *   the old root's folders and files moved there, the old root left live
 *   and empty with no drive pointing at it (§12 item 4). Id: the old root's id.
 * - `file_in_other_drive_folder`: a live file's `drive_id` set to another
 *   drive (usage of both drives and envelopes follows). Id: the file id.
 * - `drive_without_owner`: a shared drive's owner grants deleted. Id: the drive id.
 * - `media_sort_date_drift`: a live file's capture metadata written (the
 *   trigger moved `media_sort_date`) and deleted again (nothing resets it).
 *   Id: the file id.
 * - `category_order_drift`: a live file's `category_order` set to 9999, as
 *   OxiCloud's folder copy leaves its copies (§12 item 23). Id: the file id.
 * - `audio_metadata_missing`: a live audio file's `audio.file_metadata` row
 *   deleted, as when OxiCloud's background extraction failed (§12 item 24);
 *   found by deep runs. Only a local unencrypted store has such rows
 *   (OxiCloud reads media bytes at their raw path): elsewhere the fault
 *   touches nothing and expects nothing. Id: the file id.
 * - `dangling_grant`: a viewer grant on a file id that does not exist. Id: the grant id.
 * - `dangling_user_grant` / `dangling_group_grant` / `dangling_token_grant`:
 *   a viewer grant on a drive's root folder whose user, group or share
 *   (token subject) does not exist.
 *   Id: the grant id.
 * - `dangling_favorite`: a user's favorite of a file id no files row has
 *   (the file was deleted; nothing deletes its favorites). Id: the
 *   favorite's serial id.
 * - `dangling_nextcloud_id`: a NextCloud id of a file id no files row has
 *   (OxiCloud never deletes these rows). Id: the NextCloud id (bigserial).
 * - `drive_root_shared`: a new shared drive, owned as the picked drive is,
 *   whose `root_folder_id` is the picked drive's root (a four-write that
 *   linked an existing root; there is no unique index). Both drives get
 *   `drive_root_mismatch` (the picked one `root_shared`, the new one
 *   `root_in_other_drive` and `root_shared`), and the root folder
 *   `drive_id_parent_mismatch` from folders_consistency (a root another
 *   drive names, §12 item 3; `also`). Ids: the picked drive's, the new
 *   drive's (type `drive`) and the root's (type `folder`).
 * - `drive_root_not_root`: a personal drive's root folder moved, by
 *   OxiCloud's own `move_folder` (no guard refuses a root; the cascade
 *   carries its subtree and files along), into the root of a shared drive
 *   made for it (same owner), both drives' usage and the owner's envelope
 *   following: the drive names a folder that is not a root and is another
 *   drive's. Only `drive_root_mismatch` (`root_has_parent`,
 *   `root_in_other_drive`): the moved tree is whole in the shared drive.
 *   Id: the drive whose root moved.
 * - `stale_face`: a face of a live image whose `blob_hash` is another
 *   content's, still stored (the file's content was updated and the
 *   reindex that deletes its old faces failed, §10). Id: the face's id.
 * - `share_without_grant`: a share link row of a live file with no token
 *   grant (the second of its two writes never ran, fact sheet §8): the link
 *   opens nothing. Id: the share's id.
 * - `orphan_thumbnail`: the three thumbnails of a hash that is neither a
 *   manifest nor a blob (needs `storageRoot`). Id: the hash.
 * - `orphan_file_thumbnail` / `orphan_transcoded_image`: the `ext-<id>.jpg`
 *   thumbnails, or the `.transcoded/webp/<id>.webp`, of a file id no files
 *   row has (needs `storageRoot`). Id: the file id.
 * - `expired_grants`: a grant that expired 2 days ago (inside OxiCloud's
 *   15-day cleanup grace). Id: the grant id.
 * - `lingering_expired_grant`: a grant that expired 30 days ago (past the
 *   grace: OxiCloud's cleanup is not running). Id: the grant id.
 */
export const OXICLOUD_FAULT_EXPECTATIONS = {
  missing_manifest: { invariant: 11, check: 'files_consistency', kind: 'missing_blob', severity: 'DataLoss' },
  missing_chunk_row: {
    invariant: 11,
    check: 'files_consistency',
    kind: 'missing_blob',
    severity: 'DataLoss',
    findingId: 'file_hash',
  },
  missing_blob_row: { invariant: 11, check: 'files_consistency', kind: 'missing_blob', severity: 'DataLoss' },
  blob_bytes_missing: {
    invariant: 17,
    check: 'storage_consistency',
    kind: 'missing_blob_bytes',
    severity: 'DataLoss',
  },
  orphan_blob_on_disk: {
    invariant: 18,
    check: 'storage_consistency',
    kind: 'orphan_blob',
    severity: 'Reclaimable',
  },
  blob_ref_count_drift: {
    invariant: 15,
    check: 'blobs_consistency',
    kind: 'ref_count_mismatch',
    severity: 'Drift',
  },
  one_chunk_ref_count_drift: {
    invariant: 15,
    check: 'blobs_consistency',
    kind: 'ref_count_mismatch',
    severity: 'Drift',
  },
  chunk_bytes_overwritten: {
    invariant: 17,
    check: 'storage_consistency',
    kind: 'blob_hash_mismatch',
    severity: 'DataLoss',
    deepOnly: true,
  },
  truncated_chunk: {
    invariant: 17,
    check: 'storage_consistency',
    kind: 'blob_object_size_mismatch',
    severity: 'DataLoss',
  },
  manifest_ref_count_drift: {
    invariant: 14,
    check: 'manifests_consistency',
    kind: 'manifest_ref_count_low',
    severity: 'DataLoss',
  },
  manifest_ref_count_high: {
    invariant: 14,
    check: 'manifests_consistency',
    kind: 'manifest_ref_count_high',
    severity: 'Drift',
  },
  unreferenced_manifest: {
    invariant: 14,
    check: 'manifests_consistency',
    kind: 'manifest_unreferenced',
    severity: 'Reclaimable',
  },
  manifest_shape_mismatch: {
    invariant: 13,
    check: 'manifests_consistency',
    kind: 'manifest_shape_mismatch',
    severity: 'Drift',
  },
  wrong_manifest_total: {
    invariant: 13,
    check: 'manifests_consistency',
    kind: 'manifest_shape_mismatch',
    severity: 'Drift',
  },
  manifest_chunks_reordered: {
    invariant: 13,
    check: 'manifests_consistency',
    kind: 'manifest_hash_mismatch',
    severity: 'DataLoss',
    deepOnly: true,
  },
  blob_orphaned_at_unset: {
    invariant: 16,
    check: 'blobs_consistency',
    kind: 'orphaned_at_mismatch',
    severity: 'Drift',
  },
  blob_size_mismatch: {
    invariant: 12,
    check: 'files_consistency',
    kind: 'blob_size_mismatch',
    severity: 'Drift',
  },
  drive_used_bytes_drift: {
    invariant: 9,
    check: 'drives_consistency',
    kind: 'drive_used_bytes_drift',
    severity: 'Drift',
  },
  user_used_bytes_drift: {
    invariant: 10,
    check: 'drives_consistency',
    kind: 'user_used_bytes_drift',
    severity: 'Drift',
  },
  wrong_folder_path: { invariant: 2, check: 'folders_consistency', kind: 'path_mismatch', severity: 'Drift' },
  wrong_folder_lpath: {
    invariant: 2,
    check: 'folders_consistency',
    kind: 'lpath_mismatch',
    severity: 'Drift',
  },
  live_folder_under_trashed_parent: {
    invariant: 7,
    check: 'folders_consistency',
    kind: 'parent_trashed_mismatch',
    severity: 'DataLoss',
  },
  live_file_under_trashed_folder: {
    invariant: 7,
    check: 'files_consistency',
    kind: 'parent_folder_trashed',
    severity: 'DataLoss',
  },
  live_folder_with_original_parent: {
    invariant: 7,
    check: 'folders_consistency',
    kind: 'trash_flags_mismatch',
    severity: 'Drift',
  },
  folder_under_other_drive: {
    invariant: 3,
    check: 'folders_consistency',
    kind: 'drive_id_parent_mismatch',
    severity: 'DataLoss',
  },
  root_without_drive: {
    invariant: 4,
    check: 'folders_consistency',
    kind: 'orphan_root',
    severity: 'DataLoss',
  },
  file_in_other_drive_folder: {
    invariant: 6,
    check: 'files_consistency',
    kind: 'drive_id_parent_mismatch',
    severity: 'DataLoss',
  },
  drive_without_owner: {
    invariant: 8,
    check: 'drives_consistency',
    kind: 'drive_without_owner',
    severity: 'DataLoss',
  },
  media_sort_date_drift: {
    invariant: 22,
    check: 'files_consistency',
    kind: 'media_sort_date_mismatch',
    severity: 'Drift',
  },
  category_order_drift: {
    invariant: 23,
    check: 'files_consistency',
    kind: 'category_order_mismatch',
    severity: 'Drift',
  },
  audio_metadata_missing: {
    invariant: 24,
    check: 'files_consistency',
    kind: 'media_metadata_missing',
    severity: 'Regenerable',
    deepOnly: true,
  },
  dangling_grant: {
    invariant: 20,
    check: 'grants_consistency',
    kind: 'dangling_grant',
    severity: 'Reclaimable',
  },
  dangling_user_grant: {
    invariant: 20,
    check: 'grants_consistency',
    kind: 'dangling_grant',
    severity: 'Reclaimable',
  },
  dangling_group_grant: {
    invariant: 20,
    check: 'grants_consistency',
    kind: 'dangling_grant',
    severity: 'Reclaimable',
  },
  dangling_token_grant: {
    invariant: 20,
    check: 'grants_consistency',
    kind: 'dangling_grant',
    severity: 'Reclaimable',
  },
  dangling_favorite: {
    invariant: 25,
    check: 'references_consistency',
    kind: 'dangling_favorite',
    severity: 'Reclaimable',
  },
  dangling_nextcloud_id: {
    invariant: 25,
    check: 'references_consistency',
    kind: 'dangling_nextcloud_id',
    severity: 'Reclaimable',
  },
  drive_root_shared: {
    invariant: 5,
    check: 'drives_consistency',
    kind: 'drive_root_mismatch',
    severity: 'DataLoss',
    also: {
      on: 'folder',
      invariant: 3,
      check: 'folders_consistency',
      kind: 'drive_id_parent_mismatch',
      severity: 'DataLoss',
    },
  },
  drive_root_not_root: {
    invariant: 5,
    check: 'drives_consistency',
    kind: 'drive_root_mismatch',
    severity: 'DataLoss',
  },
  stale_face: {
    invariant: 25,
    check: 'references_consistency',
    kind: 'stale_face_hash',
    severity: 'Drift',
  },
  share_without_grant: {
    invariant: 21,
    check: 'references_consistency',
    kind: 'share_grant_mismatch',
    severity: 'DataLoss',
  },
  orphan_thumbnail: {
    invariant: 19,
    check: 'storage_consistency',
    kind: 'orphan_thumbnail',
    severity: 'Reclaimable',
  },
  orphan_file_thumbnail: {
    invariant: 19,
    check: 'storage_consistency',
    kind: 'orphan_file_thumbnail',
    severity: 'Reclaimable',
  },
  orphan_transcoded_image: {
    invariant: 19,
    check: 'storage_consistency',
    kind: 'orphan_transcoded_image',
    severity: 'Reclaimable',
  },
  expired_grants: { invariant: null, check: null, kind: 'expired_grant' },
  lingering_expired_grant: {
    invariant: null,
    check: 'grants_consistency',
    kind: 'expired_grant_lingering',
    severity: 'Drift',
  },
} as const satisfies Record<OxiCloudFaultName, OxiCloudFaultExpectation>;

/**
 * The old generator's faults (removed with the old model in issue 30) that
 * were not ported, and why: every other old fault is in
 * {@link OXICLOUD_FAULT_NAMES} under the same name.
 * (None of the old faults is about `blobs.deleting_at` or `drives.owner_id`,
 * which do not exist in OxiCloud's schema: the ported ones were rewritten
 * for drives owned through grants and content through manifests.)
 */
export const OXICLOUD_FAULTS_NOT_PORTED = {
  old_trash:
    'not a drift in OxiCloud: trash older than its fixed 30-day retention is work its own purge has not done yet, ' +
    'and the clean dataset already holds it (oldTrashShare)',
  folder_parent_cycle:
    'not yet ported: OxiCloud can only reach it by a bad restore, and no §12 invariant names it (item 2 reports ' +
    'the paths); it needs its cascade trigger disabled (ALTER TABLE, owner rights on OxiCloud’s table)',
  file_mime_mismatch:
    'no §12 invariant compares files.mime_type with the content: OxiCloud sniffs at upload only and keeps ' +
    'manifest/blob content_type as upload-time metadata, so there is no finding to expect',
} as const;

/** Whether `value` is one of {@link OXICLOUD_FAULT_NAMES}. */
export function isOxiCloudFaultName(value: string): value is OxiCloudFaultName {
  return (OXICLOUD_FAULT_NAMES as readonly string[]).includes(value);
}

/**
 * Parses a comma-separated fault list: `"all"` gives every fault, `""` /
 * `"none"` none; names come back once each, in {@link OXICLOUD_FAULT_NAMES} order.
 *
 * @throws DatasetError `INVALID_OPTIONS` naming the unknown entries and listing the allowed names.
 */
export function parseOxiCloudFaults(text: string): OxiCloudFaultName[] {
  const entries = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (entries.length === 0 || (entries.length === 1 && entries[0] === 'none')) return [];
  if (entries.length === 1 && entries[0] === 'all') return [...OXICLOUD_FAULT_NAMES];
  const unknown = entries.filter((e) => !isOxiCloudFaultName(e));
  if (unknown.length > 0) {
    throw new DatasetError(
      'INVALID_OPTIONS',
      `unknown OxiCloud fault name${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => JSON.stringify(u)).join(', ')}: ` +
        `allowed are "all", "none" or a comma-separated list of ${OXICLOUD_FAULT_NAMES.join(', ')}`,
    );
  }
  return OXICLOUD_FAULT_NAMES.filter((name) => entries.includes(name));
}
