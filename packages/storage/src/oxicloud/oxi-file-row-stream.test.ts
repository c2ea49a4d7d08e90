import { randomBytes } from 'node:crypto';
import type { FileRowAnomaly, FileScanOptions } from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { categoryOrderFor } from '../content/category-order.js';
import { CDC_CHUNK_SIZES } from '../content/file-content.js';
import { PLACEHOLDER_HASH } from './content-sql.js';
import { OxiFileContentScan } from './oxi-file-content-scan.js';
import { OxiFileRowStream } from './oxi-file-row-stream.js';
import { AGE, type OxiHarness, type OxiWorld, oxiHarness, oxiWorld, type Upload } from './test-fixtures.js';

let db: TestDatabase;
let h: OxiHarness;
let w: OxiWorld;
let files = 0;
const options: FileScanOptions = {
  createdBefore: new Date(Date.now() + 3_600_000),
  trashedBefore: new Date(Date.now() + 3_600_000),
};

beforeAll(async () => {
  db = await createTestDatabase({ domain: 'oxicloud' });
  h = oxiHarness(db.pool);
  w = await oxiWorld(db.pool);
  const other = await oxiWorld(db.pool);
  // 48 files of every content shape; then one drift of each kind on some of them.
  const uploads: Upload[] = [];
  for (let i = 0; i < 12; i++) {
    uploads.push(await w.upload({ name: `multi-${i}`, data: randomBytes(CDC_CHUNK_SIZES.min + 1 + i) }));
    uploads.push(await w.upload({ name: `one-${i}`, data: randomBytes(10 + i), mime: 'text/plain' }));
    uploads.push(
      await w.upload({ name: `legacy-${i}`, data: randomBytes(30 + i), mime: 'image/png', legacy: true }),
    );
    uploads.push(await w.upload({ name: `copy-${i}`, data: uploads[0]!.bytes }));
  }
  await db.pool.query(
    `INSERT INTO storage.files (name, folder_id, blob_hash, size, drive_id, created_at, media_sort_date, category_order)
     VALUES ('deferred', $1, $2, 3, $3, ${AGE}, ${AGE}, ${categoryOrderFor('deferred', 'application/octet-stream')})`,
    [w.rootFolderId, PLACEHOLDER_HASH, w.driveId],
  );
  files = uploads.length + 1;
  const at = (i: number) => uploads[i]!;
  await db.pool.query('DELETE FROM storage.chunk_manifests WHERE file_hash = $1', [at(4).hash]);
  await db.pool.query('DELETE FROM storage.blobs WHERE hash = $1', [at(8).objects[1]!.hash]);
  await db.pool.query('UPDATE storage.blobs SET size = size + 1 WHERE hash = $1', [at(10).hash]);
  await db.pool.query('UPDATE storage.files SET size = size + 1 WHERE id = $1', [at(13).fileId]);
  await db.pool.query(`UPDATE storage.chunk_manifests SET content_type = 'audio/ogg' WHERE file_hash = $1`, [
    at(17).hash,
  ]);
  await db.pool.query('UPDATE storage.files SET drive_id = $1 WHERE id = $2', [other.driveId, at(21).fileId]);
});
afterAll(async () => {
  await h?.close();
  await h?.db.destroy();
  await db?.drop();
});

/** Every page of the walk from the start, by `page(after, limit)`. */
async function walk(
  page: (
    after: string | null,
    limit: number,
  ) => Promise<{ scanned: number; lastKey: string | null; anomalies: readonly FileRowAnomaly[] }>,
  limit: number,
) {
  const pages = [];
  let after: string | null = null;
  for (;;) {
    const p = await page(after, limit);
    pages.push(p);
    if (p.lastKey !== null) after = p.lastKey;
    if (p.scanned < limit) return pages;
  }
}

describe('OxiFileRowStream', () => {
  it('returns the pages scanFilesById returns, across segments, and a replayed page again', async () => {
    const scan = new OxiFileContentScan(h.db, { segmentRows: 0 });
    const paged = await walk((after, limit) => scan.scanFilesById(after, limit, options), 10);
    const stream = new OxiFileRowStream(h.db, options, 20);
    const streamed = await walk((after, limit) => stream.next(after, limit), 10);
    expect(streamed).toEqual(paged);
    expect(paged.reduce((n, p) => n + p.scanned, 0)).toBe(files);
    const anomalies = paged.flatMap((p) => p.anomalies);
    // 2 missing (a manifest, a chunk row), 2 sizes (legacy blob, file), 1 mime, 1 drive.
    expect(anomalies.filter((a) => a.blobSize === null)).toHaveLength(2);
    expect(anomalies.filter((a) => a.blobSize !== null && a.blobSize !== a.fileSize)).toHaveLength(2);
    expect(anomalies.filter((a) => a.mimeMismatch)).toHaveLength(1);
    expect(anomalies.filter((a) => a.folderDriveId !== null)).toHaveLength(1);
    expect(anomalies).toHaveLength(6);
    expect(stream.statements).toBe(Math.ceil(files / 20));

    const second = paged[1]!;
    expect(await stream.next(paged[0]!.lastKey, 10)).toEqual(second);
    const next = await stream.next(second.lastKey, 5);
    expect(next).toEqual(await scan.scanFilesById(second.lastKey, 5, options));
    await stream.close();
    await stream.close();
  });

  it('young anomalies are skipped', async () => {
    const young: FileScanOptions = { createdBefore: new Date(0), trashedBefore: new Date(0) };
    const stream = new OxiFileContentScan(h.db, { segmentRows: 19 }).openFileRowStream(young)!;
    const pages = await walk((after, limit) => stream.next(after, limit), 19);
    expect(pages.reduce((n, p) => n + p.scanned, 0)).toBe(files);
    expect(pages.flatMap((p) => p.anomalies)).toEqual([]);
    await stream.close();
  });
});
