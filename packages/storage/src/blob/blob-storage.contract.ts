import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { BlobStorage } from '@oxicloud/tenants';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStorageError, type StorageErrorCode } from '../storage-error.js';

/** How a backend's test file plugs into {@link describeBlobStorageContract}. */
export interface BlobStorageContractSetup {
  /** A fresh, empty storage (its own folder, prefix or bucket). */
  makeStorage(): Promise<BlobStorage>;
  /**
   * A storage of the same backend whose every file or network call fails
   * (a root below a regular file, an endpoint nobody listens on). Malformed
   * keys must still get `INVALID_HASH` from it: proof that keys are checked
   * before any I/O.
   */
  makeUnreachable(): Promise<BlobStorage>;
  /**
   * The backend under test keeps the bytes of an upload aborted half-way
   * (s3rver does; real S3 discards a PUT whose body is shorter than its
   * Content-Length). Then the "stores nothing" assertion is skipped for a
   * stream whose length turns out wrong; the rejection is still checked.
   */
  readonly keepsAbortedUploads?: boolean;
  /**
   * How many blobs the listing tests store (@defaultValue 2500: more than two
   * pages of S3's 1000). A decorator that passes listing through to a store
   * whose paging another run of the contract proves can take fewer.
   */
  readonly listingCount?: number;
}

/** A random well-formed blob key (the backends do not re-hash on put). */
export function randomHash(): string {
  return randomBytes(32).toString('hex');
}

async function readAll(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}

