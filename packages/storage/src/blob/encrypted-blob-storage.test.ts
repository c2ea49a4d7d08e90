import {
  createCipheriv,
  createDecipheriv,
  createSecretKey,
  generateKeyPairSync,
  randomBytes,
} from 'node:crypto';
import { mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blake3Hex } from '../hashing/blake3.js';
import { Blake3WorkerPool } from '../hashing/blake3-worker-pool.js';
import { createBlobHasher, StreamingBlobHasher } from '../hashing/streaming-blob-hasher.js';
import type { StorageError } from '../storage-error.js';
import { localBlobPath } from './blob-layout.js';
import { expectStorageError, randomHash } from './blob-storage.contract.js';
import { EncryptedBlobStorage } from './encrypted-blob-storage.js';
import { LocalFsBlobStorage } from './local-fs-blob-storage.js';

const folders: string[] = [];
afterAll(async () => {
  await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function storageRoot(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'oxicloud-encrypted-'));
  folders.push(dir);
  return join(dir, 'storage');
}

async function readAll(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}

/** Decrypts OxiCloud's object format with node:crypto alone: nonce (12) ‖ ciphertext ‖ tag (16), empty AAD. */
function decryptIndependently(key: Buffer, stored: Buffer): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, stored.subarray(0, 12));
  decipher.setAuthTag(stored.subarray(stored.length - 16));
  return Buffer.concat([decipher.update(stored.subarray(12, stored.length - 16)), decipher.final()]);
}

