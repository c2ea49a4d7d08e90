import type { Readable } from 'node:stream';
import { type IAudioMetadata, parseStream } from 'music-metadata';
import type { AudioMetadata } from '../ports/media-file-repository.js';

const text = (value: string | undefined): string | null => {
  const trimmed = value?.trim();
  return trimmed ? trimmed : null;
};

const wholeNumber = (value: number | null | undefined, max: number): number | null =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= max
    ? Math.round(value)
    : null;

/** Maps music-metadata's result onto the columns of `storage.audio_metadata`. */
export function toAudioMetadata(parsed: IAudioMetadata): AudioMetadata {
  const { common, format } = parsed;
  const duration = format.duration;
  return {
    title: text(common.title),
    artist: text(common.artist ?? common.artists?.join(', ')),
    album: text(common.album),
    genre: text(common.genre?.filter((g) => g.trim() !== '').join(', ')),
    year: wholeNumber(common.year, 9999) || null,
    trackNumber: wholeNumber(common.track.no, 2_147_483_647),
    durationSeconds:
      typeof duration === 'number' && Number.isFinite(duration) && duration >= 0 ? duration : null,
    bitrate: wholeNumber(format.bitrate, 2_147_483_647),
    codec: text(format.codec ?? format.container),
  };
}

/**
 * Reads the tags and format of an audio stream with music-metadata (the mime
 * type picks the parser; `size` lets it estimate the duration of a CBR
 * stream without reading to the end). Covers are skipped.
 *
 * @throws when the bytes are not audio music-metadata can read, or carry
 * neither a recognisable format nor any tag.
 */
export async function parseAudioMetadata(
  stream: Readable,
  mimeType: string,
  size: number,
): Promise<AudioMetadata> {
  const parsed = await parseStream(stream, { mimeType, size }, { skipCovers: true });
  const metadata = toAudioMetadata(parsed);
  const hasTag = [metadata.title, metadata.artist, metadata.album, metadata.genre, metadata.year].some(
    (v) => v !== null,
  );
  if (metadata.codec === null && metadata.durationSeconds === null && !hasTag) {
    throw new Error(`no audio format or tag recognised in ${size} bytes of ${mimeType}`);
  }
  return metadata;
}
