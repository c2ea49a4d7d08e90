import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChunkManifestRecord } from '@oxicloud/tenants';
import { afterAll, describe, expect, it } from 'vitest';
import { blake3Hex } from '../hashing/blake3.js';
import { StorageError } from '../storage-error.js';
import { localQuarantinedBlobPath, localQuarantinedManifestPath } from './blob-layout.js';
import { blobQuarantineOf } from './blob-quarantine-of.js';
import { EncryptedBlobStorage } from './encrypted-blob-storage.js';
import { LocalFsBlobStorage } from './local-fs-blob-storage.js';
import { decodeManifestRecord, encodeManifestRecord } from './manifest-record-codec.js';

const folders: string[] = [];
async function store(): Promise<LocalFsBlobStorage> {
  const root = await mkdtemp(join(tmpdir(), 'oxicloud-quarantine-'));
  folders.push(root);
  return new LocalFsBlobStorage({ root });
}
afterAll(async () => {
  await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function putRandom(blobs: LocalFsBlobStorage, size = 100): Promise<string> {
  const bytes = randomBytes(size);
  const hash = blake3Hex(bytes);
  await blobs.put(hash, bytes, size);
  return hash;
}

describe('LocalFsBlobStorage quarantine (dedup_gc on OxiCloud)', () => {
  it('moves an object out of .blobs and back by rename, stamping the quarantine time', async () => {
    const blobs = await store();
    const hash = await putRandom(blobs);
    const before = await readFile(blobs.pathOf(hash));
    const t0 = Date.now();
    expect(await blobs.quarantineBlob(hash)).toBe(true);
    expect(await blobs.exists(hash)).toBe(false);
    const quarantinedAt = (await stat(localQuarantinedBlobPath(blobs.root, hash))).mtime.getTime();
    expect(quarantinedAt).toBeGreaterThanOrEqual(t0 - 1000);
    expect(await blobs.list({ limit: 10 })).toEqual([]); // OxiCloud's area holds nothing of it
    expect(await blobs.quarantineBlob(hash)).toBe(false); // nothing left to move
    expect(await blobs.restoreBlob(hash)).toBe(true);
    expect(await readFile(blobs.pathOf(hash))).toEqual(before);
    expect(await blobs.restoreBlob(hash)).toBe(false);
  });

  it('restores over an object written meanwhile, lists in hash order with paging, purges', async () => {
    const blobs = await store();
    const hashes = [];
    for (let i = 0; i < 5; i++) hashes.push(await putRandom(blobs, 10 + i));
    for (const hash of hashes) await blobs.quarantineBlob(hash);
    const sorted = [...hashes].sort();
    const first = await blobs.listQuarantinedBlobs({ limit: 3 });
    expect(first.map((e) => e.hash)).toEqual(sorted.slice(0, 3));
    const rest = await blobs.listQuarantinedBlobs({ startAfter: first[2]!.hash, limit: 3 });
    expect(rest.map((e) => e.hash)).toEqual(sorted.slice(3));
    // An upload wrote the same content again at the final path: the restore replaces it.
    await writeFile(blobs.pathOf(sorted[0]!), 'truncated');
    expect(await blobs.restoreBlob(sorted[0]!)).toBe(true);
    expect((await blobs.head(sorted[0]!))?.size).toBe(hashes.indexOf(sorted[0]!) + 10);
    expect(await blobs.purgeQuarantinedBlob(sorted[1]!)).toBe(true);
    expect(await blobs.purgeQuarantinedBlob(sorted[1]!)).toBe(false);
    expect((await blobs.listQuarantinedBlobs({ limit: 10 })).map((e) => e.hash)).toEqual(sorted.slice(2));
  });

  it('saves, lists, reads and purges manifests; a damaged record is refused, not trusted', async () => {
    const blobs = await store();
    const a = randomBytes(10);
    const b = randomBytes(7);
    const record: ChunkManifestRecord = {
      fileHash: blake3Hex(Buffer.concat([a, b, a])),
      chunkHashes: [blake3Hex(a), blake3Hex(b), blake3Hex(a)],
      chunkSizes: [10, 7, 10],
      totalSize: 27,
      contentType: 'text/plain',
    };
    await blobs.saveManifest(record);
    expect(await blobs.readQuarantinedManifest(record.fileHash)).toEqual(record);
    expect((await blobs.listQuarantinedManifests({ limit: 5 })).map((e) => e.hash)).toEqual([
      record.fileHash,
    ]);
    expect(await blobs.listQuarantinedBlobs({ limit: 5 })).toEqual([]); // manifests are not blobs
    await writeFile(localQuarantinedManifestPath(blobs.root, record.fileHash), '{"file_hash": 1}');
    await expect(blobs.readQuarantinedManifest(record.fileHash)).rejects.toThrow(StorageError);
    expect(await blobs.purgeQuarantinedManifest(record.fileHash)).toBe(true);
    expect(await blobs.readQuarantinedManifest(record.fileHash)).toBeNull();
    expect(existsSync(localQuarantinedManifestPath(blobs.root, record.fileHash))).toBe(false);
  });

  it('checks a record: its hash, aligned arrays, the total', () => {
    const hash = '1'.repeat(64);
    const good = {
      fileHash: hash,
      chunkHashes: ['2'.repeat(64)],
      chunkSizes: [5],
      totalSize: 5,
      contentType: null,
    };
    expect(decodeManifestRecord(hash, encodeManifestRecord(good), 'x')).toEqual(good);
    const bad = (r: object) => () =>
      decodeManifestRecord(hash, encodeManifestRecord(r as ChunkManifestRecord), 'x');
    expect(bad({ ...good, fileHash: '3'.repeat(64) })).toThrow(/file_hash differs/);
    expect(bad({ ...good, chunkSizes: [5, 1] })).toThrow(/as many/);
    expect(bad({ ...good, totalSize: 6 })).toThrow(/sum of chunk_sizes/);
    expect(bad({ ...good, chunkHashes: ['nope'] })).toThrow(/64-hex/);
  });

  it('refuses bad hashes before any file call; an encrypted store moves the ciphertext as it is', async () => {
    const blobs = await store();
    await expect(blobs.quarantineBlob('../../etc')).rejects.toMatchObject({ code: 'INVALID_HASH' });
    const encrypted = new EncryptedBlobStorage({ inner: blobs, key: randomBytes(32) });
    expect(blobQuarantineOf(encrypted)).toBe(encrypted);
    const plain = randomBytes(64);
    const hash = blake3Hex(plain);
    await encrypted.put(hash, plain, plain.length);
    const sealed = await readFile(blobs.pathOf(hash));
    expect(await encrypted.quarantineBlob(hash)).toBe(true);
    expect(await readFile(localQuarantinedBlobPath(blobs.root, hash))).toEqual(sealed);
    expect(await encrypted.restoreBlob(hash)).toBe(true);
    const back: Buffer[] = [];
    for await (const chunk of await encrypted.get(hash)) back.push(Buffer.from(chunk));
    expect(Buffer.concat(back)).toEqual(plain);
  });
});
