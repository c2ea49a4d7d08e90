import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStorageMigrationJob, STORAGE_MIGRATION_JOB_NAME } from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalFsBlobStorage } from '../blob/local-fs-blob-storage.js';
import { CDC_CHUNK_SIZES } from '../content/file-content.js';
import { openFileContent } from '../content/open-file-content.js';
import { OxiBlobWalkRepository } from './oxi-blob-walk-repository.js';
import { type OxiHarness, type OxiWorld, oxiHarness, oxiWorld, type Upload } from './test-fixtures.js';

let db: TestDatabase;
let h: OxiHarness;
let w: OxiWorld;
let root: string;
let source: LocalFsBlobStorage;
let target: LocalFsBlobStorage;
let uploads: Upload[];

beforeAll(async () => {
  db = await createTestDatabase({ domain: 'oxicloud' });
  h = oxiHarness(db.pool);
  root = await mkdtemp(join(tmpdir(), 'oxicloud-oxi-walk-'));
  source = new LocalFsBlobStorage({ root: join(root, 'source') });
  await mkdir(join(root, 'target'));
  target = new LocalFsBlobStorage({ root: join(root, 'target') });
  w = await oxiWorld(db.pool, source);
  const { min } = CDC_CHUNK_SIZES;
  const multi = Buffer.concat([randomBytes(min), randomBytes(min), randomBytes(min), randomBytes(5)]);
  uploads = [
    await w.upload({ name: 'multi.bin', data: multi }),
    await w.upload({ name: 'multi-copy.bin', data: multi }),
    await w.upload({ name: 'one.txt', data: Buffer.from('one') }),
    await w.upload({ name: 'old.bin', data: randomBytes(900), legacy: true }),
    await w.upload({ name: 'empty', data: Buffer.alloc(0) }),
  ];
});
afterAll(async () => {
  await h?.close();
  await h?.db.destroy();
  await db?.drop();
  if (root) await rm(root, { recursive: true, force: true });
});

async function readAll(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(Buffer.from(part));
  return Buffer.concat(parts);
}

describe('OxiBlobWalkRepository', () => {
  it('walks exactly the blob rows (chunks, one-chunk hash, legacy) in hash order; never a manifest’s own hash', async () => {
    const repo = new OxiBlobWalkRepository(h.db);
    const objects = new Map(uploads.flatMap((u) => u.objects).map((o) => [o.hash, o.size]));
    const expected = [...objects.keys()].sort();
    expect(expected).toHaveLength(6);
    const walked: string[] = [];
    let after: string | null = null;
    for (;;) {
      const page = await repo.listBlobsAfter(after, 2);
      for (const row of page) {
        walked.push(row.hash);
        expect(row.size).toBe(objects.get(row.hash));
      }
      if (page.length < 2) break;
      after = page.at(-1)!.hash;
    }
    expect(walked).toEqual(expected);
    expect(walked).not.toContain(uploads[0]!.hash);
    expect(walked).not.toContain(uploads[4]!.hash);
    expect(await repo.countBlobs()).toBe(6);
    await db.pool.query(`UPDATE storage.blobs SET created_at = now() WHERE hash = $1`, [expected[3]]);
    const since = new Date(Date.now() - 60_000);
    expect((await repo.listBlobsCreatedSince(since, null, 10)).map((r) => r.hash)).toEqual([expected[3]]);
    expect(await repo.listBlobsCreatedSince(since, expected[3]!, 10)).toEqual([]);
  });

  it('storage_migration over it copies every object, so every file (multi-chunk too) reads whole from the target', async () => {
    h.engine.register(
      createStorageMigrationJob({
        blobs: new OxiBlobWalkRepository(h.db),
        sourceBackend: 'local',
        // The target is a second local store standing in for `s3`.
        resolveBackend: (name) => (name === 'local' ? source : name === 's3' ? target : null),
        logger: h.logger,
      }),
    );
    const outcome = await h.engine.runOrResume(STORAGE_MIGRATION_JOB_NAME, { params: { target: 's3' } });
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ kind: 'ok' });
    for (const upload of uploads) {
      expect(await readAll(await openFileContent(upload.content, target))).toEqual(upload.bytes);
    }
    expect(await target.exists(uploads[0]!.hash)).toBe(false);
  });
});
