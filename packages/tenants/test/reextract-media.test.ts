import { describe, expect, it } from 'vitest';
import type { MediaFileRow } from '../src/ports/media-file-repository.js';
import { createReextractAudioJob, REEXTRACT_AUDIO_JOB_NAME } from '../src/reextract-audio/index.js';
import { createReextractImageJob, parseExifDate, sniffDimensions } from '../src/reextract-image/index.js';
import {
  type AudioTags,
  JPEG_HEIGHT,
  JPEG_WIDTH,
  MP3_FRAME_SECONDS,
  makeJpeg,
  makeMp3,
  makeMp4,
  makeWav,
} from './fixtures/media-fixtures.js';
import {
  fakeHash,
  hex,
  MemoryBlobStorage,
  MemoryJobStore,
  MemoryMediaFiles,
} from './fixtures/part2-fakes.js';

const SONG: AudioTags = {
  title: 'Blue in Green',
  artist: 'Miles Davis',
  album: 'Kind of Blue',
  genre: 'Jazz',
  year: 1959,
  track: 3,
};
const WAV_TAGS: AudioTags = {
  title: 'Field note',
  artist: 'Recorder',
  album: 'Walks',
  genre: 'Ambient',
  year: 2021,
  track: 12,
};

/** File ids in a known order (the walk goes by id). */
const fileId = (n: number) => `0190a000-0000-7000-8000-${String(n).padStart(12, '0')}`;

function library(entries: Array<{ n: number; mime: string; bytes: Uint8Array | null }>) {
  const blobs = new MemoryBlobStorage('local');
  const rows: MediaFileRow[] = entries.map(({ n, mime, bytes }) => {
    const content = bytes ?? Buffer.from(`gone ${n}`);
    const hash = fakeHash(content);
    if (bytes) blobs.blobs.set(hash, bytes);
    return { id: fileId(n), blobHash: hash, size: content.length, mimeType: mime };
  });
  return { blobs, files: new MemoryMediaFiles(rows) };
}

const signal = () => new AbortController().signal;

describe('reextract params', () => {
  const { blobs, files } = library([]);
  const job = createReextractAudioJob({ files, blobs });

  it('fills in the defaults and refuses bad or unknown fields by name', () => {
    expect(job.validateParams(undefined)).toEqual({
      ok: true,
      params: { batch_size: 1000, concurrency: 2, throttle_ms: 0 },
    });
    const bad = job.validateParams({ batch_size: 0, throttle_ms: -1, batchsize: 5, deep: true });
    expect(bad.ok).toBe(false);
    const message = bad.ok ? '' : bad.message;
    expect(message).toMatch(/batch_size: .*>=1/);
    expect(message).toMatch(/throttle_ms: .*>=0/);
    expect(message).toMatch(/batchsize/);
    expect(message).not.toMatch(/deep/);
  });
});

describe('reextract_audio', () => {
  it('upserts the tags of MP3 and WAV files, counts missing and unparsable ones, ignores non-audio', async () => {
    const { blobs, files } = library([
      { n: 1, mime: 'audio/mpeg', bytes: makeMp3(SONG, 40) },
      { n: 2, mime: 'audio/wav', bytes: makeWav(WAV_TAGS, 2) },
      { n: 3, mime: 'audio/mpeg', bytes: null },
      { n: 4, mime: 'audio/flac', bytes: Buffer.from('this is not a flac file at all') },
      { n: 5, mime: 'image/jpeg', bytes: makeJpeg() },
    ]);
    const job = createReextractAudioJob({ files, blobs });
    expect(job.name).toBe(REEXTRACT_AUDIO_JOB_NAME);
    expect(await job.estimateTotal({})).toBe(4);
    const store = new MemoryJobStore({});
    expect(await job.runResumable(store, signal())).toEqual({ kind: 'completed' });

    const mp3 = files.audio.get(fileId(1));
    expect(mp3).toMatchObject({
      title: SONG.title,
      artist: SONG.artist,
      album: SONG.album,
      genre: SONG.genre,
      year: SONG.year,
      trackNumber: SONG.track,
      bitrate: 128_000,
      codec: 'MPEG 1 Layer 3',
    });
    expect(mp3?.durationSeconds).toBeCloseTo(40 * MP3_FRAME_SECONDS, 1);
    expect(files.audio.get(fileId(2))).toEqual({
      title: WAV_TAGS.title,
      artist: WAV_TAGS.artist,
      album: WAV_TAGS.album,
      genre: WAV_TAGS.genre,
      year: WAV_TAGS.year,
      trackNumber: WAV_TAGS.track,
      durationSeconds: 2,
      bitrate: 128_000,
      codec: 'PCM',
    });
    expect([...files.audio.keys()].sort()).toEqual([fileId(1), fileId(2)]);
    expect(store.stats).toEqual({
      count: 2,
      scanned_count: 4,
      updated_files: 2,
      failed_files: 2,
      vanished_files: 0,
    });
    expect(hex(store.cursor)).toBe(fileId(4).replaceAll('-', ''));
  });

  it('pauses on CancelRequested with the last file id, and the resume starts after it', async () => {
    const entries = Array.from({ length: 5 }, (_, i) => ({
      n: i + 1,
      mime: 'audio/mpeg',
      bytes: makeMp3({ ...SONG, track: i + 1 }, 2),
    }));
    const { blobs, files } = library(entries);
    const job = createReextractAudioJob({ files, blobs });
    const store = new MemoryJobStore({ batch_size: 2, concurrency: 1 });
    store.statuses = ['CancelRequested'];
    const outcome = await job.runResumable(store, signal());
    expect(outcome.kind === 'paused' && hex(outcome.cursor)).toBe(fileId(2).replaceAll('-', ''));
    expect(files.audio.size).toBe(2);
    files.audio.clear();
    store.statuses = ['Running'];
    expect(await job.runResumable(store, signal())).toEqual({ kind: 'completed' });
    expect([...files.audio.keys()].sort()).toEqual([fileId(3), fileId(4), fileId(5)]);
    expect(files.audio.get(fileId(5))?.trackNumber).toBe(5);
    expect(store.stats).toMatchObject({ count: 5, updated_files: 5, failed_files: 0 });
  });
});

