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

/**
 * What `storage_consistency`'s thumbnails phase walks: every thumbnailed
 * content hash in ascending order. A port the check owns; the local-disk
 * adapter is `LocalThumbnailStore` of `@oxicloud/storage`.
 */
export interface ThumbnailStore {
  /** Up to `limit` hashes after `startAfter` (exclusive), ascending; `[]` when there is no thumbnail folder. */
  list(options: { readonly startAfter: string | null; readonly limit: number }): Promise<ThumbnailEntry[]>;
  /** The thumbnails of `hash` now; `null` when none is left. */
  stat(hash: string): Promise<ThumbnailEntry | null>;
}
