/**
 * The `reextract_image` tenant: re-reads the capture date, camera and
 * dimensions of every image and video and upserts `storage.image_metadata`,
 * resumably, in file-id order.
 *
 * @packageDocumentation
 */
export type { MediaReextractJob, MediaReextractParams } from '../media-reextract/media-reextract-job.js';
export { mediaReextractParamsSchema } from '../media-reextract/media-reextract-job.js';
export { parseExifDate, parseImageMetadata, sniffDimensions } from './image-metadata-parser.js';
export type { ReextractImageJobOptions } from './reextract-image-job.js';
export {
  createReextractImageJob,
  IMAGE_MIME_PREFIXES,
  REEXTRACT_IMAGE_JOB_NAME,
} from './reextract-image-job.js';
export { parseVideoMetadata } from './video-metadata-parser.js';