describe('reextract_image', () => {
  const exif = { dateTimeOriginal: '2021:07:14 09:30:00', make: 'Acme', model: 'Cam 9' };

  it('upserts EXIF capture date, camera and size; header size without EXIF; video creation time', async () => {
    const { blobs, files } = library([
      { n: 1, mime: 'image/jpeg', bytes: makeJpeg(exif) },
      { n: 2, mime: 'image/jpeg', bytes: makeJpeg() },
      { n: 3, mime: 'video/mp4', bytes: makeMp4(new Date('2020-05-06T07:08:09Z')) },
      { n: 4, mime: 'image/jpeg', bytes: Buffer.from('not a jpeg, just text') },
      { n: 5, mime: 'image/png', bytes: null },
      { n: 6, mime: 'audio/mpeg', bytes: makeMp3(SONG, 2) },
    ]);
    const job = createReextractImageJob({ files, blobs });
    expect(await job.estimateTotal({})).toBe(5);
    const store = new MemoryJobStore({ concurrency: 3 });
    expect(await job.runResumable(store, signal())).toEqual({ kind: 'completed' });
    expect(files.image.get(fileId(1))).toEqual({
      capturedAt: new Date('2021-07-14T09:30:00Z'),
      cameraMake: 'Acme',
      cameraModel: 'Cam 9',
      width: JPEG_WIDTH,
      height: JPEG_HEIGHT,
    });
    expect(files.image.get(fileId(2))).toEqual({
      capturedAt: null,
      cameraMake: null,
      cameraModel: null,
      width: JPEG_WIDTH,
      height: JPEG_HEIGHT,
    });
    expect(files.image.get(fileId(3))).toMatchObject({ capturedAt: new Date('2020-05-06T07:08:09Z') });
    expect([...files.image.keys()].sort()).toEqual([fileId(1), fileId(2), fileId(3)]);
    expect(store.stats).toEqual({
      count: 3,
      scanned_count: 5,
      updated_files: 3,
      failed_files: 2,
      vanished_files: 0,
    });
  });

  it('reads EXIF dates as UTC unless the file gives an offset, and refuses impossible ones', () => {
    expect(parseExifDate('2021:07:14 09:30:00')).toEqual(new Date('2021-07-14T09:30:00Z'));
    expect(parseExifDate('2021:07:14 09:30:00', '+02:00')).toEqual(new Date('2021-07-14T07:30:00Z'));
    expect(parseExifDate('2021:07:14 09:30:00', '-05:30')).toEqual(new Date('2021-07-14T15:00:00Z'));
    expect(parseExifDate('0000:00:00 00:00:00')).toBeNull();
    expect(parseExifDate('2021:02:30 10:00:00')).toBeNull();
    expect(parseExifDate(undefined)).toBeNull();
  });

  it('sniffs JPEG, PNG and GIF dimensions from their headers', () => {
    expect(sniffDimensions(makeJpeg())).toEqual({ width: JPEG_WIDTH, height: JPEG_HEIGHT });
    const png = Buffer.alloc(24);
    png.writeUInt32BE(0x89504e47, 0);
    png.write('IHDR', 12, 'latin1');
    png.writeUInt32BE(640, 16);
    png.writeUInt32BE(480, 20);
    expect(sniffDimensions(png)).toEqual({ width: 640, height: 480 });
    const gif = Buffer.from('GIF89a\x20\x03\x58\x02', 'latin1');
    expect(sniffDimensions(gif)).toEqual({ width: 800, height: 600 });
    expect(sniffDimensions(Buffer.from('plain text'))).toBeNull();
  });
});
