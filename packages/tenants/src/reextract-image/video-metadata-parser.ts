import type { Readable } from 'node:stream';
import { parseStream } from 'music-metadata';
import type { ImageMetadata } from '../ports/media-file-repository.js';

/** MP4/QuickTime count from 1904; a zero creation time lands there and means "not set". */
const FIRST_PLAUSIBLE_YEAR = 1905;

/**
 * Reads the container creation time (MP4/QuickTime `mvhd`) and, where the
 * container gives them, the video track's pixel dimensions, with
 * music-metadata. Camera make and model are not read from video containers.
 *
 * @throws when music-metadata cannot read the container.
 */
export async function parseVideoMetadata(
  stream: Readable,
  mimeType: string,
  size: number,
): Promise<ImageMetadata> {
  const parsed = await parseStream(stream, { mimeType, size }, { skipCovers: true, skipPostHeaders: true });
  const created = parsed.format.creationTime;
  const capturedAt =
    created instanceof Date &&
    !Number.isNaN(created.getTime()) &&
    created.getUTCFullYear() >= FIRST_PLAUSIBLE_YEAR
      ? created
      : null;
  const video = parsed.format.trackInfo.find((track) => track.video !== undefined)?.video;
  return {
    capturedAt,
    cameraMake: null,
    cameraModel: null,
    width: video?.pixelWidth ?? null,
    height: video?.pixelHeight ?? null,
  };
}
