/**
 * Thumbnails: OxiCloud keeps them on the server's local disk, outside the
 * blob store, as `<storage root>/.thumbnails/{icon,preview,large}/<file_hash>.webp`
 * (keyed by `files.blob_hash`, never a chunk hash). They are not blobs, so
 * they do not go through `BlobStorage`; their layout is `@oxicloud/storage`'s
 * (`thumbnailPath`, `THUMBNAIL_SIZES`), which its `LocalThumbnailStore` lists.
 * Beside them, a few files keyed by file id: client-supplied thumbnails
 * `.thumbnails/{icon,preview,large}/ext-<file_id>.jpg` and transcoded images
 * `.transcoded/webp/<file_id>.webp` (or the `.webp.skip` marker), for files
 * that exist (`externalThumbnailPath`, `transcodedImagePath`).
 */
import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  externalThumbnailPath,
  THUMBNAIL_SIZES,
  THUMBNAILS_DIR,
  type ThumbnailSize,
  thumbnailHashOf,
  thumbnailPath,
  transcodedImagePath,
} from '@oxicloud/storage';
import { blobBytes } from '../blob-content.js';
import { rows, type SqlClient } from '../sql-client.js';

export { THUMBNAIL_SIZES, thumbnailPath };

/** Bytes per generated thumbnail, by size. */
const THUMBNAIL_BYTES = { icon: 600, preview: 2400, large: 6000 } as const;
/** Thumbnail files written at once. */
const THUMBNAIL_CONCURRENCY = 32;
/** PRNG stream of the thumbnail bytes. */
const THUMBNAIL_STREAM = 106;
/** Files of the image contents that get file-id keyed files: this many live ones, and one trashed. */
const FILE_ID_LIVE_FILES = 3;
/** Bytes of a client-supplied thumbnail, and of a transcoded image. */
const EXTERNAL_THUMBNAIL_BYTES = 1800;
const TRANSCODED_BYTES = 5000;

/** A small WebP-shaped file: a RIFF/WEBP header, then deterministic bytes. */
function webpBytes(seed: number, index: number, size: number): Uint8Array {
  const bytes = blobBytes(seed, THUMBNAIL_STREAM, index, size, 'other');
  const head = new DataView(bytes.buffer, bytes.byteOffset, 16);
  bytes.set(new TextEncoder().encode('RIFF'), 0);
  head.setUint32(4, size - 8, true);
  bytes.set(new TextEncoder().encode('WEBPVP8 '), 8);
  return bytes;
}

/**
 * Writes the three thumbnails of each file hash under `root`. Returns how
 * many files were written. With `modifiedAt`, each file gets that time (a
 * thumbnail made days ago, past a check's grace, as the generator's blobs are).
 */
export async function writeThumbnails(
  root: string,
  seed: number,
  fileHashes: readonly string[],
  modifiedAt?: Date,
): Promise<number> {
  for (const size of THUMBNAIL_SIZES) await mkdir(join(root, THUMBNAILS_DIR, size), { recursive: true });
  const jobs = fileHashes.flatMap((hash, i) =>
    THUMBNAIL_SIZES.map((size, s) => async () => {
      const path = thumbnailPath(root, size, hash);
      await writeFile(path, webpBytes(seed, i * 3 + s, THUMBNAIL_BYTES[size]));
      if (modifiedAt !== undefined) await utimes(path, modifiedAt, modifiedAt);
    }),
  );
  // A few writes at a time: thousands of small files, one after another, were most of a 14,400-file run.
  for (let at = 0; at < jobs.length; at += THUMBNAIL_CONCURRENCY) {
    await Promise.all(jobs.slice(at, at + THUMBNAIL_CONCURRENCY).map((job) => job()));
  }
  return jobs.length;
}

/** A small JPEG-shaped file: the SOI and APP0 markers, then deterministic bytes. */
function jpegBytes(seed: number, index: number, size: number): Uint8Array {
  const bytes = blobBytes(seed, THUMBNAIL_STREAM, index, size, 'other');
  bytes.set([0xff, 0xd8, 0xff, 0xe0], 0);
  return bytes;
}

