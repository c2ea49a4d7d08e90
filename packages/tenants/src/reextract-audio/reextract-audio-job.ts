import { toReadable } from '../blob-stream.js';
import { REEXTRACT_AUDIO_JOB_NAME } from '../job-names.js';
import {
  createMediaReextractJob,
  type MediaReextractJob,
  type MediaReextractJobOptions,
} from '../media-reextract/media-reextract-job.js';
import type { AudioMetadata } from '../ports/media-file-repository.js';
import { parseAudioMetadata } from './audio-metadata-parser.js';

/** Mime-type prefixes the audio walk covers. */
export const AUDIO_MIME_PREFIXES: readonly string[] = ['audio/'];

/** Options of {@link createReextractAudioJob}. */
export type ReextractAudioJobOptions = MediaReextractJobOptions;

/**
 * Creates `reextract_audio`: walks the `audio/*` files of `storage.files` by
 * id, reads each blob's tags and format with music-metadata and upserts
 * `storage.audio_metadata` (title, artist, album, genre, year, track number,
 * duration, bitrate, codec). Missing or unparsable bytes are counted in
 * `stats.failed_files` and skipped. Params: `batch_size`, `concurrency`
 * (default 2), `throttle_ms`.
 */
export function createReextractAudioJob(options: ReextractAudioJobOptions): MediaReextractJob {
  return createMediaReextractJob<AudioMetadata>(
    {
      name: REEXTRACT_AUDIO_JOB_NAME,
      mimePrefixes: AUDIO_MIME_PREFIXES,
      extract: (file, stream) => parseAudioMetadata(toReadable(stream), file.mimeType, file.size),
      upsert: (files, fileId, metadata) => files.upsertAudioMetadata(fileId, metadata),
    },
    options,
  );
}

export { REEXTRACT_AUDIO_JOB_NAME };
