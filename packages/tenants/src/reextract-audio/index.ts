/**
 * The `reextract_audio` tenant: re-reads the tags of every audio file and
 * upserts `storage.audio_metadata`, resumably, in file-id order.
 *
 * @packageDocumentation
 */
export type { MediaReextractJob, MediaReextractParams } from '../media-reextract/media-reextract-job.js';
export { mediaReextractParamsSchema } from '../media-reextract/media-reextract-job.js';
export { parseAudioMetadata, toAudioMetadata } from './audio-metadata-parser.js';
export type { ReextractAudioJobOptions } from './reextract-audio-job.js';
export {
  AUDIO_MIME_PREFIXES,
  createReextractAudioJob,
  REEXTRACT_AUDIO_JOB_NAME,
} from './reextract-audio-job.js';
