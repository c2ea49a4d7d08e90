import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ConsistencyCheck } from '@oxicloud/consistency';
import type { BlobEntry, BlobStorage, BlobStorageHealth } from '@oxicloud/tenants';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalFsBlobStorage } from '../blob/local-fs-blob-storage.js';
import { BLAKE3_EMPTY, blake3Hex } from '../hashing/blake3.js';
import { isStorageError, StorageError, type StorageErrorCode } from '../storage-error.js';
import { CDC_CHUNK_SIZES, type FileContent, type ManifestFileContent } from './file-content.js';
import { openFileContent } from './open-file-content.js';

const MiB = 1024 * 1024;

/** Bytes per piece a {@link MemoryBlobStorage} stream delivers. */
const MEMORY_PIECE_BYTES = 16 * 1024;

/**
 * A tiny in-memory `BlobStorage`, only for what a real backend cannot be
 * made to do on demand: fail a blob's stream part-way. It also counts the
 * bytes its streams handed out and keeps every stream it opened, so the
 * tests can see how far ahead the reader went and what it released.
 */
class MemoryBlobStorage implements BlobStorage {
  readonly backend = 'memory';
  readonly #blobs = new Map<string, Uint8Array>();
  readonly #failures = new Map<string, { afterBytes: number; error: Error }>();
  readonly #stalls = new Map<string, number>();
  /** Bytes delivered by every stream so far. */
  pulledBytes = 0;
  /** The streams `get` returned, in order, with the hash each reads. */
  readonly opened: Array<{ hash: string; stream: Readable }> = [];

  subsystem(): string {
    return 'blobs';
  }

  consistencyChecks(): readonly ConsistencyCheck[] {
    return [];
  }

  /** The stream of `hash` fails with `error` once it has delivered `afterBytes` bytes. */
  failAfter(hash: string, afterBytes: number, error: Error): void {
    this.#failures.set(hash, { afterBytes, error });
  }

  /** The stream of `hash` delivers `afterBytes` bytes, then nothing more, ever (a hung connection). */
  stallAfter(hash: string, afterBytes: number): void {
    this.#stalls.set(hash, afterBytes);
  }

  async put(
    hash: string,
    data: Uint8Array | AsyncIterable<Uint8Array> | NodeJS.ReadableStream,
  ): Promise<void> {
    if (!(data instanceof Uint8Array)) throw new Error('MemoryBlobStorage.put takes bytes only');
    this.#blobs.set(hash, data);
  }

  async get(hash: string): Promise<NodeJS.ReadableStream & AsyncIterable<Uint8Array>> {
    const bytes = this.#blobs.get(hash);
    if (bytes === undefined) throw new StorageError('NOT_FOUND', `blob ${hash} does not exist in memory`);
    const stall = this.#stalls.get(hash);
    if (stall !== undefined) {
      const stream = new Readable({ read() {} });
      stream.push(bytes.subarray(0, stall));
      this.pulledBytes += stall;
      this.opened.push({ hash, stream });
      return stream;
    }
    const failure = this.#failures.get(hash);
    const count = (n: number) => {
      this.pulledBytes += n;
    };
    const stream = Readable.from(
      (function* () {
        for (let offset = 0; offset < bytes.length; offset += MEMORY_PIECE_BYTES) {
          if (failure !== undefined && offset >= failure.afterBytes) throw failure.error;
          const piece = bytes.subarray(offset, Math.min(offset + MEMORY_PIECE_BYTES, bytes.length));
          count(piece.length);
          yield piece;
        }
      })(),
    );
    this.opened.push({ hash, stream });
    return stream;
  }

  async head(hash: string): Promise<BlobEntry | null> {
    const bytes = this.#blobs.get(hash);
    return bytes === undefined ? null : { hash, size: bytes.length };
  }

  async exists(hash: string): Promise<boolean> {
    return this.#blobs.has(hash);
  }

  async delete(hash: string): Promise<boolean> {
    return this.#blobs.delete(hash);
  }

