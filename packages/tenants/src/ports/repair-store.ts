import type { RunTransaction } from '@oxicloud/recoverable';
import type { ReferenceSource } from '../references-consistency/reference-scan.js';

/**
 * The storage-domain reads and writes the repair actions need (adapter:
 * `OxiRepairStore` in `@oxicloud/storage/oxicloud`, on OxiCloud's domain).
 * Every `lock` read takes the row lock of the resource it names
 * (`FOR UPDATE`), so what `apply` re-checks cannot change before its
 * transaction ends.
 */

/** A drive's counter and the sum it should equal. */
export interface DriveUsageState {
  readonly ownerId: string;
  readonly usedBytes: number;
  /**
   * `SUM(size)` of the drive's files the domain counts: on OxiCloud's, the
   * live files only, trashed not counted (fact sheet §6).
   */
  readonly filesBytes: number;
  /**
   * Whether the drive's `used_bytes` is part of its owner's envelope (on
   * OxiCloud's domain only personal drives are, through their user owner
   * grant). @defaultValue true
   */
  readonly countsInEnvelope?: boolean;
}

/** A user's envelope and the sum it should equal. */
export interface UserUsageState {
  readonly usedBytes: number;
  /** `SUM(used_bytes)` of the user's drives (on OxiCloud's domain: the personal drives the user owns by grant). */
  readonly drivesBytes: number;
}

/** One folder's stored path against the one its parent chain gives. */
export interface FolderPathRow {
  readonly folderId: string;
  readonly path: string;
  readonly lpath: string;
  readonly expectedPath: string;
  readonly expectedLpath: string;
}

/** A file's size against its blob row's. */
export interface FileBlobSizeState {
  readonly driveId: string;
  readonly ownerId: string;
  readonly blobHash: string;
  readonly fileSize: number;
  /** `null` when the blob row is missing (on OxiCloud's domain: the manifest's `total_size`, else the legacy blob's size). */
  readonly blobSize: number | null;
  /**
   * Whether the file's size counts in its drive's `used_bytes` (OxiCloud:
   * live files only). @defaultValue true
   */
  readonly countsInUsage?: boolean;
  /** Whether the drive's usage counts in `ownerId`'s envelope. @defaultValue true */
  readonly countsInEnvelope?: boolean;
}

/** A live row under a trashed folder. */
export interface TrashedParentState {
  readonly trashed: boolean;
  readonly driveId: string;
  /** The trashed folders above it, nearest first. */
  readonly trashedAncestors: readonly string[];
  /** For a folder: the live folders and files below it (trashing it trashes them too). */
  readonly liveFolders: readonly string[];
  readonly liveFiles: readonly string[];
  /**
   * What trashing the live files would take out of the usage counters, per
   * drive (OxiCloud's domain counts live files only; a domain that counted
   * trash too would leave this unset): the drive, the bytes, and the user
   * whose envelope counts that drive (`null`: none).
   */
  readonly trashUsage?: readonly {
    readonly driveId: string;
    readonly bytes: number;
    readonly userId: string | null;
  }[];
}

/** A blob row as the blob actions see it. */
export interface BlobRowState {
  readonly size: number;
  readonly refCount: number;
  /** Marked for deletion (always `false` on OxiCloud's domain: no deletion protocol). */
  readonly deleting: boolean;
  /** When its orphan grace started (`null` while referenced). */
  readonly orphanedAt: Date | null;
}

/** A file that references a hash, with its owner (for "needs a person"). */
export interface ReferencingFile {
  readonly fileId: string;
  readonly name: string;
  readonly driveId: string;
  readonly ownerId: string;
  readonly ownerName: string;
  readonly size: number;
}

/** A blob row's counter and mark against the files that reference it (blobs_consistency's subject). */
export interface BlobCounterState {
  readonly refCount: number;
  /**
   * The count the row's `ref_count` should be: on OxiCloud's domain what fact
   * sheet §12 item 15 expects (the manifests listing the hash, else 0 for a
   * manifest's own `file_hash`, else the files, live and trashed, naming a
   * legacy blob).
   */
  readonly fileCount: number;
  /** ISO timestamp, or `null`. */
  readonly orphanedAt: string | null;
  /**
   * Marked for deletion: the deletion protocol owns the row. Always `false`
   * on OxiCloud's domain, which has no deletion protocol (no `deleting_at`).
   */
  readonly deleting: boolean;
  /**
   * The domain never lowers a count (OxiCloud, fact sheet §5 and §12 item
   * 15): a `ref_count` above `fileCount` is a leak a person decides on
   * (an upload in flight may hold the difference), never written lower.
   */
  readonly refuseLowering?: boolean;
  /**
   * `orphaned_at` means something only at `ref_count = 0` (OxiCloud §12 item
   * 16): a mark on a referenced row is no disagreement.
   */
  readonly markOnlyAtZero?: boolean;
  /** What `fileCount` counts, for the line's text. @defaultValue 'referencing file(s)' */
  readonly countBasis?: string;
}

