import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecoverableEngine } from '@oxicloud/recoverable';
import type { Logger } from '@oxicloud/scheduler';
import { LocalFsBlobStorage } from '@oxicloud/storage';
import { type OxiCloudDatabase, OxiMediaFileRepository } from '@oxicloud/storage/oxicloud';
import {
  createReextractAudioJob,
  createReextractImageJob,
  REEXTRACT_AUDIO_JOB_NAME,
  REEXTRACT_IMAGE_JOB_NAME,
} from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type OxiWorld, oxiWorld } from '../../../packages/storage/src/oxicloud/test-fixtures.js';
import {
  type AudioTags,
  JPEG_HEIGHT,
  JPEG_WIDTH,
  makeJpeg,
  makeMp3,
  makeMp4,
  makeWav,
} from '../../../packages/tenants/test/fixtures/media-fixtures.js';

/**
 * reextract_audio and reextract_image end to end on OxiCloud's domain: file
 * rows uploaded as OxiCloud's upload path writes them (one-chunk CDC
 * content), their bytes in the real LocalFsBlobStorage read through
 * `OxiMediaFileRepository.contentReader`, real media built in code (an
 * ID3v2.3 MP3, a LIST/INFO WAV, an EXIF JPEG, an MP4), driven through the
 * RecoverableEngine; the rows land in OxiCloud's `audio.file_metadata` and
 * `storage.file_metadata` (whose trigger sets `files.media_sort_date`).
 * Multi-chunk media are `packages/storage/src/oxicloud/oxi-media-file-repository.test.ts`.
 */

let db: TestDatabase;
let kysely: Kysely<OxiCloudDatabase>;
let w: OxiWorld;
let files: OxiMediaFileRepository;
let root: string;
let blobs: LocalFsBlobStorage;
let engine: RecoverableEngine;
const lines: Array<Record<string, unknown>> = [];
const push = (fields: object, msg?: string) => lines.push({ ...fields, msg });
const logger: Logger = { info: push, warn: push, error: push, debug: () => undefined };

beforeEach(async () => {
  db = await createTestDatabase({ domain: 'oxicloud' });
  kysely = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool: db.pool }) });
  root = await mkdtemp(join(tmpdir(), 'oxicloud-reextract-'));
  blobs = new LocalFsBlobStorage({ root });
  files = new OxiMediaFileRepository(kysely);
  const reader = files.contentReader(blobs);
  engine = new RecoverableEngine({ pool: db.pool, logger });
  engine.register(createReextractAudioJob({ files, blobs: reader, logger }));
  engine.register(createReextractImageJob({ files, blobs: reader, logger }));
  w = await oxiWorld(db.pool);
  lines.length = 0;
});
afterEach(async () => {
  await engine.shutdown({ timeoutMs: 1000 }).catch(() => undefined);
  await db.drop();
  await rm(root, { recursive: true, force: true });
});

/**
 * A file uploaded as OxiCloud writes it (one chunk: every medium here is
 * under 1 MiB); its chunk's bytes go to the local backend unless
 * `storeBytes` is false. Returns the file id.
 */
async function addFile(name: string, mime: string, bytes: Uint8Array, storeBytes = true): Promise<string> {
  const upload = await w.upload({ name, mime, data: Buffer.from(bytes), chunkSize: 1024 * 1024 });
  if (storeBytes) for (const o of upload.objects) await blobs.put(o.hash, o.bytes, o.size);
  return upload.fileId;
}

const SONG: AudioTags = {
  title: 'So What',
  artist: 'Miles Davis',
  album: 'Kind of Blue',
  genre: 'Jazz',
  year: 1959,
  track: 1,
};
const RECORDING: AudioTags = {
  title: 'Harbour',
  artist: 'Field Recorder',
  album: 'Coast',
  genre: 'Ambient',
  year: 2022,
  track: 4,
};