  async list(options: { startAfter?: string | null; limit: number }): Promise<BlobEntry[]> {
    const after = options.startAfter ?? '';
    return [...this.#blobs.keys()]
      .filter((hash) => hash > after)
      .sort()
      .slice(0, options.limit)
      .map((hash) => ({ hash, size: this.#blobs.get(hash)?.length ?? 0 }));
  }

  async health(): Promise<BlobStorageHealth> {
    return { ok: true, backend: this.backend };
  }
}

const folders: string[] = [];
afterAll(async () => {
  await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function localStorage(): Promise<LocalFsBlobStorage> {
  const dir = await mkdtemp(join(tmpdir(), 'oxicloud-content-'));
  folders.push(dir);
  return new LocalFsBlobStorage({ root: join(dir, 'blobs') });
}

/** Stores `bytes` under their BLAKE3 (as OxiCloud names a chunk) and returns the manifest entry. */
async function putChunk(blobs: BlobStorage, bytes: Uint8Array): Promise<{ hash: string; size: number }> {
  const hash = blake3Hex(bytes);
  await blobs.put(hash, bytes, bytes.length);
  return { hash, size: bytes.length };
}

function manifestOf(
  chunks: ReadonlyArray<{ hash: string; size: number }>,
  bytes: Uint8Array,
): ManifestFileContent {
  return {
    kind: 'manifest',
    fileHash: blake3Hex(bytes),
    chunks,
    totalSize: chunks.reduce((sum, chunk) => sum + chunk.size, 0),
  };
}

/** Everything the stream delivers, and the error that ended it (if one did). */
async function drain(stream: AsyncIterable<Uint8Array>): Promise<{ bytes: Buffer; error: unknown }> {
  const parts: Buffer[] = [];
  try {
    for await (const piece of stream) parts.push(Buffer.from(piece));
    return { bytes: Buffer.concat(parts), error: undefined };
  } catch (error) {
    return { bytes: Buffer.concat(parts), error };
  }
}

async function readAll(content: FileContent, blobs: BlobStorage): Promise<Buffer> {
  const { bytes, error } = await drain(await openFileContent(content, blobs));
  if (error !== undefined) throw error;
  return bytes;
}

function expectCode(error: unknown, code: StorageErrorCode): StorageError {
  expect(isStorageError(error) ? error.code : error).toBe(code);
  return error as StorageError;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

describe('openFileContent on a LocalFsBlobStorage', () => {
  let blobs: LocalFsBlobStorage;
  let a: Buffer;
  let b: Buffer;
  let c: Buffer;
  let full: Buffer;
  let multi: ManifestFileContent;

  beforeAll(async () => {
    blobs = await localStorage();
    a = randomBytes(300_000);
    b = randomBytes(CDC_CHUNK_SIZES.min);
    c = randomBytes(CDC_CHUNK_SIZES.max);
    const tail = randomBytes(17);
    // a repeats: a manifest lists one entry per occurrence.
    const parts = [a, b, a, c, a, tail];
    const chunks = [];
    for (const part of parts) chunks.push(await putChunk(blobs, part));
    full = Buffer.concat(parts);
    multi = manifestOf(chunks, full);
  });

  it('reads a multi-chunk manifest as its chunks in order, a repeated chunk every time it is listed', async () => {
    expect(multi.chunks.map((chunk) => chunk.hash).filter((hash) => hash === blake3Hex(a))).toHaveLength(3);
    const bytes = await readAll(multi, blobs);
    expect(bytes.length).toBe(multi.totalSize);
    expect(bytes.equals(full)).toBe(true);
  });

  it('reads a one-chunk manifest whose file hash is its chunk hash', async () => {
    const only = randomBytes(40_000);
    const chunk = await putChunk(blobs, only);
    const content: FileContent = {
      kind: 'manifest',
      fileHash: chunk.hash,
      chunks: [chunk],
      totalSize: 40_000,
    };
    expect((await readAll(content, blobs)).equals(only)).toBe(true);
  });

  it('reads a legacy whole-file blob', async () => {
    const whole = randomBytes(2 * MiB + 5);
    const { hash, size } = await putChunk(blobs, whole);
    expect((await readAll({ kind: 'legacy', hash, size }, blobs)).equals(whole)).toBe(true);
  });

  it('reads the empty manifest as an empty stream, without a blob call', async () => {
    const empty = await localStorage(); // nothing stored at all
    const content: FileContent = { kind: 'manifest', fileHash: BLAKE3_EMPTY, chunks: [], totalSize: 0 };
    expect((await readAll(content, empty)).length).toBe(0);
  });

  it('rejects with NOT_FOUND naming the chunk when the first chunk is missing', async () => {
    const absent = blake3Hex(Buffer.from('never stored'));
    const content = manifestOf([{ hash: absent, size: 12 }, ...multi.chunks], Buffer.alloc(0));
    const error = expectCode(await rejection(openFileContent(content, blobs)), 'NOT_FOUND');
    expect(error.message).toContain(`chunk index 0 of ${multi.chunks.length + 1} (${absent})`);
    expect(error.message).toContain('missing from the local blob store');
    expect(isStorageError(error.cause, 'NOT_FOUND')).toBe(true);
  });

  it('fails the stream with NOT_FOUND naming the chunk and its index when a later chunk is missing', async () => {
    const absent = blake3Hex(Buffer.from('also never stored'));
    const chunks = [multi.chunks[0]!, multi.chunks[1]!, { hash: absent, size: 70_000 }, multi.chunks[3]!];
    const content = manifestOf(chunks, Buffer.alloc(0));
    const { bytes, error } = await drain(await openFileContent(content, blobs));
    const storageError = expectCode(error, 'NOT_FOUND');
    expect(storageError.message).toContain(
      `file content ${content.fileHash}: chunk index 2 of 4 (${absent})`,
    );
    expect(bytes.equals(Buffer.concat([a, b]))).toBe(true); // what came before the gap
  });

  it('rejects a missing legacy blob with NOT_FOUND', async () => {
    const absent = blake3Hex(Buffer.from('no legacy blob'));
    const error = expectCode(
      await rejection(openFileContent({ kind: 'legacy', hash: absent, size: 3 }, blobs)),
      'NOT_FOUND',
    );
    expect(error.message).toContain(`legacy blob ${absent}`);
  });

  it('fails with SIZE_MISMATCH when a chunk is shorter than declared', async () => {
    const declared = { hash: blake3Hex(b), size: b.length + 1 };
    const content = manifestOf([multi.chunks[0]!, declared, multi.chunks[3]!], Buffer.alloc(0));
    const { bytes, error } = await drain(await openFileContent(content, blobs));
    const storageError = expectCode(error, 'SIZE_MISMATCH');
    expect(storageError.message).toContain(`chunk index 1 of 3 (${declared.hash})`);
    expect(storageError.message).toContain(`holds ${b.length} bytes but ${b.length + 1} are declared`);
    expect(bytes.length).toBe(a.length + b.length); // nothing of the next chunk
  });

  it('fails with SIZE_MISMATCH, delivering no excess byte, when a chunk is longer than declared', async () => {
    const declared = { hash: blake3Hex(c), size: c.length - 1 };
    const content = manifestOf([declared, multi.chunks[0]!], Buffer.alloc(0));
    const { bytes, error } = await drain(await openFileContent(content, blobs));
    const storageError = expectCode(error, 'SIZE_MISMATCH');
    expect(storageError.message).toContain(`chunk index 0 of 2 (${declared.hash})`);
    expect(storageError.message).toContain(`more than ${c.length - 1} bytes`);
    expect(bytes.length).toBeLessThanOrEqual(c.length - 1);
    expect(bytes.equals(c.subarray(0, bytes.length))).toBe(true);
  });

  it('fails with SIZE_MISMATCH when a legacy blob differs from its declared size', async () => {
    const { error } = await drain(
      await openFileContent({ kind: 'legacy', hash: blake3Hex(a), size: a.length * 2 }, blobs),
    );
    expect(expectCode(error, 'SIZE_MISMATCH').message).toContain(`legacy blob ${blake3Hex(a)}`);
  });

  it('refuses malformed content before any blob call', async () => {
    const unreachable = new LocalFsBlobStorage({ root: '/dev/null/blobs' }); // every file call would fail
    const badHash = {
      kind: 'manifest',
      fileHash: multi.fileHash,
      chunks: [{ hash: 'AB', size: 1 }],
      totalSize: 1,
    };
    const error = expectCode(
      await rejection(openFileContent(badHash as FileContent, unreachable)),
      'INVALID_HASH',
    );
    expect(error.message).toContain('chunk index 0 of 1');
    const badTotal = { ...multi, totalSize: multi.totalSize + 1 };
    const total = expectCode(await rejection(openFileContent(badTotal, unreachable)), 'INVALID_ARGUMENT');
    expect(total.message).toContain(`sum of its ${multi.chunks.length} chunk sizes (${multi.totalSize})`);
    const badSize: FileContent = { kind: 'legacy', hash: multi.fileHash, size: -1 };
    expectCode(await rejection(openFileContent(badSize, unreachable)), 'INVALID_ARGUMENT');
  });
});

describe('openFileContent streaming (in-memory backend)', () => {
  async function fourChunks(blobs: MemoryBlobStorage) {
    const parts = [0, 1, 2, 3].map(() => randomBytes(MiB));
    const chunks = [];
    for (const part of parts) chunks.push(await putChunk(blobs, part));
    return { parts, content: manifestOf(chunks, Buffer.concat(parts)) };
  }

  it('respects backpressure: never more than one chunk ahead of the consumer, one blob open at a time', async () => {
    const blobs = new MemoryBlobStorage();
    const { parts, content } = await fourChunks(blobs);
    const stream = await openFileContent(content, blobs);
    let consumed = 0;
    let maxAhead = 0;
    const received: Buffer[] = [];
    for await (const piece of stream) {
      received.push(piece as Buffer);
      consumed += (piece as Buffer).length;
      // A slow consumer: give the producer every chance to run ahead.
      await nextTurn();
      await nextTurn();
      maxAhead = Math.max(maxAhead, blobs.pulledBytes - consumed);
      const open = blobs.opened.filter((entry) => !entry.stream.destroyed && !entry.stream.readableEnded);
      expect(open.length).toBeLessThanOrEqual(1);
      // The chunk being read is the one the consumer is in (or the next, at a boundary).
      expect(blobs.opened.length).toBeLessThanOrEqual(Math.floor(consumed / MiB) + 1);
    }
    expect(Buffer.concat(received).equals(Buffer.concat(parts))).toBe(true);
    expect(maxAhead).toBeGreaterThan(0);
    expect(maxAhead).toBeLessThanOrEqual(CDC_CHUNK_SIZES.max);
    expect(blobs.opened.map((entry) => entry.hash)).toEqual(content.chunks.map((chunk) => chunk.hash));
  });

  it('reports a chunk that fails part-way with its index, hash and the cause', async () => {
    const blobs = new MemoryBlobStorage();
    const { parts, content } = await fourChunks(blobs);
    const cause = new Error('connection reset by peer');
    const failing = content.chunks[2]!.hash;
    blobs.failAfter(failing, 5 * MEMORY_PIECE_BYTES, cause);
    const { bytes, error } = await drain(await openFileContent(content, blobs));
    const storageError = expectCode(error, 'BACKEND_ERROR');
    expect(storageError.message).toContain(
      `chunk index 2 of 4 (${failing}) could not be read from the memory`,
    );
    expect(storageError.message).toContain('connection reset by peer');
    expect(storageError.cause).toBe(cause);
    const prefix = Buffer.concat([parts[0]!, parts[1]!, parts[2]!.subarray(0, 5 * MEMORY_PIECE_BYTES)]);
    expect(bytes.equals(prefix)).toBe(true);
    expect(blobs.opened).toHaveLength(3); // the last chunk is never opened
  });

  it('releases the eagerly opened first blob when the stream is destroyed unread', async () => {
    const blobs = new MemoryBlobStorage();
    const { content } = await fourChunks(blobs);
    const stream = await openFileContent(content, blobs);
    expect(blobs.opened).toHaveLength(1);
    const closed = new Promise((resolve) => stream.once('close', resolve));
    stream.destroy();
    await closed;
    expect(blobs.opened[0]?.stream.destroyed).toBe(true);
    expect(blobs.opened).toHaveLength(1);
  });

  it('closes at once when destroyed while a blob read hangs, releasing that blob', async () => {
    const blobs = new MemoryBlobStorage();
    const { content } = await fourChunks(blobs);
    blobs.stallAfter(content.chunks[1]!.hash, 1000);
    const stream = await openFileContent(content, blobs);
    let received = 0;
    const closed = new Promise<void>((resolve) => stream.once('close', resolve));
    stream.on('error', () => undefined);
    stream.on('data', (piece: Buffer) => {
      received += piece.length;
      // Everything the hung blob will ever send has arrived: the reader now waits on it.
      if (received === MiB + 1000) setTimeout(() => stream.destroy(), 20);
    });
    const timeout = new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 2000).unref());
    expect(await Promise.race([closed.then(() => 'closed' as const), timeout])).toBe('closed');
    expect(blobs.opened).toHaveLength(2);
    expect(blobs.opened[1]?.stream.destroyed).toBe(true);
  });

  it('stops reading and releases the blob when its signal aborts', async () => {
    const blobs = new MemoryBlobStorage();
    const { content } = await fourChunks(blobs);
    const controller = new AbortController();
    const stream = await openFileContent(content, blobs, { signal: controller.signal });
    let error: unknown;
    let consumed = 0;
    try {
      for await (const piece of stream) {
        consumed += (piece as Buffer).length;
        if (consumed > MiB + MEMORY_PIECE_BYTES) controller.abort();
      }
    } catch (caught) {
      error = caught;
    }
    expect((error as Error).name).toBe('AbortError');
    await nextTurn();
    expect(blobs.opened).toHaveLength(2);
    expect(blobs.opened.every((entry) => entry.stream.destroyed)).toBe(true);
    const aborted = new AbortController();
    aborted.abort();
    const early = await rejection(openFileContent(content, blobs, { signal: aborted.signal }));
    expect((early as Error).name).toBe('AbortError');
  });
});