/** A chunk manifest's counter against the files naming it (manifests_consistency's subject, OxiCloud §12 item 14). */
export interface ManifestCounterState {
  readonly refCount: number;
  /** The files, live and trashed, whose `blob_hash` is the manifest's `file_hash`, counted now. */
  readonly fileCount: number;
  /** The first of those files by id (at most the `limit` asked for): the files at risk while the count was low. */
  readonly fileIds: readonly string[];
}

/** A row naming a file or folder by text id (references_consistency's subject, OxiCloud §12 item 25). */
export interface ReferenceRowState {
  readonly itemType: string | null;
  readonly itemId: string | null;
  /** Why it dangles now (`missing`, `not_a_uuid`, `unknown_type`); `null` when its item exists. */
  readonly reason: string | null;
}

/** A file column OxiCloud derives by a formula (files_consistency, OxiCloud §12 items 22 and 23). */
export type DerivedFileColumn = 'category_order' | 'media_sort_date';

/** One derived column of a file row: what it holds, and what OxiCloud's formula gives now. */
export interface DerivedColumnState {
  /** As stored, as Postgres writes it as text (a number, or a timestamp with its microseconds). */
  readonly recorded: string;
  readonly expected: string;
}

/** A face (`faces.faces`) against its file's content (references_consistency's `stale_face_hash`). */
export interface FaceRowState {
  readonly fileId: string;
  /** The content hash the face was found in; `null` when none is recorded. */
  readonly faceHash: string | null;
  /** Its file's `blob_hash` now. */
  readonly fileHash: string;
}

/** A role grant and what grants_consistency judges about it. */
export interface GrantRowState {
  readonly subjectId: string;
  readonly resourceType: string;
  readonly resourceId: string;
  readonly role: string;
  /** ISO timestamp, or `null` (never expires). */
  readonly expiresAt: string | null;
  /** Whether the drive/folder/file its `resource_type` names exists. */
  readonly resourceExists: boolean;
  /** `expires_at` is past (the database's `now()`). */
  readonly expired: boolean;
}

