import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createReextractAudioJob,
  createReextractImageJob,
  REEXTRACT_AUDIO_JOB_NAME,
  REEXTRACT_IMAGE_JOB_NAME,
} from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type AudioTags,
  JPEG_HEIGHT,
  JPEG_WIDTH,
  makeJpeg,
  makeMp3,
} from '../../../tenants/test/fixtures/media-fixtures.js';
import { LocalFsBlobStorage } from '../blob/local-fs-blob-storage.js';
import { CDC_CHUNK_SIZES } from '../content/file-content.js';
import { OxiMediaFileRepository } from './oxi-media-file-repository.js';
import { type OxiHarness, type OxiWorld, oxiHarness, oxiWorld } from './test-fixtures.js';

let db: TestDatabase;
let h: OxiHarness;
let w: OxiWorld;
let root: string;
let blobs: LocalFsBlobStorage;
let files: OxiMediaFileRepository;

const SONG: AudioTags = {
  title: 'So What',
  artist: 'Miles Davis',
  album: 'Kind of Blue',
  genre: 'Jazz',
  year: 1959,
  track: 1,
};
const JINGLE: AudioTags = {
  title: 'Ding',
  artist: 'Bell',
  album: 'Short',
  genre: 'Pop',
  year: 2001,
  track: 2,
};
const BARE_AUDIO_JOB = 'reextract_audio_bare_blob_store';

beforeAll(async () => {
  db = await createTestDatabase({ domain: 'oxicloud' });
  h = oxiHarness(db.pool);
  root = await mkdtemp(join(tmpdir(), 'oxicloud-oxi-media-'));
  blobs = new LocalFsBlobStorage({ root });
  w = await oxiWorld(db.pool, blobs);
  files = new OxiMediaFileRepository(h.db);
  const reader = files.contentReader(blobs);
  h.engine.register(createReextractAudioJob({ files, blobs: reader, logger: h.logger }));
  h.engine.register(createReextractImageJob({ files, blobs: reader, logger: h.logger }));
  // The job on the bare blob store (one object by blob_hash), not as the server wires it (contentReader).
  h.engine.register({ ...createReextractAudioJob({ files, blobs, logger: h.logger }), name: BARE_AUDIO_JOB });
});
afterAll(async () => {
  await h?.close();
  await h?.db.destroy();
  await db?.drop();
  if (root) await rm(root, { recursive: true, force: true });
});
beforeEach(async () => {
  await db.pool.query(
    'DELETE FROM storage.files; DELETE FROM storage.chunk_manifests; DELETE FROM storage.blobs',
  );
});

/** A multi-chunk MP3 (3 chunks), a one-chunk MP3 and a legacy MP3. */
async function songs() {
  const long = Buffer.from(makeMp3(SONG, 400));
  const multi = await w.upload({ name: 'long.mp3', data: long, mime: 'audio/mpeg' });
  const one = await w.upload({
    name: 'short.mp3',
    data: Buffer.from(makeMp3(JINGLE, 2)),
    mime: 'audio/mpeg',
  });
  const legacy = await w.upload({
    name: 'old.mp3',
    data: Buffer.from(makeMp3(JINGLE, 3)),
    mime: 'audio/mpeg',
    legacy: true,
  });
  await w.upload({ name: 'readme.txt', data: Buffer.from('not audio'), mime: 'text/plain' });
  return { multi, one, legacy };
}

