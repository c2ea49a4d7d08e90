import exifr from 'exifr';
import { destroyStream, errorCode, readPrefix, toReadable } from '../blob-stream.js';
import type { BlobStorage } from '../ports/blob-storage.js';
import { parseVideoMetadata } from '../reextract-image/video-metadata-parser.js';
import type { MediaFileWithoutMetadata } from './file-blob-scan.js';

/**
 * Whether OxiCloud's extractor would have stored a metadata row for these
 * bytes (fact sheet §9): `true` it would, `false` it would not (no EXIF, no
 * creation time, no ID3v2 tag, or bytes it cannot parse), `null` the bytes
 * cannot be read (a missing object is `storage_consistency`'s finding).
 */
export interface MediaMetadataProbe {
  wouldStore(file: MediaFileWithoutMetadata): Promise<boolean | null>;
}

/** Bytes read from a JPEG: its EXIF is an APP1 segment of at most 64 KiB right after the start. */
const JPEG_PREFIX_BYTES = 128 * 1024;
/** Bytes read from any other image (TIFF or HEIC may keep EXIF further in). */
const IMAGE_PREFIX_BYTES = 1024 * 1024;

/**
 * An ID3v2 tag header (id3.org's ID3v2 structure, section 3.1): `ID3`, a
 * major version 2 to 4, a revision byte, flags, and a four-byte syncsafe
 * size. OxiCloud's `id3` crate stores a row for any such tag, one without
 * frames too, which music-metadata does not list among a file's tag types:
 * hence the header itself.
 */
function startsWithId3v2Tag(bytes: Uint8Array): boolean {
  if (bytes.length < 10) return false;
  const id = bytes[0] === 0x49 && bytes[1] === 0x44 && bytes[2] === 0x33;
  const major = bytes[3] ?? 0;
  const syncsafe = [6, 7, 8, 9].every((i) => ((bytes[i] ?? 0x80) & 0x80) === 0);
  return id && major >= 2 && major <= 4 && bytes[4] !== 0xff && syncsafe;
}

const EXIF_OPTIONS = { tiff: true, exif: true, gps: true, ifd1: false, xmp: false, icc: false };

/**
 * {@link MediaMetadataProbe} over a blob store, with the parsers the
 * re-extract jobs use, on the rules of OxiCloud's extractors:
 * - an image gets a row when its EXIF has any tag (OxiCloud's
 *   kamadak-exif pass) — a JFIF or PNG without EXIF gets none, and so do
 *   bytes that only look like an EXIF block (exifr's `errors`, no tag);
 * - a video when its container has a creation time;
 * - an audio file when it starts with an ID3v2 tag header (OxiCloud's
 *   `id3` crate reads nothing else; a tag without frames still gives a row).
 */
export function createMediaMetadataProbe(options: { readonly blobs: BlobStorage }): MediaMetadataProbe {
  const { blobs } = options;
  return {
    async wouldStore(file) {
      let stream: Awaited<ReturnType<BlobStorage['get']>>;
      try {
        stream = await blobs.get(file.blobHash);
      } catch (error) {
        if (errorCode(error) === 'NOT_FOUND' || errorCode(error) === 'INVALID_HASH') return null;
        throw error;
      }
      try {
        if (file.mimeType.startsWith('video/')) {
          const video = await parseVideoMetadata(toReadable(stream), file.mimeType, file.size).catch(
            () => null,
          );
          return video?.capturedAt != null;
        }
        if (file.mimeType.startsWith('audio/')) return startsWithId3v2Tag(await readPrefix(stream, 10));
        const bytes = await readPrefix(
          stream,
          file.mimeType.startsWith('image/jpeg') ? JPEG_PREFIX_BYTES : IMAGE_PREFIX_BYTES,
        );
        const tags = (await exifr.parse(bytes, EXIF_OPTIONS).catch(() => undefined)) as
          | Record<string, unknown>
          | undefined;
        // exifr answers `{ errors }` for bytes that only look like an EXIF block: no tag, no row.
        return tags !== undefined && tags !== null && Object.keys(tags).some((key) => key !== 'errors');
      } finally {
        destroyStream(stream);
      }
    },
  };
}
