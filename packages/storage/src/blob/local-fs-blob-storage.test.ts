import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Readable } from 'node:stream';
import type { ConsistencyCheck } from '@oxicloud/consistency';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StorageError } from '../storage-error.js';
import { localBlobDir } from './blob-layout.js';
import { describeBlobStorageContract, expectStorageError, randomHash } from './blob-storage.contract.js';
import { EncryptedBlobStorage } from './encrypted-blob-storage.js';
import { LocalFsBlobStorage } from './local-fs-blob-storage.js';

const folders: string[] = [];
async function tempFolder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'oxicloud-blobs-'));
  folders.push(dir);
  return dir;
}

afterAll(async () => {
  await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function readAll(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}

/** Every file and folder under `root`, relative, sorted (folders end in `/`). */
async function tree(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      out.push(relative(root, path) + (entry.isDirectory() ? '/' : ''));
      if (entry.isDirectory()) await walk(path);
    }
  };
  await walk(root);
  return out.sort();
}

async function unreachableRoot(): Promise<string> {
  const file = join(await tempFolder(), 'not-a-folder');
  await writeFile(file, 'x');
  return join(file, 'storage');
}

describeBlobStorageContract('LocalFsBlobStorage', {
  makeStorage: async () => new LocalFsBlobStorage({ root: join(await tempFolder(), 'storage') }),
  makeUnreachable: async () => new LocalFsBlobStorage({ root: await unreachableRoot() }),
});

describeBlobStorageContract('EncryptedBlobStorage over LocalFsBlobStorage', {
  makeStorage: async () =>
    new EncryptedBlobStorage({
      inner: new LocalFsBlobStorage({ root: join(await tempFolder(), 'storage') }),
      key: randomBytes(32),
    }),
  makeUnreachable: async () =>
    new EncryptedBlobStorage({
      inner: new LocalFsBlobStorage({ root: await unreachableRoot() }),
      key: randomBytes(32),
    }),
});

