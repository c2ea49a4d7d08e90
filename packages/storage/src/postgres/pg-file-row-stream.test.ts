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
  it('returns the pages scanFilesById returns, across bounded segments, and a replayed page again', async () => {
    const scan = new PgFileBlobScan(kysely, { pool: db.pool });
    const paged = await walk((after, limit) => scan.scanFilesById(after, limit, options), 10);
    const stream = new PgFileRowStream(db.pool, options, { maxSegmentRows: 20 });
    const streamed = await walk((after, limit) => stream.next(after, limit), 10);
    expect(streamed).toEqual(paged);
    expect(paged.reduce((n, p) => n + p.scanned, 0)).toBe(FILES);
    const kinds = paged.flatMap((p) => p.anomalies);
    expect(kinds.filter((a) => a.blobSize !== a.fileSize)).toHaveLength(Math.floor(FILES / 5));
    expect(kinds.filter((a) => a.mimeMismatch)).toHaveLength(Math.floor(FILES / 7));
    // 20 rows per segment: 57 rows in 3 segments (the last page of each reopens after its last key).
    expect(stream.segments).toBe(3);

    // A replay (a lost checkpoint, a retried batch) asks for an earlier page: it reopens there.
    const second = paged[1]!;
    expect(await stream.next(paged[0]!.lastKey, 10)).toEqual(second);
    // Another batch size (the loop halved it): the page read ahead is dropped, the rows are not.
    const next = await stream.next(second.lastKey, 5);
    expect(next.scanned).toBe(5);
    expect(next.lastKey).toBe((await scan.scanFilesById(second.lastKey, 5, options)).lastKey);
    await stream.close();
    await stream.close();
    expect(db.pool.totalCount - db.pool.idleCount).toBe(0);
  });

  it('a connection killed between two pages fails the next one; the retry opens a fresh segment', async () => {
    const stream = new PgFileRowStream(db.pool, options);
    const first = await stream.next(null, 10);
    const { rows } = await db.pool.query(
      `SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND query LIKE 'FETCH%files_by_id' AND pid <> pg_backend_pid()`,
    );
    expect(rows).toHaveLength(1);
    await db.pool.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
    // The page read ahead may have landed before the kill: at the latest the one after it fails.
    let after = first.lastKey;
    let failed: unknown = null;
    for (let i = 0; i < 3 && failed === null; i++) {
      try {
        after = (await stream.next(after, 10)).lastKey;
      } catch (error) {
        failed = error;
      }
    }
    expect(failed).not.toBeNull();
    const retried = await stream.next(after, 10);
    const scan = new PgFileBlobScan(kysely);
    expect(retried).toEqual(await scan.scanFilesById(after, 10, options));
    await stream.close();
    expect(scan.openFileRowStream(options)).toBeNull();
  });
});
