import { randomBytes } from 'node:crypto';
import {
  BLOB_SIZE_MISMATCH,
  CATEGORY_ORDER_MISMATCH,
  FILE_DRIVE_ID_PARENT_MISMATCH,
  FILES_CONSISTENCY_CHECK_NAME,
  MEDIA_SORT_DATE_MISMATCH,
  MIME_MISMATCH,
  MISSING_BLOB,
  PARENT_FOLDER_TRASHED,
} from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { categoryOrderFor } from '../content/category-order.js';
import { CDC_CHUNK_SIZES } from '../content/file-content.js';
import { PLACEHOLDER_HASH } from './content-sql.js';
import { OxiFileContentScan } from './oxi-file-content-scan.js';
import {
  AGE,
  type OxiHarness,
  type OxiWorld,
  oxiHarness,
  oxiWorld,
  summary,
  type Upload,
} from './test-fixtures.js';

let db: TestDatabase;
let h: OxiHarness;
let w: OxiWorld;
let other: OxiWorld;

beforeAll(async () => {
  db = await createTestDatabase({ domain: 'oxicloud' });
  h = oxiHarness(db.pool);
  w = await oxiWorld(db.pool);
  other = await oxiWorld(db.pool);
});
afterAll(async () => {
  await h?.close();
  await h?.db.destroy();
  await db?.drop();
});
beforeEach(async () => {
  await db.pool.query(
    'DELETE FROM storage.files; DELETE FROM storage.chunk_manifests; DELETE FROM storage.blobs',
  );
});

const check = () => new OxiFileContentScan(h.db).consistencyChecks()[0]!;
const tag = () => randomBytes(4).toString('hex');
const { min } = CDC_CHUNK_SIZES;

/** Every content shape OxiCloud writes, consistent; the multi-chunk ones deduplicated. */
async function cleanContent() {
  const docs = await w.folder(`docs-${tag()}`);
  const a = randomBytes(min);
  // Three chunks, the first repeated: [a, a, b].
  const multiData = Buffer.concat([a, a, randomBytes(1000)]);
  const multi = await w.upload({ name: 'big.bin', folderId: docs, data: multiData });
  const multiCopy = await w.upload({ name: 'big-copy.bin', folderId: docs, data: multiData });
  const oneChunk = await w.upload({ name: 'note.txt', data: Buffer.from('hello'), mime: 'text/plain' });
  const legacy = await w.upload({ name: 'old.png', data: randomBytes(300), mime: 'image/png', legacy: true });
  const empty = await w.upload({ name: 'empty', data: Buffer.alloc(0) });
  const image = await w.upload({ name: 'photo.jpg', data: randomBytes(min + 10), mime: 'image/jpeg; q=1' });
  // A trashed folder with its (trashed) file: nothing live inside.
  const old = await w.folder(`old-${tag()}`);
  const trashed = await w.upload({ name: 'gone.bin', folderId: old, data: randomBytes(2 * min) });
  await w.trashFolder(old);
  // The placeholder hash, with no row behind it (register_file_deferred, load-seed).
  const { rows } = await db.pool.query(
    `INSERT INTO storage.files (name, folder_id, blob_hash, size, drive_id, created_at, media_sort_date, category_order)
     VALUES ('deferred', $1, $2, 7, $3, ${AGE}, ${AGE}, ${categoryOrderFor('deferred', 'application/octet-stream')})
     RETURNING id`,
    [w.rootFolderId, PLACEHOLDER_HASH, w.driveId],
  );
  return {
    docs,
    multi,
    multiCopy,
    oneChunk,
    legacy,
    empty,
    image,
    trashed,
    placeholderId: rows[0].id as string,
  };
}