describe('LocalFsBlobStorage (local disk)', () => {
  let root: string;
  let storage: LocalFsBlobStorage;

  beforeAll(async () => {
    root = join(await tempFolder(), 'storage');
    storage = new LocalFsBlobStorage({ root });
  });

  it("stores a blob at exactly OxiCloud's <root>/.blobs/<aa>/<hash>.blob, and nothing else", async () => {
    const own = new LocalFsBlobStorage({ root: join(await tempFolder(), 'storage') });
    const hash = 'af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262';
    await own.put(hash, Buffer.from('oxicloud layout'));
    expect(await tree(own.root)).toEqual(['.blobs/', '.blobs/af/', `.blobs/af/${hash}.blob`]);
    expect(own.pathOf(hash)).toBe(join(own.root, '.blobs', 'af', `${hash}.blob`));
    expect(own.blobsDir).toBe(join(own.root, '.blobs'));
    expect((await stat(own.pathOf(hash))).size).toBe(15);
  });

  it('never shows a partial blob: not listed, not readable, until the write completes', async () => {
    const hash = randomHash();
    const bytes = randomBytes(2 * 1024 * 1024);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let halfWritten!: () => void;
    const reachedHalf = new Promise<void>((resolve) => {
      halfWritten = resolve;
    });
    const writing = storage.put(
      hash,
      (async function* () {
        yield bytes.subarray(0, 1024 * 1024);
        halfWritten();
        await gate;
        yield bytes.subarray(1024 * 1024);
      })(),
      bytes.length,
    );
    await reachedHalf;
    await new Promise((resolve) => setTimeout(resolve, 20));
    const shard = localBlobDir(root, hash);
    const names = await readdir(shard);
    expect(names.some((name) => name.startsWith('.tmp-'))).toBe(true); // the bytes are on disk, in a temp file…
    expect(await storage.exists(hash)).toBe(false); // …and invisible
    await expectStorageError(storage.get(hash), 'NOT_FOUND');
    expect(names.some((name) => name.startsWith(hash))).toBe(false); // no file under the final name yet
    expect(
      (await storage.list({ startAfter: hash.slice(0, 4), limit: 100 })).map((e) => e.hash),
    ).not.toContain(hash);
    release();
    await writing;
    expect((await readAll(await storage.get(hash))).equals(bytes)).toBe(true);
    expect((await readdir(shard)).some((name) => name.startsWith('.tmp-'))).toBe(false);
  });

  it('a concurrent reader sees either no blob or the whole blob', async () => {
    const hash = randomHash();
    const bytes = randomBytes(8 * 1024 * 1024);
    let done = false;
    const outcomes = { absent: 0, whole: 0 };
    const reader = (async () => {
      while (!done) {
        try {
          const read = await readAll(await storage.get(hash));
          expect(read.length).toBe(bytes.length);
          expect(read.equals(bytes)).toBe(true);
          outcomes.whole++;
        } catch (error) {
          if (!(error instanceof StorageError && error.code === 'NOT_FOUND')) throw error;
          outcomes.absent++;
        }
      }
    })();
    for (let round = 0; round < 3; round++) {
      await storage.delete(hash);
      await storage.put(
        hash,
        Readable.from(
          (async function* () {
            for (let offset = 0; offset < bytes.length; offset += 256 * 1024) {
              await new Promise((resolve) => setImmediate(resolve));
              yield bytes.subarray(offset, offset + 256 * 1024);
            }
          })(),
        ),
        bytes.length,
      );
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    done = true;
    await reader;
    expect(outcomes.absent).toBeGreaterThan(0);
    expect(outcomes.whole).toBeGreaterThan(0);
  });

  it('leaves neither a blob nor a temp file when the source stream fails', async () => {
    const hash = randomHash();
    const failing = (async function* () {
      yield Buffer.from('partial');
      throw new Error('upload connection reset');
    })();
    const error = await expectStorageError(storage.put(hash, failing), 'BACKEND_ERROR');
    expect((error as StorageError).cause).toBeInstanceOf(Error);
    expect(await storage.exists(hash)).toBe(false);
    expect((await readdir(localBlobDir(root, hash))).filter((name) => name.includes(hash))).toEqual([]);
  });

  it("lists only <aa>/<hash>.blob under .blobs: nothing else in OxiCloud's storage root, no stray, no temp file", async () => {
    const own = new LocalFsBlobStorage({ root: join(await tempFolder(), 'storage') });
    const hashes = [randomHash(), randomHash(), `ab${randomHash().slice(2)}`].sort();
    for (const hash of hashes) await own.put(hash, randomBytes(5));
    const [first] = hashes as [string];
    const other = (first.startsWith('ee') ? 'dd' : 'ee') + randomHash().slice(2); // never in first's folder
    const write = async (path: string, bytes: string | Buffer = 'not a blob') => {
      await mkdir(join(own.root, path, '..'), { recursive: true });
      await writeFile(join(own.root, path), bytes);
    };
    // What else OxiCloud keeps in its storage root, all named like blobs where it can be.
    await write(`.thumbnails/icon/${other}.webp`);
    await write(`.thumbnails/preview/${first}.jpg`);
    await write('.uploads/3f0c/chunk_0');
    await write(`.blob-cache/${other.slice(0, 2)}/${other}.blob`);
    await write('.transcoded/webp/0b0e.webp');
    await write('.search-index/meta.json');
    await write(`.dedup_temp/${other}`);
    await write('.plugins/x/plugin.wasm');
    await write('.jwt_secret', randomBytes(32));
    await write(`${other.slice(0, 2)}/${other.slice(2, 4)}/${other}`); // this engine's old two-level layout
    await write(`${other}.blob`);
    // Strays under .blobs: not a prefix folder, not a hash, the wrong folder, no suffix, a temp file, a folder.
    await write('.blobs/zz/notahash.blob');
    await write(`.blobs/zz/${other}.blob`);
    await write('.blobs/ab/notahash.blob');
    await write('.blobs/README');
    await write(`.blobs/${first.slice(0, 2)}/${other}.blob`);
    await write(`.blobs/${first.slice(0, 2)}/${first.slice(0, 2)}${other.slice(2)}`);
    await write(`.blobs/${first.slice(0, 2)}/${first.slice(0, 2)}${other.slice(2)}.blob.tmp`);
    await write(`.blobs/${first.slice(0, 2)}/.tmp-${first}-0d6f2a4c`, 'partial');
    await write(`.blobs/${first.slice(0, 2)}/${first.slice(0, 2)}${other.slice(2)}.BLOB`);
    await mkdir(join(own.root, `.blobs/${first.slice(0, 2)}/${first.slice(0, 2)}${other.slice(3)}0.blob`));
    await mkdir(join(own.root, '.blobs/ffff'));
    expect((await own.list({ limit: 100 })).map((e) => e.hash)).toEqual(hashes);
    // Resumable from any key, the strays never in the way.
    expect((await own.list({ startAfter: first, limit: 100 })).map((e) => e.hash)).toEqual(hashes.slice(1));
    expect((await own.list({ startAfter: hashes[1]!, limit: 1 })).map((e) => e.hash)).toEqual([hashes[2]]);
    const paged: string[] = [];
    for (let after: string | null = null; ; ) {
      const page = await own.list({ startAfter: after, limit: 1 });
      if (page.length === 0) break;
      paged.push(page[0]!.hash);
      after = page[0]!.hash;
    }
    expect(paged).toEqual(hashes);
    expect((await own.list({ limit: 100 })).map((e) => e.size)).toEqual([5, 5, 5]);
  });

  it('lists nothing when the storage root has no .blobs folder yet, and fails when the root itself is missing', async () => {
    const fresh = new LocalFsBlobStorage({ root: join(await tempFolder(), 'storage') });
    await mkdir(join(fresh.root, '.thumbnails'), { recursive: true });
    await writeFile(join(fresh.root, '.jwt_secret'), 'secret');
    expect(await fresh.list({ limit: 10 })).toEqual([]);
    await mkdir(fresh.blobsDir);
    expect(await fresh.list({ limit: 10 })).toEqual([]);
    // A wrong path is not an empty store (every row would look like lost bytes).
    const missing = new LocalFsBlobStorage({ root: join(await tempFolder(), 'never-created') });
    const error = await expectStorageError(missing.list({ limit: 10 }), 'BACKEND_ERROR');
    expect(error.message).toContain('never-created does not exist');
    expect(existsSync(missing.root)).toBe(false);
  });

  it('skips every prefix folder before startAfter without reading it', async () => {
    const own = new LocalFsBlobStorage({ root: join(await tempFolder(), 'storage') });
    const late = `ab${randomHash().slice(2)}`;
    await own.put(late, Buffer.from('late'));
    // An unreadable prefix folder (a regular file where the folder belongs) before the start position:
    await writeFile(join(own.blobsDir, '00'), 'not a folder');
    await expectStorageError(own.list({ limit: 10 }), 'BACKEND_ERROR'); // a walk from the start reads it…
    // …a walk from a later folder never touches it.
    expect((await own.list({ startAfter: '01', limit: 10 })).map((e) => e.hash)).toEqual([late]);
    expect((await own.list({ startAfter: late.slice(0, 2), limit: 10 })).map((e) => e.hash)).toEqual([late]);
    expect((await own.list({ startAfter: late, limit: 10 })).map((e) => e.hash)).toEqual([]);
  });

  it('pages through many blobs per prefix folder and many nearly empty folders alike', async () => {
    const own = new LocalFsBlobStorage({ root: join(await tempFolder(), 'storage') });
    const dense = Array.from({ length: 300 }, () => `7f${randomHash().slice(2)}`);
    const sparse = Array.from({ length: 200 }, randomHash);
    const all = [...new Set([...dense, ...sparse])].sort();
    for (let i = 0; i < all.length; i += 50) {
      await Promise.all(all.slice(i, i + 50).map((hash) => own.put(hash, Buffer.from('x'))));
    }
    for (const limit of [1, 49, 120, 1000]) {
      const seen: string[] = [];
      let after: string | null = null;
      for (;;) {
        const page = await own.list({ startAfter: after, limit });
        seen.push(...page.map((e) => e.hash));
        if (page.length < limit) break;
        after = page[page.length - 1]!.hash;
      }
      expect(seen, `limit ${limit}`).toEqual(all);
    }
  });

  it('returns the consistency checks its option builds from the storage', () => {
    const check = { name: 'storage_consistency', subsystem: 'blobs' } as unknown as ConsistencyCheck;
    let builtFrom: LocalFsBlobStorage | undefined;
    const wired = new LocalFsBlobStorage({
      root,
      consistencyChecks: (self) => {
        builtFrom = self;
        return [check];
      },
    });
    expect(wired.consistencyChecks()).toEqual([check]);
    expect(builtFrom).toBe(wired);
  });

  it('refuses an empty root with INVALID_CONFIG', () => {
    expect(() => new LocalFsBlobStorage({ root: '' })).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringContaining('root') }),
    );
  });

  it('reports a missing or unusable storage root as unhealthy, without creating it', async () => {
    const missingRoot = join(await tempFolder(), 'never-created');
    const health = await new LocalFsBlobStorage({ root: missingRoot }).health();
    expect(health.ok).toBe(false);
    expect(health.message).toContain('never-created');
    expect(existsSync(missingRoot)).toBe(false);
    const file = join(await tempFolder(), 'a-file');
    await writeFile(file, 'x');
    expect(await new LocalFsBlobStorage({ root: file }).health()).toMatchObject({
      ok: false,
      message: expect.stringContaining('is not a folder'),
    });
    const blobsIsFile = join(await tempFolder(), 'storage');
    await mkdir(blobsIsFile);
    await writeFile(join(blobsIsFile, '.blobs'), 'x');
    expect((await new LocalFsBlobStorage({ root: blobsIsFile }).health()).ok).toBe(false);
  });

  it('health writes nothing into the storage root (OxiCloud owns it)', async () => {
    const own = new LocalFsBlobStorage({ root: join(await tempFolder(), 'storage') });
    await mkdir(join(own.root, '.thumbnails', 'icon'), { recursive: true });
    await writeFile(join(own.root, '.jwt_secret'), 'secret');
    const empty = await tree(own.root);
    expect(await own.health()).toEqual({ ok: true, backend: 'local' }); // no .blobs yet is healthy
    expect(await tree(own.root)).toEqual(empty);
    await own.put(randomHash(), Buffer.from('x'));
    const before = await tree(own.root);
    const mtimes = async () =>
      Promise.all([own.root, own.blobsDir].map(async (d) => (await stat(d)).mtimeMs));
    const mtimesBefore = await mtimes();
    for (let i = 0; i < 3; i++) expect((await own.health()).ok).toBe(true);
    expect(await tree(own.root)).toEqual(before);
    expect(await mtimes()).toEqual(mtimesBefore); // not even a file created and removed again
  });
});
