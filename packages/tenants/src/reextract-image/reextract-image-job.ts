import { readPrefix, toReadable } from '../blob-stream.js';
import { REEXTRACT_IMAGE_JOB_NAME } from '../job-names.js';
import {
  createMediaReextractJob,
  type MediaReextractJob,
  type MediaReextractJobOptions,
} from '../media-reextract/media-reextract-job.js';
import type { ImageMetadata } from '../ports/media-file-repository.js';
import { parseImageMetadata } from './image-metadata-parser.js';
import { parseVideoMetadata } from './video-metadata-parser.js';

/** Mime-type prefixes the image walk covers. */
export const IMAGE_MIME_PREFIXES: readonly string[] = ['image/', 'video/'];

/** Bytes read from a JPEG: its EXIF (APP1, at most 64 KiB) and SOF come first. */
const JPEG_PREFIX_BYTES = 1024 * 1024;
/** Bytes read from any other image (TIFF/HEIC may keep EXIF further in). */
const IMAGE_MAX_BYTES = 64 * 1024 * 1024;

/** Options of {@link createReextractImageJob}. */
export type ReextractImageJobOptions = MediaReextractJobOptions;

/**
 * Creates `reextract_image`: walks the `image/*` and `video/*` files of
 * `storage.files` by id and upserts `storage.image_metadata`. Images: exifr
 * reads DateTimeOriginal (else CreateDate) as the capture date — in the
 * file's own OffsetTime when it has one, else as UTC — plus Make, Model and
 * the pixel dimensions (else the JPEG/PNG/GIF header's). Videos: the
 * container's creation time and track dimensions via music-metadata.
 * Missing or unparsable bytes are counted in `stats.failed_files` and
 * skipped. Params: `batch_size`, `concurrency` (default 2), `throttle_ms`.
 */
export function createReextractImageJob(options: ReextractImageJobOptions): MediaReextractJob {
  return createMediaReextractJob<ImageMetadata>(
    {
      name: REEXTRACT_IMAGE_JOB_NAME,
      mimePrefixes: IMAGE_MIME_PREFIXES,
      async extract(file, stream) {
        if (file.mimeType.startsWith('video/')) {
          return parseVideoMetadata(toReadable(stream), file.mimeType, file.size);
        }
        const limit = file.mimeType === 'image/jpeg' ? JPEG_PREFIX_BYTES : IMAGE_MAX_BYTES;
        return parseImageMetadata(await readPrefix(stream, limit));
      },
      upsert: (files, fileId, metadata) => files.upsertImageMetadata(fileId, metadata),
    },
    options,
  );
}

export { REEXTRACT_IMAGE_JOB_NAME };