describe('files_consistency on OxiCloud’s domain (OxiFileContentScan)', () => {
  it('is files_consistency of the files subsystem, by segments unless segmentRows is 0', async () => {
    const scan = new OxiFileContentScan(h.db);
    expect(check().name).toBe(FILES_CONSISTENCY_CHECK_NAME);
    expect(scan.subsystem()).toBe('files');
    const boundary = { createdBefore: new Date(), trashedBefore: new Date() };
    const stream = scan.openFileRowStream(boundary);
    expect(stream).not.toBeNull();
    await stream?.close();
    expect(new OxiFileContentScan(h.db, { segmentRows: 0 }).openFileRowStream(boundary)).toBeNull();
  });

  it('clean content (multi-chunk with repeats, dedup, one-chunk, legacy, empty, placeholder, trashed) → 0 findings', async () => {
    const world = await cleanContent();
    expect(world.multi.content).toMatchObject({ kind: 'manifest' });
    expect(world.multi.objects).toHaveLength(3);
    expect(world.oneChunk.objects[0]?.hash).toBe(world.oneChunk.hash);
    const run = await h.run(check(), { batch_size: 3 });
    expect(run.status).toBe('Completed');
    expect(run.findings).toEqual([]);
    expect(run.stats['scanned_count']).toBeGreaterThanOrEqual(9);
    // Pass 1 alone already finds nothing (pass 2 is not what hides a false data loss).
    const boundary = { createdBefore: new Date(), trashedBefore: new Date() };
    const page = await new OxiFileContentScan(h.db).scanFilesById(null, 1000, boundary);
    expect(page).toMatchObject({ scanned: 8, anomalies: [] });
  });

  it('a multi-chunk manifest deleted → one missing_blob (DataLoss) for its hash, with both files', async () => {
    const { multi, multiCopy } = await cleanContent();
    await db.pool.query('DELETE FROM storage.chunk_manifests WHERE file_hash = $1', [multi.hash]);
    const run = await h.run(check());
    expect(summary(run.findings)).toEqual([`${MISSING_BLOB} DataLoss ${multi.hash}`]);
    expect(run.findings[0]?.detail).toMatchObject({
      ref_count: 2,
      live_file_count: 2,
      total_bytes: 2 * multi.size,
      affected_file_ids: [multi.fileId, multiCopy.fileId].sort(),
    });
  });

  it('a chunk row of a manifest deleted → missing_blob for the file hash (its bytes cannot be read)', async () => {
    const { image } = await cleanContent();
    await db.pool.query('DELETE FROM storage.blobs WHERE hash = $1', [image.objects[1]?.hash]);
    const run = await h.run(check());
    expect(summary(run.findings)).toEqual([`${MISSING_BLOB} DataLoss ${image.hash}`]);
  });

  it('a one-chunk manifest deleted: the read falls back to its chunk row (legacy read) → no finding; both gone → missing_blob', async () => {
    const { oneChunk } = await cleanContent();
    await db.pool.query('DELETE FROM storage.chunk_manifests WHERE file_hash = $1', [oneChunk.hash]);
    expect((await h.run(check())).findings).toEqual([]);
    await db.pool.query('DELETE FROM storage.blobs WHERE hash = $1', [oneChunk.hash]);
    expect(summary((await h.run(check())).findings)).toEqual([`${MISSING_BLOB} DataLoss ${oneChunk.hash}`]);
  });

  it('the empty-file manifest deleted → missing_blob for BLAKE3("")', async () => {
    const { empty } = await cleanContent();
    await db.pool.query('DELETE FROM storage.chunk_manifests WHERE file_hash = $1', [empty.hash]);
    expect(summary((await h.run(check())).findings)).toEqual([`${MISSING_BLOB} DataLoss ${empty.hash}`]);
  });

  it('a legacy blob whose size ≠ the file size → blob_size_mismatch (Drift) for that file', async () => {
    const { legacy } = await cleanContent();
    await db.pool.query('UPDATE storage.blobs SET size = size + 5 WHERE hash = $1', [legacy.hash]);
    const run = await h.run(check());
    expect(summary(run.findings)).toEqual([`${BLOB_SIZE_MISMATCH} Drift ${legacy.fileId}`]);
    expect(run.findings[0]?.detail).toMatchObject({ file_size: 300, blob_size: 305, delta: -5 });
  });

  it('a file size ≠ its manifest’s total_size → blob_size_mismatch; the one-chunk row’s size is not what is compared', async () => {
    const { multi, oneChunk } = await cleanContent();
    await db.pool.query('UPDATE storage.files SET size = size + 1 WHERE id = $1', [multi.fileId]);
    // A one-chunk file's blob row of another size: the manifest decides the content size.
    await db.pool.query('UPDATE storage.blobs SET size = size + 9 WHERE hash = $1', [oneChunk.hash]);
    const run = await h.run(check());
    expect(summary(run.findings)).toEqual([`${BLOB_SIZE_MISMATCH} Drift ${multi.fileId}`]);
    expect(run.findings[0]?.detail).toMatchObject({ file_size: multi.size + 1, blob_size: multi.size });
  });

  it('a manifest content_type contradicting the file’s mime_type → mime_mismatch; octet-stream or NULL never do', async () => {
    const { image, multi, legacy } = await cleanContent();
    await db.pool.query(
      `UPDATE storage.chunk_manifests SET content_type = 'video/mp4' WHERE file_hash = $1`,
      [image.hash],
    );
    await db.pool.query(
      `UPDATE storage.chunk_manifests SET content_type = 'text/plain' WHERE file_hash = $1`,
      [multi.hash],
    );
    await db.pool.query('UPDATE storage.blobs SET content_type = NULL WHERE hash = $1', [legacy.hash]);
    const run = await h.run(check());
    expect(summary(run.findings)).toEqual([`${MIME_MISMATCH} Drift ${image.fileId}`]);
    expect(run.findings[0]?.detail).toMatchObject({
      mime_type: 'image/jpeg; q=1',
      blob_content_type: 'video/mp4',
    });
  });

  it('media_sort_date against COALESCE(captured_at, created_at) → media_sort_date_mismatch (Drift); OxiCloud’s trigger keeps it right', async () => {
    const { image, multi, legacy } = await cleanContent();
    // Capture data written as OxiCloud writes it: the trigger moves the file's date to captured_at.
    await db.pool.query(
      "INSERT INTO storage.file_metadata (file_id, captured_at) VALUES ($1, '2020-05-01T10:00:00Z'), ($2, '2019-01-02T03:04:05Z')",
      [image.fileId, multi.fileId],
    );
    expect((await h.run(check())).findings).toEqual([]);
    // A metadata row deleted (no trigger resets the date), and a date copied from elsewhere (a folder copy).
    await db.pool.query('DELETE FROM storage.file_metadata WHERE file_id = $1', [multi.fileId]);
    await db.pool.query("UPDATE storage.files SET media_sort_date = '2018-07-07T07:07:07Z' WHERE id = $1", [
      legacy.fileId,
    ]);
    const run = await h.run(check(), { batch_size: 2 });
    expect(summary(run.findings)).toEqual(
      [multi.fileId, legacy.fileId].map((id) => `${MEDIA_SORT_DATE_MISMATCH} Drift ${id}`).sort(),
    );
    const { rows } = await db.pool.query<{ created_at: Date }>(
      'SELECT created_at FROM storage.files WHERE id = $1',
      [multi.fileId],
    );
    expect(run.findings.find((f) => f.resourceId === multi.fileId)?.detail).toEqual({
      recorded: '2019-01-02T03:04:05.000Z',
      expected: rows[0]!.created_at.toISOString(),
    });
  });

  it('category_order against category_order_for(name, mime_type) → category_order_mismatch (Drift), by segments and by pages', async () => {
    const { multi, image } = await cleanContent();
    expect((await h.run(check())).findings).toEqual([]);
    // A rename OxiCloud does not recompute the bucket for (octet-stream: the extension decides), and a folder
    // copy's row (the column default).
    await db.pool.query("UPDATE storage.files SET name = 'big.pdf' WHERE id = $1", [multi.fileId]);
    await db.pool.query('UPDATE storage.files SET category_order = 9999 WHERE id = $1', [image.fileId]);
    const expected = [multi.fileId, image.fileId]
      .map((id) => `${CATEGORY_ORDER_MISMATCH} Drift ${id}`)
      .sort();
    for (const scan of [new OxiFileContentScan(h.db), new OxiFileContentScan(h.db, { segmentRows: 0 })]) {
      const run = await h.run(scan.consistencyChecks()[0]!, { batch_size: 2 });
      expect(summary(run.findings)).toEqual(expected);
      expect(run.findings.find((f) => f.resourceId === multi.fileId)?.detail).toEqual({
        recorded: 500,
        expected: 400,
      });
      expect(run.findings.find((f) => f.resourceId === image.fileId)?.detail).toEqual({
        recorded: 9999,
        expected: 100,
      });
    }
  });

  it('a file whose drive differs from its folder’s → drive_id_parent_mismatch (DataLoss)', async () => {
    const { legacy } = await cleanContent();
    await db.pool.query('UPDATE storage.files SET drive_id = $1 WHERE id = $2', [
      other.driveId,
      legacy.fileId,
    ]);
    expect(summary((await h.run(check())).findings)).toEqual([
      `${FILE_DRIVE_ID_PARENT_MISMATCH} DataLoss ${legacy.fileId}`,
    ]);
  });

  it('a live file in a trashed folder → parent_folder_trashed (DataLoss)', async () => {
    const { trashed } = await cleanContent();
    await db.pool.query('UPDATE storage.files SET is_trashed = false, trashed_at = NULL WHERE id = $1', [
      trashed.fileId,
    ]);
    expect(summary((await h.run(check())).findings)).toEqual([
      `${PARENT_FOLDER_TRASHED} DataLoss ${trashed.fileId}`,
    ]);
  });

  it('young files are left alone (grace), and a placeholder-hash file never is missing or of another size', async () => {
    await cleanContent();
    const young: Upload = await w.upload({ name: `young-${tag()}`, data: randomBytes(10) });
    await db.pool.query(
      'UPDATE storage.files SET created_at = now(), media_sort_date = now() WHERE id = $1',
      [young.fileId],
    );
    await db.pool.query('DELETE FROM storage.chunk_manifests WHERE file_hash = $1', [young.hash]);
    await db.pool.query('DELETE FROM storage.blobs WHERE hash = $1', [young.hash]);
    await db.pool.query(
      `INSERT INTO storage.blobs (hash, size, ref_count, created_at) VALUES ($1, 0, 1, ${AGE})`,
      [PLACEHOLDER_HASH],
    );
    expect((await h.run(check())).findings).toEqual([]);
    expect(summary((await h.run(check(), { force: true })).findings)).toEqual([
      `${MISSING_BLOB} DataLoss ${young.hash}`,
    ]);
  });
});
