import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalFsBlobStorage } from '../blob/local-fs-blob-storage.js';
import { BLAKE3_EMPTY, blake3Hex } from '../hashing/blake3.js';
import { Blake3WorkerPool } from '../hashing/blake3-worker-pool.js';
import { isStorageError } from '../storage-error.js';
import type { FileContent } from './file-content.js';
import { hashFileContent } from './hash-file-content.js';

let dir: string;
let blobs: LocalFsBlobStorage;
let pool: Blake3WorkerPool;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'oxicloud-content-hash-'));
  blobs = new LocalFsBlobStorage({ root: join(dir, 'blobs') });
  pool = new Blake3WorkerPool({ size: 1 });
});

afterAll(async () => {
  await pool.close();
  await rm(dir, { recursive: true, force: true });
});

async function putChunk(bytes: Uint8Array): Promise<{ hash: string; size: number }> {
  const hash = blake3Hex(bytes);
  await blobs.put(hash, bytes, bytes.length);
  return { hash, size: bytes.length };
}

describe('hashFileContent', () => {
  it('is the BLAKE3 of the chunks concatenated, repeats included, on the calling thread and in a worker', async () => {
    const a = randomBytes(262_144);
    const b = randomBytes(1_048_576);
    const tail = randomBytes(3);
    const whole = Buffer.concat([a, b, a, tail]);
    const chunks = [await putChunk(a), await putChunk(b), await putChunk(a), await putChunk(tail)];
    const content: FileContent = {
      kind: 'manifest',
      fileHash: blake3Hex(whole),
      chunks,
      totalSize: whole.length,
    };
    const expected = { hash: blake3Hex(whole), size: whole.length };
    expect(await hashFileContent(content, blobs)).toEqual(expected);
    expect(await hashFileContent(content, blobs, { pool })).toEqual(expected);
  });

  it('gives a one-chunk file the hash of its only chunk, and a legacy blob its own hash', async () => {
    const only = await putChunk(randomBytes(1000));
    const oneChunk: FileContent = {
      kind: 'manifest',
      fileHash: only.hash,
      chunks: [only],
      totalSize: only.size,
    };
    expect(await hashFileContent(oneChunk, blobs)).toEqual(only);
    expect(await hashFileContent({ kind: 'legacy', ...only }, blobs, { pool })).toEqual(only);
  });

  it('gives the empty manifest the BLAKE3 of nothing', async () => {
    const empty: FileContent = { kind: 'manifest', fileHash: BLAKE3_EMPTY, chunks: [], totalSize: 0 };
    expect(await hashFileContent(empty, blobs)).toEqual({ hash: BLAKE3_EMPTY, size: 0 });
    expect(await hashFileContent(empty, blobs, { pool })).toEqual({ hash: BLAKE3_EMPTY, size: 0 });
  });

  it('shows a manifest whose file hash is not its bytes', async () => {
    const a = await putChunk(randomBytes(70_000));
    const b = await putChunk(randomBytes(70_000));
    const swapped: FileContent = {
      kind: 'manifest',
      fileHash: blake3Hex(Buffer.alloc(1)),
      chunks: [b, a],
      totalSize: 140_000,
    };
    expect((await hashFileContent(swapped, blobs)).hash).not.toBe(swapped.fileHash);
  });

  it('rejects with the reader’s error naming the chunk, in a worker too', async () => {
    const present = await putChunk(randomBytes(80_000));
    const absent = blake3Hex(Buffer.from('gone'));
    const content: FileContent = {
      kind: 'manifest',
      fileHash: blake3Hex(Buffer.from('whatever')),
      chunks: [present, { hash: absent, size: 10 }],
      totalSize: 80_010,
    };
    for (const options of [{}, { pool }]) {
      const error = await hashFileContent(content, blobs, options).catch((e: unknown) => e);
      expect(isStorageError(error, 'NOT_FOUND')).toBe(true);
      expect((error as Error).message).toContain(`chunk index 1 of 2 (${absent})`);
    }
    const short: FileContent = { kind: 'legacy', hash: present.hash, size: present.size + 1 };
    const error = await hashFileContent(short, blobs, { pool }).catch((e: unknown) => e);
    expect(isStorageError(error, 'SIZE_MISMATCH')).toBe(true);
  });
});
