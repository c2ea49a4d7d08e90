/**
 * Thumbnails: OxiCloud keeps them on the server's local disk, outside the
 * blob store, as `<storage root>/.thumbnails/{icon,preview,large}/<file_hash>.webp`
 * (keyed by `files.blob_hash`, never a chunk hash). They are not blobs, so
 * they do not go through `BlobStorage`: this file is the one place that
 * builds their paths.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { blobBytes } from '../blob-content.js';

/** OxiCloud's three thumbnail sizes (150, 400 and 800 px). */
export const THUMBNAIL_SIZES = ['icon', 'preview', 'large'] as const;
/** Bytes per generated thumbnail, by size. */
const THUMBNAIL_BYTES = { icon: 600, preview: 2400, large: 6000 } as const;
/** Thumbnail files written at once. */
const THUMBNAIL_CONCURRENCY = 32;
/** PRNG stream of the thumbnail bytes. */
const THUMBNAIL_STREAM = 106;

/** The path of one thumbnail under `root` (OxiCloud's storage path). */
export function thumbnailPath(
  root: string,
  size: (typeof THUMBNAIL_SIZES)[number],
  fileHash: string,
): string {
  return join(root, '.thumbnails', size, `${fileHash}.webp`);
}

/** A small WebP-shaped file: a RIFF/WEBP header, then deterministic bytes. */
function webpBytes(seed: number, index: number, size: number): Uint8Array {
  const bytes = blobBytes(seed, THUMBNAIL_STREAM, index, size, 'other');
  const head = new DataView(bytes.buffer, bytes.byteOffset, 16);
  bytes.set(new TextEncoder().encode('RIFF'), 0);
  head.setUint32(4, size - 8, true);
  bytes.set(new TextEncoder().encode('WEBPVP8 '), 8);
  return bytes;
}

/** Writes the three thumbnails of each file hash under `root`. Returns how many files were written. */
export async function writeThumbnails(
  root: string,
  seed: number,
  fileHashes: readonly string[],
): Promise<number> {
  for (const size of THUMBNAIL_SIZES) await mkdir(join(root, '.thumbnails', size), { recursive: true });
  const jobs = fileHashes.flatMap((hash, i) =>
    THUMBNAIL_SIZES.map(
      (size, s) => () =>
        writeFile(thumbnailPath(root, size, hash), webpBytes(seed, i * 3 + s, THUMBNAIL_BYTES[size])),
    ),
  );
  // A few writes at a time: thousands of small files, one after another, were most of a 14,400-file run.
  for (let at = 0; at < jobs.length; at += THUMBNAIL_CONCURRENCY) {
    await Promise.all(jobs.slice(at, at + THUMBNAIL_CONCURRENCY).map((job) => job()));
  }
  return jobs.length;
}

/** The file hashes that have a thumbnail of `size` under `root` (for checks and tests). */
export async function listThumbnailHashes(
  root: string,
  size: (typeof THUMBNAIL_SIZES)[number],
): Promise<string[]> {
  try {
    const names = await readdir(join(root, '.thumbnails', size));
    return names.filter((n) => n.endsWith('.webp')).map((n) => n.slice(0, -'.webp'.length));
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return [];
    throw err;
  }
}
