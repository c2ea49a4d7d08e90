import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStorageError } from '../blob/blob-storage.contract.js';
import { BLAKE3_EMPTY, blake3Hex } from './blake3.js';
import { Blake3WorkerPool, SNIFF_HEAD_BYTES } from './blake3-worker-pool.js';

describe('Blake3WorkerPool', () => {
  let dir: string;
  let pool: Blake3WorkerPool;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'oxicloud-hash-'));
    pool = new Blake3WorkerPool({ size: 2, chunkBytes: 64 * 1024 });
  });

  afterAll(async () => {
    await pool.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function file(bytes: Uint8Array): Promise<string> {
    const path = join(dir, blake3Hex(bytes));
    await writeFile(path, bytes);
    return path;
  }

  it('hashes files of every shape, with their size and first 4 KiB', async () => {
    for (const length of [0, 1, 4095, 4096, 4097, 64 * 1024, 64 * 1024 + 1, 3_000_017]) {
      const bytes = randomBytes(length);
      const digest = await pool.hashFile(await file(bytes));
      expect(digest.hash, `length ${length}`).toBe(blake3Hex(bytes));
      expect(digest.size).toBe(length);
      expect(Buffer.from(digest.head).equals(bytes.subarray(0, SNIFF_HEAD_BYTES))).toBe(true);
    }
    expect((await pool.hashFile(await file(new Uint8Array()))).hash).toBe(BLAKE3_EMPTY);
  });

  it('one worker, its read buffer reused: a short file after a long one has only its own bytes in its head', async () => {
    const one = new Blake3WorkerPool({ size: 1, chunkBytes: SNIFF_HEAD_BYTES });
    try {
      const long = randomBytes(3 * SNIFF_HEAD_BYTES + 5);
      const short = randomBytes(10);
      expect((await one.hashFile(await file(long))).hash).toBe(blake3Hex(long));
      const digest = await one.hashFile(await file(short));
      expect(digest.hash).toBe(blake3Hex(short));
      expect(Buffer.from(digest.head).equals(short)).toBe(true);
      expect((await one.hashFile(await file(new Uint8Array()))).head).toHaveLength(0);
    } finally {
      await one.close();
    }
  });

  it('hashes streams whose chunks do not line up with its own', async () => {
    const bytes = randomBytes(1_000_003);
    const sizes = [1, 4095, 70_000, 3, 65_536];
    const chunks: Uint8Array[] = [];
    for (let offset = 0, i = 0; offset < bytes.length; i++) {
      const size = sizes[i % sizes.length]!;
      chunks.push(bytes.subarray(offset, offset + size));
      offset += size;
    }
    const digest = await pool.hashStream(Readable.from(chunks));
    expect(digest).toMatchObject({ hash: blake3Hex(bytes), size: bytes.length });
    expect(Buffer.from(digest.head).equals(bytes.subarray(0, SNIFF_HEAD_BYTES))).toBe(true);
    const empty = await pool.hashStream(Readable.from([]));
    expect(empty).toMatchObject({ hash: BLAKE3_EMPTY, size: 0 });
    expect(empty.head.length).toBe(0);
  });

  it('runs more jobs than workers, each with its own result', async () => {
    const inputs = Array.from({ length: 9 }, (_, i) => randomBytes(200_000 + i));
    const digests = await Promise.all(
      inputs.map(async (bytes, i) =>
        i % 2 === 0 ? pool.hashFile(await file(bytes)) : pool.hashStream(Readable.from([bytes])),
      ),
    );
    digests.forEach((digest, i) => {
      expect(digest.hash).toBe(blake3Hex(inputs[i]!));
    });
  });

  it('rejects a missing file with NOT_FOUND', async () => {
    await expectStorageError(pool.hashFile(join(dir, 'missing')), 'NOT_FOUND');
  });

  it('rejects with BACKEND_ERROR when the source stream fails, and keeps working', async () => {
    const failing = (async function* () {
      yield Buffer.alloc(100_000);
      throw new Error('connection reset');
    })();
    await expectStorageError(pool.hashStream(failing), 'BACKEND_ERROR');
    const bytes = randomBytes(10);
    expect((await pool.hashStream(Readable.from([bytes]))).hash).toBe(blake3Hex(bytes));
  });

  it('stops at once on abort (also while queued), and keeps working afterwards', async () => {
    const big = Buffer.alloc(64 * 1024 * 1024, 7);
    const path = await file(big);
    const controller = new AbortController();
    const reason = new Error('shutting down');
    const slow = new Blake3WorkerPool({ size: 1, chunkBytes: 4096 }); // 16k reads: long enough to abort mid-way
    const running = slow.hashFile(path, controller.signal);
    const queued = slow.hashFile(path, controller.signal);
    setTimeout(() => controller.abort(reason), 5);
    await expect(running).rejects.toBe(reason);
    await expect(queued).rejects.toBe(reason);
    await expect(slow.hashFile(path, controller.signal)).rejects.toBe(reason); // already aborted
    const small = randomBytes(1000);
    expect((await slow.hashFile(await file(small))).hash).toBe(blake3Hex(small));
    await slow.close();
    await expectStorageError(slow.hashFile(path), 'BACKEND_ERROR');
  });

  it('refuses bad options with INVALID_CONFIG', () => {
    for (const options of [{ size: 0 }, { chunkBytes: 10 }, { maxChunksInFlight: 0 }, { size: 1.5 }]) {
      expect(() => new Blake3WorkerPool(options)).toThrow(
        expect.objectContaining({ code: 'INVALID_CONFIG' }),
      );
    }
  });
});
