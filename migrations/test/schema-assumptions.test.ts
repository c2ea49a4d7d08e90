import { createOxiCloudDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schemaAssumptionProblems } from '../src/index.js';

/** A check's assumptions beside a newer OxiCloud: what it reads, held against OXICLOUD_SCHEMA. */
describe('schemaAssumptionProblems', () => {
  let db: TestDatabase;
  const problems = async (tables: readonly string[]) => {
    const client = await db.pool.connect();
    try {
      return await schemaAssumptionProblems(client, tables);
    } finally {
      client.release();
    }
  };
  beforeAll(async () => {
    db = await createOxiCloudDatabase({ max: 2 });
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("finds nothing on OxiCloud's schema as described, and nothing in what a newer OxiCloud only added", async () => {
    expect(
      await problems(['storage.files', 'storage.blobs', 'storage.chunk_manifests', 'storage.folders']),
    ).toEqual([]);
    await db.pool.query(`
      ALTER TABLE storage.files ADD COLUMN checksum_sha256 text;
      CREATE TABLE storage.file_versions (id uuid PRIMARY KEY);
      CREATE INDEX files_checksum_idx ON storage.files (checksum_sha256);`);
    expect(await problems(['storage.files', 'storage.blobs'])).toEqual([]);
  });

  it('names a renamed column, a changed type and a dropped trigger of the tables read, and nothing of the others', async () => {
    await db.pool.query(`
      ALTER TABLE storage.blobs RENAME COLUMN ref_count TO refs;
      ALTER TABLE storage.chunk_manifests ALTER COLUMN total_size TYPE numeric;
      DROP TRIGGER trg_files_decrement_blob_ref ON storage.files;`);
    const lines = await problems(['storage.blobs', 'storage.chunk_manifests', 'storage.files']);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^storage\.blobs: missing column ref_count /),
        expect.stringMatching(
          /^storage\.chunk_manifests: column total_size: type bigint described, numeric found/,
        ),
        expect.stringMatching(/^storage\.files: missing trigger trg_files_decrement_blob_ref /),
      ]),
    );
    expect(lines.some((l) => l.includes('extra'))).toBe(false);
    expect(await problems(['storage.folders', 'storage.drives'])).toEqual([]);
    expect(await problems(['storage.nothing_here'])).toEqual([
      "storage.nothing_here: not a table of OxiCloud's schema as this engine knows it",
    ]);
  });
});
