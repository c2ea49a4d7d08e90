import { randomBytes } from 'node:crypto';
import { createBlobHasher, S3BlobStorage } from '@oxicloud/storage';
import { createStorageConsistencyCheck } from '@oxicloud/tenants';
// The storage package's own s3rver fixture (test-only; it needs --openssl-legacy-provider in its child process).
import {
  createTestDatabase,
  type S3rverProcess,
  startS3rver,
  type TestDatabase,
} from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsistencyHarness, consistencyHarness, summary } from './consistency-fixtures.js';
import { type BlobWorld, blobWorld, putBlob } from './storage-consistency-fixtures.js';

/** storage_consistency over S3BlobStorage on a real S3-protocol server (s3rver). */
describe('storage_consistency on S3BlobStorage (s3rver) + Postgres', () => {
  let server: S3rverProcess;
  let db: TestDatabase;
  let h: ConsistencyHarness;
  let w: BlobWorld;
  let s3: S3BlobStorage;

  beforeAll(async () => {
    server = await startS3rver();
    db = await createTestDatabase();
    h = consistencyHarness(db.pool);
    w = await blobWorld(db.pool);
    s3 = new S3BlobStorage({
      bucket: server.bucket,
      region: 'us-east-1',
      endpoint: server.endpoint,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
      prefix: 'consistency/blobs/',
      consistencyChecks: (self) => [
        createStorageConsistencyCheck({
          blobs: self,
          index: w.index,
          hasher: createBlobHasher(self, w.pool),
        }),
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await h?.engine.shutdown({ timeoutMs: 1000 }).catch(() => undefined);
    s3?.close();
    await w?.close();
    await db?.drop();
    await server?.stop();
  });

  it('finds an orphan object and a row whose object is gone, with the check the backend contributes', async () => {
    const world = { driveId: w.driveId, storage: s3 };
    const clean = [];
    for (let i = 0; i < 5; i++) clean.push(await putBlob(db.pool, world, {}));
    const orphan = await putBlob(db.pool, world, { row: false });
    const lost = await putBlob(db.pool, world, { files: 2 });
    await s3.delete(lost.hash);
    const [check] = s3.consistencyChecks();
    expect(check?.name).toBe('storage_consistency');
    expect(check?.subsystem).toBe('blobs');
    // S3 LastModified is "now", so the orphan is young: invisible without force.
    const graced = await h.run(check!, { batch_size: 3 });
    expect(summary(graced.findings)).toEqual([`missing_blob_bytes DataLoss ${lost.hash}`]);
    const forced = await h.run(check!, { force: true, batch_size: 3 });
    expect(summary(forced.findings)).toEqual(
      [`missing_blob_bytes DataLoss ${lost.hash}`, `orphan_blob Reclaimable ${orphan.hash}`].sort(),
    );
    expect(forced.findings.find((f) => f.kind === 'missing_blob_bytes')?.detail).toMatchObject({
      ref_count: 2,
      affected_file_ids: lost.fileIds,
      backend: 's3',
    });
    expect(forced.stats['scanned_count']).toBe(7);

    // deep + force streams every object through the worker pool: other bytes under a key are caught.
    const victim = clean[2]!;
    await s3.put(victim.hash, randomBytes(200));
    const deep = await h.run(check!, { force: true, deep: true });
    expect(summary(deep.findings)).toEqual(
      [
        `blob_hash_mismatch DataLoss ${victim.hash}`,
        `missing_blob_bytes DataLoss ${lost.hash}`,
        `orphan_blob Reclaimable ${orphan.hash}`,
      ].sort(),
    );
  }, 60_000);
});