describe('reextract_audio', () => {
  it('upserts the tags of every audio file, replacing stale rows; missing and corrupt bytes are counted', async () => {
    const mp3 = await addFile('so-what.mp3', 'audio/mpeg', makeMp3(SONG, 40));
    const wav = await addFile('harbour.wav', 'audio/wav', makeWav(RECORDING, 1));
    const missing = await addFile('gone.mp3', 'audio/mpeg', makeMp3({ ...SONG, title: 'Gone' }, 2), false);
    const corrupt = await addFile('broken.flac', 'audio/flac', Buffer.from('no flac in here, only text'));
    await addFile('photo.jpg', 'image/jpeg', makeJpeg());
    await db.pool.query(
      `INSERT INTO audio.file_metadata (file_id, title, artist) VALUES ($1, 'stale', 'stale')`,
      [mp3],
    );

    const outcome = await engine.runOrResume(REEXTRACT_AUDIO_JOB_NAME, { params: { batch_size: 2 } });
    expect(outcome).toMatchObject({ kind: 'ok', count: 2, extra: { completed: true } });

    const { rows } = await db.pool.query(
      `SELECT file_id, title, artist, album, genre, year, track_number, duration_secs, bitrate, format
         FROM audio.file_metadata ORDER BY title`,
    );
    expect(rows).toEqual([
      {
        file_id: wav,
        title: RECORDING.title,
        artist: RECORDING.artist,
        album: RECORDING.album,
        genre: RECORDING.genre,
        year: RECORDING.year,
        track_number: RECORDING.track,
        duration_secs: 1,
        bitrate: 128_000,
        format: 'PCM',
      },
      {
        file_id: mp3,
        title: SONG.title,
        artist: SONG.artist,
        album: SONG.album,
        genre: SONG.genre,
        year: SONG.year,
        track_number: SONG.track,
        // Whole seconds (OxiCloud's column is an integer): 40 frames of 1152 samples at 44.1 kHz.
        duration_secs: Math.round(40 * (1152 / 44_100)),
        bitrate: 128_000,
        format: 'MPEG 1 Layer 3',
      },
    ]);
    const run = await engine.latestRun(REEXTRACT_AUDIO_JOB_NAME);
    expect(run?.stats).toMatchObject({
      count: 2,
      scanned_count: 4,
      updated_files: 2,
      failed_files: 2,
      total_estimate: 4,
    });
    const failures = lines.filter((l) => l['event'] === 'reextract_audio.file_failed');
    expect(failures.map((l) => [l['file_id'], l['reason']]).sort()).toEqual(
      [
        [missing, 'missing_blob'],
        [corrupt, 'unparsable'],
      ].sort(),
    );
  });

  it('resumes a cancelled run after its cursor and finishes the rest', async () => {
    const ids: string[] = [];
    for (let i = 1; i <= 6; i++)
      ids.push(await addFile(`t${i}.mp3`, 'audio/mpeg', makeMp3({ ...SONG, track: i }, 2)));
    ids.sort();
    // Cancel from inside the run right after the 2nd metadata row is written: deterministic, no timing.
    let upserts = 0;
    const slowFiles = new Proxy(files, {
      get(target, key) {
        if (key === 'upsertAudioMetadata') {
          return async (...args: Parameters<typeof files.upsertAudioMetadata>) => {
            const written = await target.upsertAudioMetadata(...args);
            upserts += 1;
            if (upserts === 2) await engine.cancel('reextract_audio_cancellable');
            return written;
          };
        }
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const job = createReextractAudioJob({ files: slowFiles, blobs: files.contentReader(blobs), logger });
    engine.register({ ...job, name: 'reextract_audio_cancellable' });

    const first = await engine.runOrResume('reextract_audio_cancellable', { params: { concurrency: 1 } });
    expect(first).toMatchObject({ kind: 'ok', extra: { paused: true } });
    const paused = await engine.latestRun('reextract_audio_cancellable');
    expect(paused?.cursor_hex).toBe((ids[1] as string).replaceAll('-', ''));
    expect(paused?.stats['count']).toBe(2);

    const second = await engine.runOrResume('reextract_audio_cancellable', { params: {} });
    expect(second).toMatchObject({ kind: 'ok', extra: { completed: true } });
    const done = await engine.latestRun('reextract_audio_cancellable');
    expect(done?.stats).toMatchObject({ count: 6, updated_files: 6, scanned_count: 6 });
    const { rows } = await db.pool.query(
      'SELECT file_id, track_number FROM audio.file_metadata ORDER BY file_id',
    );
    expect(rows.map((r) => r.file_id)).toEqual(ids);
    expect(upserts).toBe(6);
  });
});

describe('reextract_image', () => {
  it('upserts the EXIF capture date, camera and size of images and the creation time of videos', async () => {
    const photo = await addFile(
      'beach.jpg',
      'image/jpeg',
      makeJpeg({ dateTimeOriginal: '2019:08:03 18:45:12', make: 'Acme Optics', model: 'Shore 3' }),
    );
    const plain = await addFile('plain.jpg', 'image/jpeg', makeJpeg());
    const clip = await addFile('clip.mp4', 'video/mp4', makeMp4(new Date('2023-02-01T10:20:30Z')));
    await addFile('notes.jpg', 'image/jpeg', Buffer.from('just text'));
    await addFile('song.mp3', 'audio/mpeg', makeMp3(SONG, 2));

    const outcome = await engine.runOrResume(REEXTRACT_IMAGE_JOB_NAME, { params: {} });
    expect(outcome).toMatchObject({ kind: 'ok', count: 3, extra: { completed: true } });
    const { rows } = await db.pool.query(
      `SELECT file_id, captured_at, camera_make, camera_model, width, height FROM storage.file_metadata`,
    );
    const byId = new Map(rows.map((r) => [r.file_id, r]));
    expect(byId.get(photo)).toEqual({
      file_id: photo,
      captured_at: new Date('2019-08-03T18:45:12Z'),
      camera_make: 'Acme Optics',
      camera_model: 'Shore 3',
      width: JPEG_WIDTH,
      height: JPEG_HEIGHT,
    });
    expect(byId.get(plain)).toMatchObject({ captured_at: null, camera_make: null, width: JPEG_WIDTH });
    expect(byId.get(clip)).toMatchObject({ captured_at: new Date('2023-02-01T10:20:30Z') });
    expect(byId.size).toBe(3);
    // OxiCloud's trigger: media_sort_date = COALESCE(captured_at, created_at).
    const { rows: sorted } = await db.pool.query(
      'SELECT id, media_sort_date, created_at FROM storage.files WHERE id = ANY($1::uuid[])',
      [[photo, plain]],
    );
    const sort = new Map(sorted.map((r) => [r.id, r]));
    expect(sort.get(photo)?.media_sort_date).toEqual(new Date('2019-08-03T18:45:12Z'));
    expect(sort.get(plain)?.media_sort_date).toEqual(sort.get(plain)?.created_at);
    const run = await engine.latestRun(REEXTRACT_IMAGE_JOB_NAME);
    expect(run?.stats).toMatchObject({ count: 3, updated_files: 3, failed_files: 1, scanned_count: 4 });
  });
});