/** One transaction of the repair store. */
export interface RepairTx {
  /**
   * Runs `fn` under a savepoint: when it throws, its writes are rolled back
   * (the transaction goes on) and the error is rethrown.
   */
  attempt<T>(fn: () => Promise<T>): Promise<T>;
  driveUsage(driveId: string, lock: boolean): Promise<DriveUsageState | null>;
  setDriveUsedBytes(driveId: string, bytes: number): Promise<void>;
  userUsage(userId: string, lock: boolean): Promise<UserUsageState | null>;
  setUserUsedBytes(userId: string, bytes: number): Promise<void>;
  /** Adds `delta` to a drive's `used_bytes` and its owner's envelope. */
  addUsage(driveId: string, delta: number): Promise<void>;
  /**
   * The folder and every folder below it whose stored `path`/`lpath` differ
   * from what the parent chain (from the root) gives; the folder itself
   * first, always (`null` when it is gone or its chain does not reach a root).
   */
  folderPaths(folderId: string, lock: boolean): Promise<readonly FolderPathRow[] | null>;
  /** Writes the expected `path`/`lpath` of the folder and its subtree; returns the rows changed. */
  rewriteFolderPaths(folderId: string): Promise<number>;
  fileBlobSize(fileId: string, lock: boolean): Promise<FileBlobSizeState | null>;
  setFileSize(fileId: string, size: number): Promise<void>;
  trashedParent(type: 'file' | 'folder', id: string, lock: boolean): Promise<TrashedParentState | null>;
  restoreFolders(folderIds: readonly string[]): Promise<void>;
  trashRows(folderIds: readonly string[], fileIds: readonly string[]): Promise<void>;
  blobRow(hash: string, lock: boolean): Promise<BlobRowState | null>;
  /** How many files reference the hash, and the first `limit` of them. */
  referencingFiles(hash: string, limit: number): Promise<{ count: number; files: ReferencingFile[] }>;
  /** Inserts (or revives) the row through the reserve function; returns its status. */
  reserveBlobRow(hash: string, size: number): Promise<string>;
  /** Marks a live unreferenced row for deletion (protocol step 1); `false` when it is not that any more. */
  markBlobForDeletion(hash: string): Promise<boolean>;
  /**
   * Inserts a row already marked for deletion (bytes without a row; with
   * `orphanRemoval: 'dedup_gc'`: a row at `ref_count 0` with `orphaned_at`,
   * `dedup_gc`'s to collect); `false` when a row or a reference appeared.
   */
  insertMarkedBlobRow(hash: string, size: number): Promise<boolean>;
  /** The blob row's counter and mark, with the files counted now (`lock`: the row's lock first). */
  blobCounters(hash: string, lock: boolean): Promise<BlobCounterState | null>;
  /**
   * Sets the row's `ref_count`; `orphaned_at` becomes `NULL` when it is
   * above 0, else stays as recorded or, when unset, `now()`.
   */
  setBlobRefCount(hash: string, refCount: number): Promise<void>;
  /**
   * The manifest's counter and the files naming it now (`lock`: the row's
   * lock first); `null` when it is gone. Absent on a domain without chunk
   * manifests.
   */
  manifestCounters?(fileHash: string, lock: boolean, limit: number): Promise<ManifestCounterState | null>;
  /** Raises the manifest's `ref_count` to `refCount`; refuses a lower value. */
  raiseManifestRefCount?(fileHash: string, refCount: number): Promise<void>;
  /**
   * The row of `source` with that key, and why it dangles now (`lock`: its
   * row lock); `null` when it is gone. Only for the sources of
   * {@link RepairTx.deletableReferences}.
   */
  referenceRow?(source: ReferenceSource, id: string, lock: boolean): Promise<ReferenceRowState | null>;
  /** Deletes that row; `false` when it was gone. */
  deleteReference?(source: ReferenceSource, id: string): Promise<boolean>;
  /** The sources whose dangling rows this store deletes. */
  readonly deletableReferences?: readonly ReferenceSource[];
  /**
   * The file's `column` and what OxiCloud's formula gives for it now
   * (`lock`: the file row's lock first); `null` when the file is gone.
   * Absent on a domain without these columns.
   */
  derivedFileColumn?(
    fileId: string,
    column: DerivedFileColumn,
    lock: boolean,
  ): Promise<DerivedColumnState | null>;
  /** Writes the formula's value into the file's `column`. */
  setDerivedFileColumn?(fileId: string, column: DerivedFileColumn): Promise<void>;
  /** The face and its file's hash now (`lock`: the face row's lock); `null` when it is gone. */
  faceRow?(faceId: string, lock: boolean): Promise<FaceRowState | null>;
  /** Deletes the face; `false` when it was gone. */
  deleteFace?(faceId: string): Promise<boolean>;
  /** The grant (`lock`: its row lock), `null` when it is gone. */
  grantRow(grantId: string, lock: boolean): Promise<GrantRowState | null>;
  /** Deletes the grant; `false` when it was gone. */
  deleteGrant(grantId: string): Promise<boolean>;
}

/** Transactions over the storage domain, plus the deletion protocol's last step. */
export interface RepairStore {
  /**
   * How bytes nothing references are removed:
   * - `deletion_protocol` (the default when unset; `OxiRepairStore` does not
   *   use it): the item marks the row for deletion, then
   *   {@link finishBlobDeletion} deletes the bytes and the row;
   * - `dedup_gc` (OxiCloud's domain, which has no deletion protocol): the
   *   item gives the bytes a row at `ref_count 0` with `orphaned_at`
   *   (`insertMarkedBlobRow`), so `dedup_gc` moves them to its quarantine
   *   past its grace, re-checking every reference; `markBlobForDeletion` and
   *   `finishBlobDeletion` refuse.
   */
  readonly orphanRemoval?: 'deletion_protocol' | 'dedup_gc';
  /** The run's checkpoint transaction as a {@link RepairTx} (the repair run's item writes commit with its cursor). */
  inTransaction(tx: RunTransaction): RepairTx;
  /** Runs `fn` in a read-only transaction (plans). */
  read<T>(fn: (tx: RepairTx) => Promise<T>): Promise<T>;
  /** Runs `fn` in a read-write transaction (one applied item). */
  write<T>(fn: (tx: RepairTx) => Promise<T>): Promise<T>;
  /**
   * Deletion protocol step 3 for one marked row, as `dedup_gc` does it
   * (lock the marked row, delete the bytes, then the row). Returns whether
   * the row and bytes are gone.
   */
  finishBlobDeletion(hash: string, deleteBytes: (hash: string) => Promise<void>): Promise<boolean>;
}