describe('OxiMediaFileRepository', () => {
  it('lists media files by id with the content each reads (manifest or legacy)', async () => {
    const { multi, one, legacy } = await songs();
    expect(multi.objects.length).toBe(3);
    expect(multi.objects.every((o) => o.size <= CDC_CHUNK_SIZES.max)).toBe(true);
    const rows = await files.listFilesAfter({ mimePrefixes: ['audio/'], afterId: null, limit: 10 });
    expect(rows.map((r) => r.id)).toEqual([multi.fileId, one.fileId, legacy.fileId].sort());
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(multi.fileId)).toMatchObject({
      blobHash: multi.hash,
      size: multi.size,
      content: multi.content,
    });
    expect(byId.get(one.fileId)?.content).toEqual(one.content);
    expect(byId.get(legacy.fileId)?.content).toEqual({
      kind: 'legacy',
      hash: legacy.hash,
      size: legacy.size,
    });
    expect(await files.countFiles(['audio/'])).toBe(3);
    // openContent reads the listed content whole (all three chunks of the long song).
    const parts: Buffer[] = [];
    for await (const part of await files.openContent(byId.get(multi.fileId)!, blobs)) parts.push(part);
    expect(Buffer.concat(parts)).toEqual(multi.bytes);
    const bare = { id: legacy.fileId, blobHash: legacy.hash, size: legacy.size, mimeType: 'audio/mpeg' };
    const read: Buffer[] = [];
    for await (const part of await files.openContent(bare, blobs)) read.push(part);
    expect(Buffer.concat(read)).toEqual(legacy.bytes);
    const none = { ...bare, blobHash: 'e'.repeat(64) };
    await expect(files.openContent(none, blobs)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const second = await files.listFilesAfter({ mimePrefixes: ['AUDIO/'], afterId: rows[0]!.id, limit: 1 });
    expect(second.map((r) => r.id)).toEqual([rows[1]!.id]);
  });

  it('reextract_audio end to end through contentReader: a multi-chunk MP3 is read whole, rows land in audio.file_metadata', async () => {
    const { multi, one, legacy } = await songs();
    const outcome = await h.engine.runOrResume(REEXTRACT_AUDIO_JOB_NAME, { params: {} });
    expect(outcome).toMatchObject({ kind: 'ok', count: 3, extra: { completed: true } });
    const { rows } = await db.pool.query(
      `SELECT file_id, title, artist, album, genre, year, track_number, duration_secs, format, album_artist
         FROM audio.file_metadata`,
    );
    const byId = new Map(rows.map((r) => [r.file_id, r]));
    expect(byId.get(multi.fileId)).toMatchObject({
      title: SONG.title,
      artist: SONG.artist,
      album: SONG.album,
      genre: SONG.genre,
      year: SONG.year,
      track_number: SONG.track,
      album_artist: null,
    });
    // 400 frames of 1152 samples at 44.1 kHz: about 10 s, only known from the whole stream's size.
    expect(byId.get(multi.fileId)?.duration_secs).toBe(10);
    expect(byId.get(multi.fileId)?.format).toMatch(/MPEG/);
    expect(byId.get(one.fileId)).toMatchObject({ title: JINGLE.title });
    expect(byId.get(legacy.fileId)).toMatchObject({ title: JINGLE.title });
    expect(byId.size).toBe(3);
  });

  it('the job on the bare blob store (one object by blob_hash) cannot read the multi-chunk file: why the server wires contentReader', async () => {
    const { multi } = await songs();
    const outcome = await h.engine.runOrResume(BARE_AUDIO_JOB, { params: {} });
    expect(outcome).toMatchObject({ kind: 'ok', count: 2 });
    const { rows } = await db.pool.query('SELECT file_id FROM audio.file_metadata WHERE file_id = $1', [
      multi.fileId,
    ]);
    expect(rows).toEqual([]);
  });

  it('reextract_image end to end: a two-chunk JPEG’s capture data lands in storage.file_metadata (and media_sort_date)', async () => {
    const jpeg = makeJpeg({ dateTimeOriginal: '2019:08:03 18:45:12', make: 'Acme Optics', model: 'Shore 3' });
    // Padding after the end-of-image marker makes it two chunks.
    const data = Buffer.concat([Buffer.from(jpeg), Buffer.alloc(CDC_CHUNK_SIZES.min)]);
    const photo = await w.upload({ name: 'beach.jpg', data, mime: 'image/jpeg' });
    expect(photo.objects.length).toBe(2);
    const outcome = await h.engine.runOrResume(REEXTRACT_IMAGE_JOB_NAME, { params: {} });
    expect(outcome).toMatchObject({ kind: 'ok', count: 1 });
    const { rows } = await db.pool.query(
      `SELECT m.captured_at, m.camera_make, m.camera_model, m.width, m.height, m.latitude, f.media_sort_date
         FROM storage.file_metadata m JOIN storage.files f ON f.id = m.file_id WHERE m.file_id = $1`,
      [photo.fileId],
    );
    expect(rows).toEqual([
      {
        captured_at: new Date('2019-08-03T18:45:12Z'),
        camera_make: 'Acme Optics',
        camera_model: 'Shore 3',
        width: JPEG_WIDTH,
        height: JPEG_HEIGHT,
        latitude: null,
        media_sort_date: new Date('2019-08-03T18:45:12Z'),
      },
    ]);
  });

  it('upserts replace the port’s columns only, and write nothing for a file deleted meanwhile', async () => {
    const { one } = await songs();
    const tags = {
      title: 'A',
      artist: null,
      album: null,
      genre: null,
      year: null,
      trackNumber: 3,
      durationSeconds: null,
      bitrate: 128_000,
      codec: 'MPEG 1 Layer 3',
    };
    expect(await files.upsertAudioMetadata(one.fileId, tags)).toBe(true);
    await db.pool.query(
      `UPDATE audio.file_metadata SET album_artist = 'kept', sample_rate = 44100 WHERE file_id = $1`,
      [one.fileId],
    );
    expect(await files.upsertAudioMetadata(one.fileId, { ...tags, title: 'B', durationSeconds: 61.6 })).toBe(
      true,
    );
    const { rows } = await db.pool.query(
      'SELECT title, track_number, duration_secs, bitrate, format, album_artist, sample_rate FROM audio.file_metadata',
    );
    expect(rows).toEqual([
      {
        title: 'B',
        track_number: 3,
        duration_secs: 62,
        bitrate: 128_000,
        format: 'MPEG 1 Layer 3',
        album_artist: 'kept',
        sample_rate: 44100,
      },
    ]);
    const image = { capturedAt: null, cameraMake: 'X', cameraModel: null, width: 1, height: 2 };
    expect(await files.upsertImageMetadata(one.fileId, image)).toBe(true);
    await db.pool.query('DELETE FROM storage.files WHERE id = $1', [one.fileId]);
    expect(await files.upsertAudioMetadata(one.fileId, tags)).toBe(false);
    expect(await files.upsertImageMetadata(one.fileId, image)).toBe(false);
  });
});
