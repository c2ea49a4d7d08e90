import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { categoryOrderFor } from '../content/category-order.js';
import { CATEGORY_ORDER_SQL } from './content-sql.js';

let db: TestDatabase;
let kysely: Kysely<unknown>;

beforeAll(async () => {
  db = await createTestDatabase();
  kysely = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: db.pool }) });
});
afterAll(async () => {
  await db?.drop();
});

/** Names and types that reach every arm of the rules, and their edges. */
const NAMES = [
  'photo.jpg',
  'Holiday.JPG',
  'archive.tar.GZ',
  'dir.pdf/file',
  'Setup.AppImage',
  'no-extension',
  'trailing.',
  '.pdf',
  'x.pdfpdfpdfpdfpdfpdf',
  'x.PDF\u0130',
  "it's.md",
  'a.b.c.rst',
  'v.webm',
  'q_%.sql',
];
const MIMES = [
  '',
  'application/octet-stream',
  'application/pdf',
  'text/csv',
  'application/x-msi',
  'image/png',
  'video/quicktime',
  'audio/mpeg',
  'text/x-python',
  'application/x-perlscript',
  'text/javascript',
  'text/markdown',
  'text/html',
  'text/css',
  'text/plain',
  'IMAGE/PNG',
  'application/json',
  'application/zip',
];

describe('CATEGORY_ORDER_SQL', () => {
  it('gives what categoryOrderFor gives for every name and type', async () => {
    const pairs = NAMES.flatMap((name) => MIMES.map((mime) => ({ name, mime })));
    const { rows } = await sql<{ name: string; mime: string; order: number }>`
      SELECT t.name, t.mime, ${CATEGORY_ORDER_SQL('t.name', 't.mime')} AS order
        FROM unnest(${pairs.map((p) => p.name)}::text[], ${pairs.map((p) => p.mime)}::text[]) AS t(name, mime)`.execute(
      kysely,
    );
    expect(rows).toHaveLength(pairs.length);
    const mismatches = rows.filter((r) => r.order !== categoryOrderFor(r.name, r.mime));
    expect(mismatches).toEqual([]);
    // The cases are not all one bucket: the comparison can fail.
    expect(new Set(rows.map((r) => r.order)).size).toBeGreaterThan(8);
  });
});