/** Which of OxiCloud's file-id keyed files {@link writeFileIdFiles} writes. */
export interface FileIdFilesOptions {
  /** `ext-<file_id>.jpg` in the icon and preview folders. @defaultValue true */
  readonly externalThumbnails?: boolean;
  /**
   * `.transcoded/webp/<file_id>.webp`, or `'skip'` for the `.webp.skip`
   * marker OxiCloud leaves when the WebP was not smaller; `false` for none.
   * @defaultValue true
   */
  readonly transcoded?: boolean | 'skip';
  /** Each file's modification time (e.g. days ago, past a check's grace). @defaultValue now */
  readonly modifiedAt?: Date;
}

/**
 * Writes OxiCloud's file-id keyed files of each of `fileIds` under `root`
 * (any ids: a fault can name a file id no row has). Returns how many files
 * were written.
 */
export async function writeFileIdFiles(
  root: string,
  seed: number,
  fileIds: readonly string[],
  options: FileIdFilesOptions = {},
): Promise<number> {
  const { externalThumbnails = true, transcoded = true, modifiedAt } = options;
  let written = 0;
  const put = async (path: string, bytes: Uint8Array) => {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, bytes);
    if (modifiedAt !== undefined) await utimes(path, modifiedAt, modifiedAt);
    written++;
  };
  for (const [i, id] of fileIds.entries()) {
    if (externalThumbnails) {
      for (const [s, size] of (['icon', 'preview'] as const).entries()) {
        await put(
          externalThumbnailPath(root, size, id),
          jpegBytes(seed, 1_000_000 + i * 2 + s, EXTERNAL_THUMBNAIL_BYTES),
        );
      }
    }
    if (transcoded === 'skip') await put(transcodedImagePath(root, id, true), new Uint8Array());
    else if (transcoded)
      await put(transcodedImagePath(root, id), webpBytes(seed, 2_000_000 + i, TRANSCODED_BYTES));
  }
  return written;
}

/**
 * Writes OxiCloud's file-id keyed files for a few files that exist (of the
 * image contents `fileHashes`: up to three live files and one trashed file,
 * whose files are not orphans either): each gets client-supplied thumbnails
 * and a transcoded image, the last one the `.webp.skip` marker instead
 * ({@link writeFileIdFiles}). So a clean dataset walks
 * `storage_consistency`'s file-id phase and gives no finding. Returns how
 * many files were written (0 with no image file).
 */
export async function writeFileIdThumbnails(
  root: string,
  seed: number,
  client: SqlClient,
  fileHashes: readonly string[],
  modifiedAt?: Date,
): Promise<number> {
  if (fileHashes.length === 0) return 0;
  const files = await rows<{ id: string }>(
    client,
    `(SELECT id::text FROM storage.files WHERE blob_hash = ANY($1::text[]) AND NOT is_trashed
       ORDER BY name, id LIMIT ${FILE_ID_LIVE_FILES})
     UNION ALL
     (SELECT id::text FROM storage.files WHERE blob_hash = ANY($1::text[]) AND is_trashed ORDER BY name, id LIMIT 1)`,
    [[...fileHashes]],
  );
  const ids = files.map((f) => f.id);
  const when = modifiedAt === undefined ? {} : { modifiedAt };
  return (
    (await writeFileIdFiles(root, seed, ids.slice(0, -1), when)) +
    (await writeFileIdFiles(root, seed + 1, ids.slice(-1), { ...when, transcoded: 'skip' }))
  );
}

/** The file hashes that have a thumbnail of `size` under `root` (for checks and tests). */
export async function listThumbnailHashes(root: string, size: ThumbnailSize): Promise<string[]> {
  try {
    const names = await readdir(join(root, THUMBNAILS_DIR, size));
    return names.map(thumbnailHashOf).filter((h): h is string => h !== null);
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return [];
    throw err;
  }
}