/** Rejects unless `promise` rejects with a `StorageError` of `code`; returns the error. */
export async function expectStorageError(promise: Promise<unknown>, code: StorageErrorCode): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected a StorageError ${code}`).toBeInstanceOf(Error);
  expect(isStorageError(error) ? error.code : String(error)).toBe(code);
  return error as Error;
}

function chunked(bytes: Uint8Array, sizes: readonly number[]): Readable {
  return Readable.from(
    (function* () {
      let offset = 0;
      let i = 0;
      while (offset < bytes.length) {
        const size = sizes[i++ % sizes.length]!;
        yield bytes.subarray(offset, offset + size);
        offset += size;
      }
    })(),
  );
}

async function inParallel<T>(items: readonly T[], concurrency: number, task: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await task(items[next++]!);
    }),
  );
}

/** Keys every backend must refuse with `INVALID_HASH`. */
export const MALFORMED_KEYS: readonly string[] = [
  '',
  'AF1349B9F5F9A1A6A0404DEA36DCC9499BCB25C9ADC112B7CC9A93CAE41F3262', // uppercase
  'af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f326', // 63 characters
  'af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f32622', // 65 characters
  `../${'a'.repeat(61)}`,
  '../../../../etc/passwd',
  `ab/cd/${'a'.repeat(58)}`,
  'g'.repeat(64),
  ` ${'a'.repeat(63)}`,
];

/**
 * The behaviour every `BlobStorage` backend shares, run against a real
 * backend: call it from a backend's test file.
 *
 * @example
 * ```ts
 * describeBlobStorageContract('LocalFsBlobStorage', { makeStorage, makeUnreachable });
 * ```
 */
export function describeBlobStorageContract(name: string, setup: BlobStorageContractSetup): void {
  describe(`${name} (BlobStorage contract)`, () => {
    let storage: BlobStorage;
    let unreachable: BlobStorage;

    beforeAll(async () => {
      storage = await setup.makeStorage();
      unreachable = await setup.makeUnreachable();
    });

    it('is the blobs subsystem and contributes no check unless the server wires one', () => {
      expect(storage.subsystem()).toBe('blobs');
      expect(storage.consistencyChecks()).toEqual([]);
      expect(typeof storage.backend).toBe('string');
    });

    it('round-trips bytes, with and without an announced size', async () => {
      const a = randomHash();
      const b = randomHash();
      const bytesA = randomBytes(100_003);
      const bytesB = randomBytes(17);
      await storage.put(a, bytesA, bytesA.length);
      await storage.put(b, bytesB);
      expect((await readAll(await storage.get(a))).equals(bytesA)).toBe(true);
      expect((await readAll(await storage.get(b))).equals(bytesB)).toBe(true);
      expect((await storage.head(a))?.size).toBe(bytesA.length);
      const head = await storage.head(b);
      expect(head).toMatchObject({ hash: b, size: 17 });
      expect(head?.modifiedAt).toBeInstanceOf(Date);
    });

    it('stores an empty blob', async () => {
      const hash = randomHash();
      await storage.put(hash, new Uint8Array(), 0);
      expect(await storage.head(hash)).toMatchObject({ size: 0 });
      expect((await readAll(await storage.get(hash))).length).toBe(0);
    });

    it('accepts a stream or an async iterable, with and without a size', async () => {
      const bytes = randomBytes(3 * 1024 * 1024 + 17);
      const withSize = randomHash();
      const withoutSize = randomHash();
      const iterable = randomHash();
      await storage.put(withSize, chunked(bytes, [65_536, 1, 300_000]), bytes.length);
      await storage.put(withoutSize, chunked(bytes, [1_000_000]));
      await storage.put(
        iterable,
        (async function* () {
          yield bytes.subarray(0, 10);
          yield bytes.subarray(10);
        })(),
        bytes.length,
      );
      for (const hash of [withSize, withoutSize, iterable]) {
        expect((await readAll(await storage.get(hash))).equals(bytes), hash).toBe(true);
        expect((await storage.head(hash))?.size).toBe(bytes.length);
      }
    });

    it('refuses bytes whose length differs from the announced size, and stores nothing', async () => {
      const bytes = randomBytes(200_000);
      const short = randomHash();
      const long = randomHash();
      const buffer = randomHash();
      await expectStorageError(
        storage.put(short, chunked(bytes, [50_000]), bytes.length + 1),
        'SIZE_MISMATCH',
      );
      await expectStorageError(
        storage.put(long, chunked(bytes, [50_000]), bytes.length - 1),
        'SIZE_MISMATCH',
      );
      await expectStorageError(storage.put(buffer, bytes, 5), 'SIZE_MISMATCH');
      expect(await storage.exists(buffer)).toBe(false);
      if (!setup.keepsAbortedUploads) {
        expect(await storage.exists(short)).toBe(false);
        expect(await storage.exists(long)).toBe(false);
      }
    });

    it('answers exists/head/delete, and deleting an absent blob is fine', async () => {
      const hash = randomHash();
      expect(await storage.exists(hash)).toBe(false);
      expect(await storage.head(hash)).toBeNull();
      expect(await storage.delete(hash)).toBe(false);
      await storage.put(hash, Buffer.from('hello'));
      expect(await storage.exists(hash)).toBe(true);
      expect(await storage.delete(hash)).toBe(true);
      expect(await storage.exists(hash)).toBe(false);
      expect(await storage.head(hash)).toBeNull();
      expect(await storage.delete(hash)).toBe(false);
      await expectStorageError(storage.get(hash), 'NOT_FOUND');
    });

    it('rejects get of an absent blob with NOT_FOUND', async () => {
      await expectStorageError(storage.get(randomHash()), 'NOT_FOUND');
    });

    it('refuses malformed keys with INVALID_HASH before any file or network call', async () => {
      const valid = randomHash();
      // The unreachable storage fails any real I/O with BACKEND_ERROR…
      await expectStorageError(unreachable.put(valid, Buffer.from('x')), 'BACKEND_ERROR');
      await expectStorageError(
        unreachable.head(valid).then((entry) => {
          if (entry === null) throw new Error('head answered without I/O');
        }),
        'BACKEND_ERROR',
      );
      // …so INVALID_HASH from it proves the key was checked first.
      for (const target of [unreachable, storage]) {
        for (const key of MALFORMED_KEYS) {
          const error = await expectStorageError(target.put(key, Buffer.from('x')), 'INVALID_HASH');
          expect(error.message).toContain('64 lowercase hex characters');
          await expectStorageError(target.get(key), 'INVALID_HASH');
          await expectStorageError(target.head(key), 'INVALID_HASH');
          await expectStorageError(target.exists(key), 'INVALID_HASH');
          await expectStorageError(target.delete(key), 'INVALID_HASH');
        }
        await expectStorageError(target.list({ startAfter: '../x', limit: 10 }), 'INVALID_HASH');
        await expectStorageError(target.list({ startAfter: 'AB', limit: 10 }), 'INVALID_HASH');
        await expectStorageError(target.list({ limit: 0 }), 'INVALID_ARGUMENT');
        await expectStorageError(target.list({ limit: 1.5 }), 'INVALID_ARGUMENT');
        await expectStorageError(target.put(valid, Buffer.from('x'), -1), 'INVALID_ARGUMENT');
      }
    });

    it('reports health', async () => {
      expect(await storage.health()).toEqual({ ok: true, backend: storage.backend });
      const bad = await unreachable.health();
      expect(bad.ok).toBe(false);
      expect(bad.backend).toBe(unreachable.backend);
      expect(bad.message).toEqual(expect.any(String));
    });

    describe('list', () => {
      const COUNT = setup.listingCount ?? 2_500;
      let listed: BlobStorage;
      let hashes: string[];
      const sizeOf = new Map<string, number>();

      beforeAll(async () => {
        listed = await setup.makeStorage();
        hashes = Array.from({ length: COUNT }, randomHash);
        // a few keys that share shard prefixes with their neighbours
        hashes[0] = `0000${hashes[0]!.slice(4)}`;
        hashes[1] = `0000${hashes[1]!.slice(4)}`;
        hashes[2] = `ffff${hashes[2]!.slice(4)}`;
        for (const [i, hash] of hashes.entries()) sizeOf.set(hash, i % 7);
        await inParallel(hashes, 16, (hash) => listed.put(hash, randomBytes(sizeOf.get(hash)!)));
        hashes.sort();
      }, 180_000);

      it('lists every blob in ascending hash order with its size', async () => {
        const all = await listed.list({ limit: 10_000 });
        expect(all.map((e) => e.hash)).toEqual(hashes);
        for (const entry of all) expect(entry.size).toBe(sizeOf.get(entry.hash));
        expect(all[0]?.modifiedAt).toBeInstanceOf(Date);
        expect(await listed.list({ limit: 10_000, startAfter: null })).toHaveLength(COUNT);
      });

      for (const limit of [333, 1000, 1001, 2499, 2500, 4096]) {
        it(`pages with startAfter = last hash, limit ${limit}`, async () => {
          const seen: string[] = [];
          let startAfter: string | null = null;
          for (;;) {
            const page = await listed.list({ startAfter, limit });
            expect(page.length).toBeLessThanOrEqual(limit);
            seen.push(...page.map((e) => e.hash));
            if (page.length < limit) break;
            startAfter = page[page.length - 1]!.hash;
          }
          expect(seen).toEqual(hashes);
        });
      }

      it('pages with small limits from anywhere', async () => {
        for (const limit of [1, 7]) {
          let startAfter: string | null = hashes[100]!;
          for (let page = 0; page < 20; page++) {
            const entries = await listed.list({ startAfter, limit });
            const at = hashes.indexOf(startAfter!) + 1;
            expect(entries.map((e) => e.hash)).toEqual(hashes.slice(at, at + limit));
            startAfter = entries[entries.length - 1]!.hash;
          }
        }
      });

      it('starts strictly after a key that is absent or a shorter prefix', async () => {
        for (let i = 0; i < 5; i++) {
          const absent = randomHash();
          const page = await listed.list({ startAfter: absent, limit: 3 });
          expect(page.map((e) => e.hash)).toEqual(hashes.filter((h) => h > absent).slice(0, 3));
        }
        const middle = hashes[Math.floor(COUNT / 2)]!;
        for (const prefix of [middle.slice(0, 2), middle.slice(0, 5), '0']) {
          const page = await listed.list({ startAfter: prefix, limit: 5 });
          expect(page.map((e) => e.hash)).toEqual(hashes.filter((h) => h > prefix).slice(0, 5));
        }
        expect(await listed.list({ startAfter: hashes[COUNT - 1]!, limit: 10 })).toEqual([]);
        expect(await listed.list({ startAfter: 'f'.repeat(64), limit: 10 })).toEqual([]);
      });

      it('no longer lists a deleted blob', async () => {
        const at = Math.floor(COUNT / 5);
        const gone = hashes[at]!;
        await listed.delete(gone);
        const page = await listed.list({ startAfter: hashes[at - 2]!, limit: 2 });
        expect(page.map((e) => e.hash)).toEqual([hashes[at - 1], hashes[at + 1]]);
        await listed.put(gone, randomBytes(sizeOf.get(gone)!));
      });
    });

    afterAll(() => {
      const closable = [storage, unreachable] as Array<BlobStorage & { close?: () => void }>;
      for (const s of closable) s?.close?.();
    });
  });
}
