/**
 * OxiCloud's thumbnail layout, the one place it is spelled out: under its
 * storage root, `.thumbnails/{icon,preview,large}/<file_hash>.<ext>`, keyed
 * by `files.blob_hash` (never a chunk hash), WebP or JPEG (fact sheet §12
 * item 19). They live on OxiCloud's local disk whatever the blob backend.
 *
 * Keyed by file id (`files.id`, lowercase UUID) instead (fact sheet §7):
 * client-supplied ("external", e.g. a video frame) thumbnails
 * `.thumbnails/{icon,preview,large}/ext-<file_id>.jpg`, JPEG only, in the
 * same size folders (OxiCloud's `ThumbnailService::store_external_thumbnail`),
 * and transcoded images `.transcoded/webp/<file_id>.webp` with the marker
 * `<file_id>.webp.skip` where the WebP did not come out smaller
 * (`ImageTranscodeService`).
 */
import { join } from 'node:path';
import { StorageError } from '../storage-error.js';
import { assertBlobHash } from './blob-hash.js';

/** The folder under the storage root that holds the thumbnails. */
export const THUMBNAILS_DIR = '.thumbnails';
/** OxiCloud's three thumbnail sizes (150, 400 and 800 px), each a folder. */
export const THUMBNAIL_SIZES = ['icon', 'preview', 'large'] as const;
/** One of {@link THUMBNAIL_SIZES}. */
export type ThumbnailSize = (typeof THUMBNAIL_SIZES)[number];
/** The file extensions OxiCloud writes thumbnails with. */
export const THUMBNAIL_EXTENSIONS = ['webp', 'jpg'] as const;

/** The folder under the storage root that holds the transcoded images. */
export const TRANSCODED_DIR = '.transcoded';
/** The one format OxiCloud transcodes to, a folder of {@link TRANSCODED_DIR}. */
export const TRANSCODED_FORMAT = 'webp';

const THUMBNAIL_NAME = /^([0-9a-f]{64})\.(webp|jpg)$/;
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const EXTERNAL_THUMBNAIL_NAME = new RegExp(`^ext-(${UUID})\\.jpg$`);
const TRANSCODED_NAME = new RegExp(`^(${UUID})\\.${TRANSCODED_FORMAT}(\\.skip)?$`);
const UUID_ONLY = new RegExp(`^${UUID}$`);

function assertFileId(fileId: string): void {
  if (!UUID_ONLY.test(fileId)) {
    throw new StorageError(
      'INVALID_ARGUMENT',
      `not a file id: ${JSON.stringify(fileId)}; expected a lowercase UUID (8-4-4-4-12 hex digits)`,
    );
  }
}

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

/** The path of a client-supplied thumbnail of file `fileId` under `root`: `.thumbnails/<size>/ext-<file_id>.jpg`. */
export function externalThumbnailPath(root: string, size: ThumbnailSize, fileId: string): string {
  assertFileId(fileId);
  return join(root, THUMBNAILS_DIR, size, `ext-${fileId}.jpg`);
}

/** The file id a client-supplied thumbnail's file name carries (`ext-<file_id>.jpg`); `null` for any other name. */
export function externalThumbnailFileIdOf(name: string): string | null {
  return EXTERNAL_THUMBNAIL_NAME.exec(name)?.[1] ?? null;
}

/**
 * The path of file `fileId`'s transcoded image under `root`
 * (`.transcoded/webp/<file_id>.webp`), or with `skip` of its marker
 * (`<file_id>.webp.skip`: the WebP was not smaller, so none is kept).
 */
export function transcodedImagePath(root: string, fileId: string, skip = false): string {
  assertFileId(fileId);
  return join(
    root,
    TRANSCODED_DIR,
    TRANSCODED_FORMAT,
    `${fileId}.${TRANSCODED_FORMAT}${skip ? '.skip' : ''}`,
  );
}

/** The file id a transcoded image's (or its skip marker's) file name carries; `null` for any other name. */
export function transcodedFileIdOf(name: string): string | null {
  return TRANSCODED_NAME.exec(name)?.[1] ?? null;
}
