/**
 * Thumbnails: OxiCloud keeps them on the server's local disk, outside the
 * blob store, as `<storage root>/.thumbnails/{icon,preview,large}/<file_hash>.webp`
 * (keyed by `files.blob_hash`, never a chunk hash). They are not blobs, so
 * they do not go through `BlobStorage`; their layout is `@oxicloud/storage`'s
 * (`thumbnailPath`, `THUMBNAIL_SIZES`), which its `LocalThumbnailStore` lists.
 */
import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  THUMBNAIL_SIZES,
  THUMBNAILS_DIR,
  type ThumbnailSize,
  thumbnailHashOf,
  thumbnailPath,
} from '@oxicloud/storage';
import { blobBytes } from '../blob-content.js';

export { THUMBNAIL_SIZES, thumbnailPath };

/** Bytes per generated thumbnail, by size. */
const THUMBNAIL_BYTES = { icon: 600, preview: 2400, large: 6000 } as const;
/** Thumbnail files written at once. */
const THUMBNAIL_CONCURRENCY = 32;
/** PRNG stream of the thumbnail bytes. */
const THUMBNAIL_STREAM = 106;

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
