/**
 * OxiCloud's thumbnails of one content hash: the files
 * `.thumbnails/{icon,preview,large}/<hash>.(webp|jpg)` under its storage
 * root (fact sheet §12 item 19). They are not blobs: OxiCloud keeps them on
 * its local disk, keyed by `files.blob_hash`, and makes them again on demand.
 */
export interface ThumbnailEntry {
  /** The content hash the thumbnails are named by. */
  readonly hash: string;
  /** Their paths relative to the storage root (`.thumbnails/icon/<hash>.webp`, …). */
  readonly files: readonly string[];
  /** Their bytes together. */
  readonly bytes: number;
  /** The newest file's modification time. */
  readonly modifiedAt: Date;
}

/** Some of OxiCloud's derived files of one file id: their paths, bytes together and newest time. */
export interface DerivedFiles {
  /** Their paths relative to the storage root. */
  readonly files: readonly string[];
  /** Their bytes together. */
  readonly bytes: number;
  /** The newest file's modification time. */
  readonly modifiedAt: Date;
}

/**
 * OxiCloud's files keyed by a file id (`storage.files.id`) rather than by
 * content (fact sheet §7 and §12 item 19); at least one of the two is set.
 * OxiCloud deletes them when it deletes the file, so a file id with no
 * `storage.files` row left them behind (a trashed file still has its row).
 */
export interface FileDerivativesEntry {
  /** The file id the files are named by (lowercase UUID). */
  readonly fileId: string;
  /**
   * Client-supplied ("external", e.g. a video frame) thumbnails:
   * `.thumbnails/{icon,preview,large}/ext-<file_id>.jpg`; `null` when none.
   */
  readonly externalThumbnails: DerivedFiles | null;
  /**
   * The transcoded image `.transcoded/webp/<file_id>.webp` and its
   * "transcoding did not pay" marker `<file_id>.webp.skip`; `null` when none.
   */
  readonly transcoded: DerivedFiles | null;
}

/**
 * What `storage_consistency`'s thumbnail phases walk: every thumbnailed
 * content hash in ascending order, then every file id with derived files in
 * ascending order. A port the check owns; the local-disk adapter is
 * `LocalThumbnailStore` of `@oxicloud/storage`.
 */
export interface ThumbnailStore {
  /** Up to `limit` hashes after `startAfter` (exclusive), ascending; `[]` when there is no thumbnail folder. */
  list(options: { readonly startAfter: string | null; readonly limit: number }): Promise<ThumbnailEntry[]>;
  /** The thumbnails of `hash` now; `null` when none is left. */
  stat(hash: string): Promise<ThumbnailEntry | null>;
  /**
   * Up to `limit` file ids after `startAfter` (exclusive), ascending (the
   * order of their lowercase text, which is Postgres' `uuid` order), each
   * with its derived files; `[]` when there are none.
   */
  listByFileId(options: {
    readonly startAfter: string | null;
    readonly limit: number;
  }): Promise<FileDerivativesEntry[]>;
  /** The derived files of `fileId` now; `null` when none is left. */
  statByFileId(fileId: string): Promise<FileDerivativesEntry | null>;
  /**
   * Removes these files (paths relative to the storage root, as an entry
   * lists them; anything that is not a thumbnail or transcoded file is
   * refused); a file already gone is not an error. Returns how many it
   * removed. Absent: the store is read-only (a repair needs a person).
   */
  remove?(files: readonly string[]): Promise<number>;
}
