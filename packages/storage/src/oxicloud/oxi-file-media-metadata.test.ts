/**
 * files_consistency's phase 4 (deep runs, §12 item 24) on OxiCloud's
 * domain, end to end: `OxiFileContentScan` lists the media files without a
 * metadata row whose content OxiCloud reads at its raw path, and
 * `createMediaMetadataProbe` over a real local store reads their bytes with
 * the re-extract jobs' parsers.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMediaMetadataProbe, MEDIA_METADATA_MISSING } from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeJpeg, makeMp3, makeMp4 } from '../../../tenants/test/fixtures/media-fixtures.js';
import { LocalFsBlobStorage } from '../blob/local-fs-blob-storage.js';
import { readsMediaAtRawPath } from '../blob/raw-media-path.js';
import { OxiFileContentScan } from './oxi-file-content-scan.js';
import { type OxiHarness, type OxiWorld, oxiHarness, oxiWorld, summary } from './test-fixtures.js';

let db: TestDatabase;
let h: OxiHarness;
let w: OxiWorld;
let dir: string;
let blobs: LocalFsBlobStorage;

const TAGS = { title: 'Song', artist: 'Band', album: 'Album', genre: 'Rock', year: 2001, track: 3 };
const EXIF = { dateTimeOriginal: '2021:06:05 04:03:02', make: 'Canon', model: 'EOS' };

beforeAll(async () => {
  db = await createTestDatabase({ domain: 'oxicloud' });
  h = oxiHarness(db.pool);
  dir = await mkdtemp(join(tmpdir(), 'oxi-media-'));
  blobs = new LocalFsBlobStorage({ root: dir });
  w = await oxiWorld(db.pool, blobs);
});
afterAll(async () => {
  await h?.close();
  await h?.db.destroy();
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  await db.pool.query(
    'DELETE FROM storage.files; DELETE FROM storage.chunk_manifests; DELETE FROM storage.blobs',
  );
});

/** The check as the server builds it for a local unencrypted store, audio on unless said. */
const check = (audio = true) =>
  new OxiFileContentScan(h.db, {
    checks: { files_consistency: { media: { probe: createMediaMetadataProbe({ blobs }), audio } } },
  }).consistencyChecks()[0]!;

/** A JFIF start, then an APP1 EXIF segment whose TIFF header's IFD0 offset lies past the end. */
function brokenExifJpeg(): Buffer {
  const jfif = Buffer.from([
    0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0,
  ]);
  const payload = Buffer.concat([
    Buffer.from('Exif\0\0II*\0'),
    Buffer.from([0x00, 0xff, 0x00, 0x00]),
    Buffer.alloc(16),
  ]);
  const length = payload.length + 2;
  return Buffer.concat([
    jfif,
    Buffer.from([0xff, 0xe1, length >> 8, length & 0xff]),
    payload,
    Buffer.from([0xff, 0xd9]),
  ]);
}

const audioRow = (fileId: string) =>
  db.pool.query("INSERT INTO audio.file_metadata (file_id, duration_secs, format) VALUES ($1, 0, 'MPEG')", [
    fileId,
  ]);
const imageRow = (fileId: string) =>
  db.pool.query(
    "INSERT INTO storage.file_metadata (file_id, captured_at) VALUES ($1, '2021-06-05T04:03:02Z')",
    [fileId],
  );

