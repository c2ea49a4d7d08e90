import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { ConsistencyCheck } from '@oxicloud/consistency';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StorageError } from '../storage-error.js';
import { describeBlobStorageContract, expectStorageError, randomHash } from './blob-storage.contract.js';
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

describeBlobStorageContract('LocalFsBlobStorage', {
  makeStorage: async () => new LocalFsBlobStorage({ root: join(await tempFolder(), 'blobs') }),
  makeUnreachable: async () => {
    const file = join(await tempFolder(), 'not-a-folder');
    await writeFile(file, 'x');
    return new LocalFsBlobStorage({ root: join(file, 'blobs') });
  },
});

describe('LocalFsBlobStorage (local disk)', () => {
  let root: string;
  let storage: LocalFsBlobStorage;

  beforeAll(async () => {
    root = join(await tempFolder(), 'blobs');
    storage = new LocalFsBlobStorage({ root });
  });

  it('shards blobs as <root>/ab/cd/<hash>', async () => {
    const hash = randomHash();
    await storage.put(hash, Buffer.from('sharded'));
    const path = join(root, hash.slice(0, 2), hash.slice(2, 4), hash);
    expect(storage.pathOf(hash)).toBe(path);
    expect((await stat(path)).size).toBe(7);
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
    const shard = join(root, hash.slice(0, 2), hash.slice(2, 4));
    const names = await readdir(shard);
    expect(names.some((name) => name.startsWith('.tmp-'))).toBe(true); // the bytes are on disk, in a temp file…
    expect(await storage.exists(hash)).toBe(false); // …and invisible
    await expectStorageError(storage.get(hash), 'NOT_FOUND');
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
    const shard = join(root, hash.slice(0, 2), hash.slice(2, 4));
    expect(await readdir(shard)).toEqual([]);
  });

  it('ignores temp files and stray names when listing', async () => {
    const own = new LocalFsBlobStorage({ root: join(await tempFolder(), 'blobs') });
    const hash = randomHash();
    await own.put(hash, Buffer.from('x'));
    const shard = join(own.root, hash.slice(0, 2), hash.slice(2, 4));
    await writeFile(join(shard, `.tmp-${randomHash()}-abc`), 'partial');
    await writeFile(join(shard, 'README'), 'not a blob');
    await mkdir(join(own.root, 'zz'), { recursive: true });
    expect((await own.list({ limit: 10 })).map((e) => e.hash)).toEqual([hash]);
  });

  it('skips every shard before startAfter without reading it', async () => {
    const own = new LocalFsBlobStorage({ root: join(await tempFolder(), 'blobs') });
    const late = `ab${randomHash().slice(2)}`;
    await own.put(late, Buffer.from('late'));
    // Unreadable shards (regular files where folders belong) before the start position:
    await writeFile(join(own.root, '00'), 'not a folder');
    await writeFile(join(own.root, 'ab', '00'), 'not a folder');
    await expectStorageError(own.list({ limit: 10 }), 'BACKEND_ERROR'); // a walk from the start reads them…
    // …a walk from later shards never touches them.
    expect((await own.list({ startAfter: 'ab01', limit: 10 })).map((e) => e.hash)).toEqual(
      late.slice(2, 4) > '01' ? [late] : [],
    );
    expect((await own.list({ startAfter: late.slice(0, 4), limit: 10 })).map((e) => e.hash)).toEqual([late]);
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

  it('reports an unwritable root as unhealthy', async () => {
    const missing = new LocalFsBlobStorage({ root: join(await tempFolder(), 'never-created') });
    const health = await missing.health();
    expect(health.ok).toBe(false);
    expect(health.message).toContain('never-created');
  });
});