/** Encrypts as OxiCloud does, with node:crypto alone. */
function encryptIndependently(key: Buffer, plaintext: Buffer): Buffer {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  return Buffer.concat([nonce, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

describe('EncryptedBlobStorage (encryption at rest, OxiCloud format)', () => {
  const key = randomBytes(32);
  let plain: LocalFsBlobStorage;
  let storage: EncryptedBlobStorage;

  beforeAll(async () => {
    plain = new LocalFsBlobStorage({ root: await storageRoot() });
    storage = new EncryptedBlobStorage({ inner: plain, key: key.toString('base64') });
  });

  it('stores nonce ‖ ciphertext ‖ tag at .blobs/<aa>/<hash>.blob, plaintext + 28 bytes, that node:crypto decrypts', async () => {
    const plaintext = randomBytes(100_003);
    const hash = blake3Hex(plaintext);
    await storage.put(hash, plaintext, plaintext.length);
    const path = join(plain.root, '.blobs', hash.slice(0, 2), `${hash}.blob`);
    const stored = await readFile(path);
    expect(stored.length).toBe(plaintext.length + 28);
    expect(stored.subarray(12, 12 + 64).equals(plaintext.subarray(0, 64))).toBe(false); // not plaintext
    expect(decryptIndependently(key, stored).equals(plaintext)).toBe(true);
    // The caller sees the plaintext: its hash, its size; the stored size is there too.
    expect(await storage.head(hash)).toMatchObject({
      hash,
      size: plaintext.length,
      storedSize: stored.length,
    });
    expect(await plain.head(hash)).toMatchObject({ size: stored.length });
    const [listed] = await storage.list({ startAfter: hash.slice(0, 63), limit: 1 });
    expect(listed).toMatchObject({ hash, size: plaintext.length, storedSize: plaintext.length + 28 });
    expect((await readAll(await storage.get(hash))).equals(plaintext)).toBe(true);
  });

  it('encrypts a stream as it comes, to the same format, and an empty blob to 28 bytes', async () => {
    const plaintext = randomBytes(3 * 1024 * 1024 + 5);
    const hash = randomHash();
    await storage.put(
      hash,
      Readable.from(
        (function* () {
          for (let at = 0; at < plaintext.length; at += 70_000) yield plaintext.subarray(at, at + 70_000);
        })(),
      ),
      plaintext.length,
    );
    expect(decryptIndependently(key, await readFile(plain.pathOf(hash))).equals(plaintext)).toBe(true);
    const empty = randomHash();
    await storage.put(empty, (async function* () {})());
    expect((await stat(plain.pathOf(empty))).size).toBe(28);
    expect(decryptIndependently(key, await readFile(plain.pathOf(empty))).length).toBe(0);
    expect(await storage.head(empty)).toMatchObject({ size: 0, storedSize: 28 });
  });

  it('draws a fresh random nonce for every write', async () => {
    const plaintext = Buffer.from('same bytes, twice');
    const hash = randomHash();
    await storage.put(hash, plaintext);
    const first = await readFile(plain.pathOf(hash));
    await storage.put(hash, plaintext);
    const second = await readFile(plain.pathOf(hash));
    expect(first.subarray(0, 12).equals(second.subarray(0, 12))).toBe(false);
    expect(first.equals(second)).toBe(false);
    expect(decryptIndependently(key, second).equals(plaintext)).toBe(true);
  });

  it('reads an object OxiCloud wrote (encrypted independently with node:crypto)', async () => {
    const plaintext = randomBytes(4096);
    const hash = blake3Hex(plaintext);
    await plain.put(hash, encryptIndependently(key, plaintext));
    expect((await readAll(await storage.get(hash))).equals(plaintext)).toBe(true);
    expect((await storage.head(hash))?.size).toBe(4096);
  });

  it('refuses a wrong key with DECRYPTION_FAILED, never garbage bytes', async () => {
    const hash = randomHash();
    await storage.put(hash, randomBytes(5000));
    const other = new EncryptedBlobStorage({ inner: plain, key: randomBytes(32) });
    const error = await expectStorageError(other.get(hash), 'DECRYPTION_FAILED');
    expect(error.message).toContain(hash);
    expect(error.message).toContain('key is not the one it was written with');
    expect((error as StorageError).cause).toBeInstanceOf(Error);
    // head and list do not decrypt: they still answer with the sizes.
    expect(await other.head(hash)).toMatchObject({ size: 5000, storedSize: 5028 });
  });

  it('refuses an altered object with DECRYPTION_FAILED, wherever the change is', async () => {
    const plaintext = randomBytes(2000);
    for (const at of [0, 11, 12, 500, 2011, 2012, 2027]) {
      const hash = randomHash();
      await storage.put(hash, plaintext);
      const stored = await readFile(plain.pathOf(hash));
      stored[at] = (stored[at] ?? 0) ^ 0x01;
      await writeFile(plain.pathOf(hash), stored);
      await expectStorageError(storage.get(hash), 'DECRYPTION_FAILED');
    }
    // One byte cut off the end (the tag no longer lines up), or one appended.
    const cut = randomHash();
    await storage.put(cut, plaintext);
    await truncate(plain.pathOf(cut), 2027);
    await expectStorageError(storage.get(cut), 'DECRYPTION_FAILED');
    const grown = randomHash();
    await storage.put(grown, plaintext);
    await writeFile(
      plain.pathOf(grown),
      Buffer.concat([await readFile(plain.pathOf(grown)), Buffer.from([0])]),
    );
    await expectStorageError(storage.get(grown), 'DECRYPTION_FAILED');
  });

  it('refuses an object shorter than 28 bytes with a clear DECRYPTION_FAILED, and reports its sizes', async () => {
    for (const length of [0, 1, 27]) {
      const hash = randomHash();
      await plain.put(hash, randomBytes(length));
      const error = await expectStorageError(storage.get(hash), 'DECRYPTION_FAILED');
      expect(error.message).toContain(`is ${length} bytes, shorter than the 28 bytes of nonce and tag`);
      expect(await storage.head(hash)).toMatchObject({ size: 0, storedSize: length });
    }
    // Exactly 28 bytes that are not an encryption of the empty blob: the tag says so.
    const fake = randomHash();
    await plain.put(fake, randomBytes(28));
    await expectStorageError(storage.get(fake), 'DECRYPTION_FAILED');
  });

  it('refuses a plaintext object (written without encryption) with DECRYPTION_FAILED', async () => {
    const plaintext = randomBytes(10_000);
    const hash = blake3Hex(plaintext);
    await plain.put(hash, plaintext);
    await expectStorageError(storage.get(hash), 'DECRYPTION_FAILED');
  });

  it('checks the announced size against the plaintext, in plaintext bytes, and stores nothing', async () => {
    const hash = randomHash();
    const error = await expectStorageError(storage.put(hash, randomBytes(10), 11), 'SIZE_MISMATCH');
    expect(error.message).toContain('got 10 bytes but the caller announced 11');
    const long = await expectStorageError(
      storage.put(hash, Readable.from([randomBytes(10), randomBytes(10)]), 15),
      'SIZE_MISMATCH',
    );
    expect(long.message).toContain('got more than 15 bytes but the caller announced 15');
    const short = await expectStorageError(
      storage.put(hash, Readable.from([randomBytes(10)]), 15),
      'SIZE_MISMATCH',
    );
    expect(short.message).toContain('got 10 bytes but the caller announced 15');
    expect(await plain.exists(hash)).toBe(false);
  });

  it('is re-hashed as plaintext by the hasher createBlobHasher picks for it', async () => {
    const pool = new Blake3WorkerPool({ size: 1 });
    try {
      const hasher = createBlobHasher(storage, pool);
      expect(hasher).toBeInstanceOf(StreamingBlobHasher);
      const plaintext = randomBytes(300_000);
      const hash = blake3Hex(plaintext);
      await storage.put(hash, plaintext);
      expect(await hasher.hashStoredBlob(hash)).toMatchObject({ hash, size: 300_000 });
      // Over the same folder, the file-reading hasher would hash the ciphertext:
      expect((await createBlobHasher(plain, pool).hashStoredBlob(hash)).hash).not.toBe(hash);
    } finally {
      await pool.close();
    }
  });

  it('keeps the layout of its inner store and names itself after it', () => {
    expect(storage.backend).toBe('local');
    expect(storage.subsystem()).toBe('blobs');
    expect(storage.inner).toBe(plain);
    expect(localBlobPath(plain.root, 'a'.repeat(64))).toBe(plain.pathOf('a'.repeat(64)));
  });

  it('validates its key with INVALID_CONFIG, never echoing it', async () => {
    const root = await storageRoot();
    const inner = new LocalFsBlobStorage({ root });
    const secret = randomBytes(31).toString('base64');
    const cases: Array<[unknown, string]> = [
      [randomBytes(31), 'exactly 32 bytes, got 31'],
      [secret, 'decodes to 31 bytes'],
      [createSecretKey(randomBytes(16)), 'secret KeyObject of 32 bytes'],
      [generateKeyPairSync('ed25519').privateKey, 'got a private key'],
      [42, 'KeyObject, 32 bytes, or their standard base64'],
    ];
    for (const [bad, mention] of cases) {
      let error: unknown;
      try {
        new EncryptedBlobStorage({ inner, key: bad as Uint8Array });
      } catch (e) {
        error = e;
      }
      expect(error).toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringContaining(mention) });
      expect((error as Error).message).not.toContain(secret);
    }
    expect(() => new EncryptedBlobStorage({ inner: {} as LocalFsBlobStorage, key })).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringContaining('inner') }),
    );
    expect(new EncryptedBlobStorage({ inner, key: createSecretKey(key) }).backend).toBe('local');
    // The key does not show in what the store serialises to.
    expect(JSON.stringify(new EncryptedBlobStorage({ inner, key }))).not.toContain(key.toString('base64'));
  });
});
