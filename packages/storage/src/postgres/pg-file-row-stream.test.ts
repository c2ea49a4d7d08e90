import type { FileRowAnomaly, FileScanOptions } from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StorageDatabase } from './database.js';
import { PgFileBlobScan } from './pg-file-blob-scan.js';
import { PgFileRowStream } from './pg-file-row-stream.js';

let db: TestDatabase;
let kysely: Kysely<StorageDatabase>;
const FILES = 57;
const options: FileScanOptions = {
  createdBefore: new Date(Date.now() + 3_600_000),
  trashedBefore: new Date(Date.now() + 3_600_000),
};

beforeAll(async () => {
  db = await createTestDatabase();
  kysely = new Kysely<StorageDatabase>({ dialect: new PostgresDialect({ pool: db.pool }) });
  const user = await db.pool.query("INSERT INTO auth.users (username) VALUES ('stream') RETURNING id");
  const drive = await db.pool.query(
    "INSERT INTO storage.drives (owner_id, name) VALUES ($1, 'd') RETURNING id",
    [user.rows[0].id],
  );
  const driveId = drive.rows[0].id as string;
  await db.pool.query(
    `INSERT INTO storage.blobs (hash, size, content_type)
     SELECT lpad(to_hex(n), 64, '0'), n * 10, CASE WHEN n % 7 = 0 THEN 'image/png' ELSE 'text/plain' END
       FROM generate_series(1, $1::int) n`,
    [FILES],
  );
  // Every 5th file has another size than its blob row, every 7th blob another content type.
  await db.pool.query(
    `INSERT INTO storage.files (drive_id, name, blob_hash, size, mime_type)
     SELECT $1, 'f' || n, lpad(to_hex(n), 64, '0'), CASE WHEN n % 5 = 0 THEN n * 10 + 1 ELSE n * 10 END, 'text/plain'
       FROM generate_series(1, $2::int) n`,
    [driveId, FILES],
  );
});
afterAll(async () => {
  await kysely?.destroy();
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

describe('PgFileRowStream', () => {
  it('returns the pages scanFilesById returns, across segments, and a replayed page again', async () => {
    const scan = new PgFileBlobScan(kysely, { segmentRows: 0 });
    expect(scan.openFileRowStream(options)).toBeNull();
    const paged = await walk((after, limit) => scan.scanFilesById(after, limit, options), 10);
    const stream = new PgFileRowStream(kysely, options, 20);
    const streamed = await walk((after, limit) => stream.next(after, limit), 10);
    expect(streamed).toEqual(paged);
    expect(paged.reduce((n, p) => n + p.scanned, 0)).toBe(FILES);
    const kinds = paged.flatMap((p) => p.anomalies);
    expect(kinds.filter((a) => a.blobSize !== a.fileSize)).toHaveLength(Math.floor(FILES / 5));
    expect(kinds.filter((a) => a.mimeMismatch)).toHaveLength(Math.floor(FILES / 7));
    // 20 rows per statement: 57 rows in 3 statements, not 6 (one per page).
    expect(stream.statements).toBe(3);

    // A replay (a lost checkpoint, a retried batch) asks for an earlier page: read again from there.
    const second = paged[1]!;
    expect(await stream.next(paged[0]!.lastKey, 10)).toEqual(second);
    // Another page size (the loop halved it): a new segment, same rows.
    const next = await stream.next(second.lastKey, 5);
    expect(next).toEqual(await scan.scanFilesById(second.lastKey, 5, options));
    await stream.close();
    await stream.close();
  });

  it('a segment that ends on a page boundary ends with an empty page; a young anomaly is skipped', async () => {
    const young: FileScanOptions = { createdBefore: new Date(0), trashedBefore: new Date(0) };
    const stream = new PgFileBlobScan(kysely, { segmentRows: 19 }).openFileRowStream(young)!;
    const pages = await walk((after, limit) => stream.next(after, limit), 19);
    expect(pages.map((p) => p.scanned)).toEqual([19, 19, 19, 0]);
    expect(pages.flatMap((p) => p.anomalies)).toEqual([]);
    await stream.close();
  });
});
