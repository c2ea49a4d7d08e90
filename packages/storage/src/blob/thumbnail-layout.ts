/**
 * OxiCloud's thumbnail layout, the one place it is spelled out: under its
 * storage root, `.thumbnails/{icon,preview,large}/<file_hash>.<ext>`, keyed
 * by `files.blob_hash` (never a chunk hash), WebP or JPEG (fact sheet §12
 * item 19). They live on OxiCloud's local disk whatever the blob backend.
 * `ext-<file_id>.jpg` (external previews) and `.transcoded/webp/<file_id>.webp`
 * are keyed by file id and are not matched here.
 */
import { join } from 'node:path';
import { assertBlobHash } from './blob-hash.js';

/** The folder under the storage root that holds the thumbnails. */
export const THUMBNAILS_DIR = '.thumbnails';
/** OxiCloud's three thumbnail sizes (150, 400 and 800 px), each a folder. */
export const THUMBNAIL_SIZES = ['icon', 'preview', 'large'] as const;
/** One of {@link THUMBNAIL_SIZES}. */
export type ThumbnailSize = (typeof THUMBNAIL_SIZES)[number];
/** The file extensions OxiCloud writes thumbnails with. */
export const THUMBNAIL_EXTENSIONS = ['webp', 'jpg'] as const;

const THUMBNAIL_NAME = /^([0-9a-f]{64})\.(webp|jpg)$/;

/** The path of one thumbnail under `root` (OxiCloud's storage path). */
export function thumbnailPath(
  root: string,
  size: ThumbnailSize,
  fileHash: string,
  ext: (typeof THUMBNAIL_EXTENSIONS)[number] = 'webp',
): string {
  assertBlobHash(fileHash);
  return join(root, THUMBNAILS_DIR, size, `${fileHash}.${ext}`);
}

/** The content hash a thumbnail's file name carries; `null` for any other name. */
export function thumbnailHashOf(name: string): string | null {
  return THUMBNAIL_NAME.exec(name)?.[1] ?? null;
}