describe('files_consistency phase 4: media metadata OxiCloud would have stored (§12 item 24)', () => {
  it('a local store is read at the raw path; an S3 or encrypted one is not (no probe there)', () => {
    expect(readsMediaAtRawPath(blobs)).toBe(true);
  });

  it('reports the media files whose bytes carry metadata and whose row is missing, in deep runs only', async () => {
    const mp3 = Buffer.from(makeMp3(TAGS));
    const jpeg = Buffer.from(makeJpeg(EXIF));
    // Missing, where OxiCloud's extractor reads the bytes: a one-chunk MP3 with an ID3v2 tag, a legacy JPEG with
    // EXIF, an MP4 with a creation time.
    const song = await w.upload({ name: 'song.mp3', data: mp3, mime: 'audio/mpeg' });
    const photo = await w.upload({ name: 'photo.jpg', data: jpeg, mime: 'image/jpeg', legacy: true });
    const clip = await w.upload({
      name: 'clip.mp4',
      data: Buffer.from(makeMp4(new Date('2020-02-03T04:05:06Z'))),
      mime: 'video/mp4',
    });
    // Not missing: rows there; bytes without metadata (a JPEG without EXIF, random "audio").
    const tagged = await w.upload({
      name: 'tagged.mp3',
      data: Buffer.concat([mp3, Buffer.from('x')]),
      mime: 'audio/mpeg',
    });
    await audioRow(tagged.fileId);
    const dated = await w.upload({
      name: 'dated.jpg',
      data: Buffer.concat([jpeg, Buffer.from('y')]),
      mime: 'image/jpeg',
    });
    await imageRow(dated.fileId);
    await w.upload({ name: 'plain.jpg', data: Buffer.from(makeJpeg()), mime: 'image/jpeg' });
    // An APP1 "Exif" block whose IFD0 points outside the file: exifr answers only `errors`, kamadak-exif
    // nothing, so OxiCloud stores no row (the 100k clean bench found two such random JPEGs).
    await w.upload({ name: 'broken-exif.jpg', data: brokenExifJpeg(), mime: 'image/jpeg' });
    await w.upload({ name: 'noise.mp3', data: randomBytes(3000), mime: 'audio/mpeg' });
    // OxiCloud reads no raw path for a multi-chunk file (no object of the file's hash): never missing.
    await w.upload({
      name: 'long.mp3',
      data: Buffer.concat([mp3, randomBytes(70_000)]),
      mime: 'audio/mpeg',
      chunkSize: 64 * 1024,
    });
    // Not media at all.
    await w.upload({ name: 'notes.txt', data: Buffer.from('hello'), mime: 'text/plain' });

    const expected = [song.fileId, photo.fileId, clip.fileId]
      .map((id) => `${MEDIA_METADATA_MISSING} Regenerable ${id}`)
      .sort();
    // Without deep: not examined.
    expect((await h.run(check())).findings).toEqual([]);
    const deep = await h.run(check(), { deep: true, batch_size: 3 });
    expect(summary(deep.findings)).toEqual(expected);
    expect(deep.findings.find((f) => f.resourceId === song.fileId)?.detail).toEqual({
      blob_hash: song.hash,
      mime_type: 'audio/mpeg',
      table: 'audio_file_metadata',
    });
    expect(deep.findings.find((f) => f.resourceId === photo.fileId)?.detail).toMatchObject({
      table: 'file_metadata',
    });

    // Music off (OXICLOUD_ENABLE_MUSIC=false): OxiCloud writes no audio rows, so none is missing (a harness of
    // its own: a harness keeps the first check it registers under a name).
    const withoutMusic = oxiHarness(db.pool);
    try {
      const noMusic = await withoutMusic.run(check(false), { deep: true });
      expect(summary(noMusic.findings)).toEqual(
        [photo.fileId, clip.fileId].map((id) => `${MEDIA_METADATA_MISSING} Regenerable ${id}`).sort(),
      );
    } finally {
      await withoutMusic.close();
      await withoutMusic.db.destroy();
    }

    // The rows written (what reextract_* or OxiCloud's re-extract endpoints do): nothing left.
    await audioRow(song.fileId);
    await imageRow(photo.fileId);
    await imageRow(clip.fileId);
    expect((await h.run(check(), { deep: true })).findings).toEqual([]);
  });

  it('pass 2 drops a file whose row appeared, or whose content changed, since pass 1', async () => {
    const scan = new OxiFileContentScan(h.db);
    const mp3 = Buffer.from(makeMp3(TAGS));
    const a = await w.upload({ name: 'a.mp3', data: mp3, mime: 'audio/mpeg' });
    const b = await w.upload({
      name: 'b.mp3',
      data: Buffer.concat([mp3, Buffer.from('b')]),
      mime: 'audio/mpeg',
    });
    const c = await w.upload({
      name: 'c.mp3',
      data: Buffer.concat([mp3, Buffer.from('c')]),
      mime: 'audio/mpeg',
    });
    const options = { createdBefore: new Date(), trashedBefore: new Date(), audio: true };
    const page = await scan.scanMediaWithoutMetadata(null, 100, options);
    expect(page.anomalies.map((m) => m.fileId).sort()).toEqual([a.fileId, b.fileId, c.fileId].sort());
    await audioRow(a.fileId);
    await db.pool.query('UPDATE storage.files SET blob_hash = $1 WHERE id = $2', [c.hash, b.fileId]);
    const still = await scan.reverifyMediaWithoutMetadata(page.anomalies, options);
    expect(still.map((m) => m.fileId)).toEqual([c.fileId]);
  });
});
