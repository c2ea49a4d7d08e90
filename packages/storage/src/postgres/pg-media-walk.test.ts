import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StorageDatabase } from './database.js';
import { PgBlobWalkRepository } from './pg-blob-walk-repository.js';
import { PgMediaFileRepository } from './pg-media-file-repository.js';

let db: TestDatabase;
let kysely: Kysely<StorageDatabase>;
let driveId: string;

const hashOf = (n: number) => n.toString(16).padStart(64, '0');

beforeAll(async () => {
  db = await createTestDatabase();
  kysely = new Kysely<StorageDatabase>({ dialect: new PostgresDialect({ pool: db.pool }) });
  const user = await db.pool.query("INSERT INTO auth.users (username) VALUES ('walk') RETURNING id");
  const drive = await db.pool.query(
    "INSERT INTO storage.drives (owner_id, name) VALUES ($1, 'd') RETURNING id",
    [user.rows[0].id],
  );
  driveId = drive.rows[0].id;
});
afterAll(async () => {
  await db.drop();
});

async function addFile(mime: string, n: number): Promise<string> {
  // A file may only reference a blob that has a row (migration 0007).
  await db.pool.query(
    'INSERT INTO storage.blobs (hash, size) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING',
    [hashOf(n), n * 10],
  );
  const { rows } = await db.pool.query(
    'INSERT INTO storage.files (drive_id, name, blob_hash, size, mime_type) VALUES ($1, $2, $3, $4, $5) RETURNING id',
    [driveId, `f${n}`, hashOf(n), n * 10, mime],
  );
  return rows[0].id as string;
}

describe('PgBlobWalkRepository', () => {
  it('pages storage.blobs in hash order after a cursor, with sizes as numbers, and counts them', async () => {
    const repo = new PgBlobWalkRepository(kysely);
    await db.pool.query(
      'INSERT INTO storage.blobs (hash, size) SELECT lpad(to_hex(n), 64, $1), n * 1000 FROM generate_series(1, 5) n',
      ['0'],
    );
    expect(await repo.listBlobsAfter(null, 2)).toEqual([
      { hash: hashOf(1), size: 1000 },
      { hash: hashOf(2), size: 2000 },
    ]);
    expect((await repo.listBlobsAfter(hashOf(2), 10)).map((b) => b.hash)).toEqual([3, 4, 5].map(hashOf));
    expect(await repo.listBlobsAfter(hashOf(5), 10)).toEqual([]);
    expect(await repo.countBlobs()).toBe(5);
    await db.pool.query(`UPDATE storage.blobs SET created_at = '2020-01-01Z' WHERE hash <> ALL($1)`, [
      [hashOf(2), hashOf(4)],
    ]);
    const since = new Date('2021-01-01Z');
    expect((await repo.listBlobsCreatedSince(since, null, 10)).map((b) => b.hash)).toEqual(
      [2, 4].map(hashOf),
    );
    expect(await repo.listBlobsCreatedSince(since, hashOf(2), 10)).toEqual([{ hash: hashOf(4), size: 4000 }]);
  });
});

describe('PgMediaFileRepository', () => {
  it('pages files by id for the mime prefixes only (case-insensitive), and counts them', async () => {
    const repo = new PgMediaFileRepository(kysely);
    const audio = [
      await addFile('audio/mpeg', 1),
      await addFile('Audio/FLAC', 2),
      await addFile('audio/wav', 3),
    ];
    await addFile('image/jpeg', 4);
    await addFile('application/audio-not', 5);
    audio.sort();
    const first = await repo.listFilesAfter({ mimePrefixes: ['audio/'], afterId: null, limit: 2 });
    expect(first.map((f) => f.id)).toEqual(audio.slice(0, 2));
    const rest = await repo.listFilesAfter({
      mimePrefixes: ['audio/'],
      afterId: audio[1] as string,
      limit: 2,
    });
    expect(rest.map((f) => f.id)).toEqual(audio.slice(2));
    expect(rest[0]).toMatchObject({ blobHash: expect.stringMatching(/^0+[1-3]$/), size: expect.any(Number) });
    expect(await repo.countFiles(['audio/'])).toBe(3);
    expect(await repo.countFiles(['audio/', 'image/'])).toBe(4);
    expect(await repo.countFiles([])).toBe(0);
  });

  it('upserts audio and image rows, replacing every column, and returns false for a deleted file', async () => {
    const repo = new PgMediaFileRepository(kysely);
    const id = await addFile('image/png', 10);
    const meta = {
      capturedAt: new Date('2020-01-02T03:04:05Z'),
      cameraMake: 'A',
      cameraModel: 'B',
      width: 4,
      height: 3,
    };
    expect(await repo.upsertImageMetadata(id, meta)).toBe(true);
    expect(await repo.upsertImageMetadata(id, { ...meta, cameraMake: null, width: 8 })).toBe(true);
    const { rows } = await db.pool.query(
      'SELECT captured_at, camera_make, camera_model, width, height FROM storage.image_metadata WHERE file_id = $1',
      [id],
    );
    expect(rows).toEqual([
      { captured_at: meta.capturedAt, camera_make: null, camera_model: 'B', width: 8, height: 3 },
    ]);

    const audio = {
      title: 't',
      artist: 'a',
      album: null,
      genre: null,
      year: 2000,
      trackNumber: 1,
      durationSeconds: 1.5,
      bitrate: 128000,
      codec: 'MP3',
    };
    expect(await repo.upsertAudioMetadata(id, audio)).toBe(true);
    await db.pool.query('DELETE FROM storage.files WHERE id = $1', [id]);
    expect(await repo.upsertAudioMetadata(id, audio)).toBe(false);
    expect(await repo.upsertImageMetadata(id, meta)).toBe(false);
  });
});
