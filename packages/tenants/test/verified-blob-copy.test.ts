/**
 * copyVerifiedBlob over in-memory ports: the target keeps the bytes only when
 * the stream it reads ends, and the stream ends only for bytes that hash to
 * the key with the announced size. (The real backends' abort behaviour is in
 * tests/integration/test/repair-restore-bytes.test.ts, against s3rver.)
 */
import { Readable } from 'node:stream';
import { blake3 } from 'hash-wasm';
import { describe, expect, it } from 'vitest';
import { copyVerifiedBlob } from '../src/repair/verified-blob-copy.js';

/** A backend of one map; `put` stores only a stream that ends (as both real backends do). */
function memory(initial: Record<string, Uint8Array> = {}) {
  const stored = new Map(Object.entries(initial));
  return {
    stored,
    async get(hash: string) {
      const bytes = stored.get(hash);
      if (bytes === undefined) throw Object.assign(new Error(`no ${hash}`), { code: 'NOT_FOUND' });
      // Three chunks, so the digest is computed across chunk boundaries.
      const third = Math.ceil(bytes.length / 3);
      return Readable.from([
        bytes.subarray(0, third),
        bytes.subarray(third, 2 * third),
        bytes.subarray(2 * third),
      ]);
    },
    async put(hash: string, data: Uint8Array | AsyncIterable<Uint8Array> | NodeJS.ReadableStream) {
      const chunks: Uint8Array[] = [];
      for await (const chunk of data as AsyncIterable<Uint8Array>) chunks.push(chunk);
      stored.set(hash, Buffer.concat(chunks));
    },
  };
}

const good = new TextEncoder().encode('the bytes as they were uploaded');

describe('copyVerifiedBlob', () => {
  it('copies bytes that hash to the key', async () => {
    const hash = await blake3(good);
    const from = memory({ [hash]: good });
    const to = memory();
    expect(await copyVerifiedBlob(from, to, hash, good.length)).toEqual({
      status: 'copied',
      size: good.length,
    });
    expect(Buffer.from(to.stored.get(hash) as Uint8Array).equals(Buffer.from(good))).toBe(true);
  });

  it('a put that fails after a short read is a failed transfer, rethrown, not a mismatch', async () => {
    const hash = await blake3(good);
    const from = memory({ [hash]: good });
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    const to = {
      async put(_hash: string, data: Uint8Array | AsyncIterable<Uint8Array> | NodeJS.ReadableStream) {
        for await (const _chunk of data as AsyncIterable<Uint8Array>) throw reset; // after the first chunk
      },
    };
    await expect(copyVerifiedBlob(from, to, hash, good.length)).rejects.toBe(reset);
  });

  it('other bytes under the key: nothing stored, the corrupt bytes already there stay', async () => {
    const hash = await blake3(good);
    const impostor = new TextEncoder().encode('other bytes of the same length!');
    expect(impostor.length).toBe(good.length);
    const corrupt = new Uint8Array([1, 2, 3]);
    const from = memory({ [hash]: impostor });
    const to = memory({ [hash]: corrupt });
    expect(await copyVerifiedBlob(from, to, hash, good.length)).toEqual({
      status: 'mismatch',
      hash: await blake3(impostor),
      size: impostor.length,
    });
    expect(to.stored.get(hash)).toBe(corrupt);
  });

  it('the right bytes with another announced size: a mismatch, nothing stored', async () => {
    const hash = await blake3(good);
    const to = memory();
    const result = await copyVerifiedBlob(memory({ [hash]: good }), to, hash, good.length + 1);
    expect(result).toMatchObject({ status: 'mismatch', hash, size: good.length });
    expect(to.stored.has(hash)).toBe(false);
  });

  it('no copy: absent, nothing stored', async () => {
    const hash = await blake3(good);
    const to = memory();
    expect(await copyVerifiedBlob(memory(), to, hash, good.length)).toEqual({ status: 'absent' });
    expect(to.stored.size).toBe(0);
  });
});
