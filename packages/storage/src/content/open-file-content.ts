import { Readable } from 'node:stream';
import type { BlobStorage } from '@oxicloud/tenants';
import { isBlobHash } from '../blob/blob-hash.js';
import { StorageError, toStorageError } from '../storage-error.js';
import type { FileContent } from './file-content.js';

/** Options of {@link openFileContent}. */
export interface OpenFileContentOptions {
  /** Aborting destroys the stream (and the blob stream being read) with the signal's reason. */
  readonly signal?: AbortSignal;
}

/** A blob stream as `BlobStorage.get` returns it. */
type BlobStream = NodeJS.ReadableStream & AsyncIterable<Uint8Array>;

/** One blob object to read, in file order. */
interface ContentObject {
  readonly hash: string;
  readonly size: number;
  /** Names the object in error messages: which chunk of which file, or the legacy blob. */
  readonly where: string;
}

function describeSize(size: unknown): string {
  return typeof size === 'number' ? String(size) : `a value of type ${size === null ? 'null' : typeof size}`;
}

/** The objects of `content` in order, validated before any blob call. */
function objectsOf(content: FileContent): ContentObject[] {
  if (content.kind === 'legacy') {
    const where = `legacy blob ${String(content.hash)}`;
    if (!isBlobHash(content.hash)) {
      throw new StorageError('INVALID_HASH', `${where}: the hash must be 64 lowercase hex characters`);
    }
    if (!Number.isSafeInteger(content.size) || content.size < 0) {
      throw new StorageError(
        'INVALID_ARGUMENT',
        `${where}: size ${describeSize(content.size)} must be a non-negative integer number of bytes`,
      );
    }
    return [{ hash: content.hash, size: content.size, where }];
  }
  const count = content.chunks.length;
  let sum = 0;
  const objects = content.chunks.map((chunk, index): ContentObject => {
    const where = `file content ${content.fileHash}: chunk index ${index} of ${count} (${String(chunk.hash)})`;
    if (!isBlobHash(chunk.hash)) {
      throw new StorageError('INVALID_HASH', `${where}: a chunk hash must be 64 lowercase hex characters`);
    }
    if (!Number.isSafeInteger(chunk.size) || chunk.size < 0) {
      throw new StorageError(
        'INVALID_ARGUMENT',
        `${where}: size ${describeSize(chunk.size)} must be a non-negative integer number of bytes`,
      );
    }
    sum += chunk.size;
    return { hash: chunk.hash, size: chunk.size, where };
  });
  if (sum !== content.totalSize) {
    throw new StorageError(
      'INVALID_ARGUMENT',
      `file content ${content.fileHash}: total size ${describeSize(content.totalSize)} differs from the sum ` +
        `of its ${count} chunk sizes (${sum}); see manifestShapeProblems`,
    );
  }
  return objects;
}

/** A failure reading `object`, with where it happened; a `StorageError` keeps its code. */
function readError(object: ContentObject, blobs: BlobStorage, error: unknown): StorageError {
  if (error instanceof StorageError && error.code === 'NOT_FOUND') {
    return new StorageError('NOT_FOUND', `${object.where} is missing from the ${blobs.backend} blob store`, {
      cause: error,
    });
  }
  if (error instanceof StorageError) {
    return new StorageError(error.code, `${object.where}: ${error.message}`, { cause: error });
  }
  return toStorageError(error, `${object.where} could not be read from the ${blobs.backend} blob store`);
}

function sizeError(object: ContentObject, read: number): StorageError {
  const got = read > object.size ? `more than ${object.size}` : String(read);
  return new StorageError(
    'SIZE_MISMATCH',
    `${object.where}: the blob store holds ${got} bytes but ${object.size} are declared`,
  );
}

async function openObject(object: ContentObject, blobs: BlobStorage): Promise<BlobStream> {
  try {
    return await blobs.get(object.hash);
  } catch (error) {
    throw readError(object, blobs, error);
  }
}

function destroy(stream: BlobStream | undefined): void {
  (stream as { destroy?: () => void } | undefined)?.destroy?.();
}

/**
 * The whole plaintext of a file as one Node byte stream: the chunks of a
 * manifest in order (a repeated hash is read again each time), or the
 * legacy blob. The empty manifest gives an empty stream.
 *
 * - Reads through the `BlobStorage` port only, one blob at a time, and only
 *   as fast as the consumer reads: the next chunk is opened when the
 *   previous one has been consumed, so at most the stream buffers and one
 *   chunk's read-ahead are held in memory, never the file.
 * - Every byte count is checked: a chunk (or the legacy blob) longer or
 *   shorter than its declared size fails the stream with `SIZE_MISMATCH`
 *   (bytes before it may already have been delivered).
 * - Errors are `StorageError`s whose message names the chunk's 0-based
 *   index, the chunk count and the hash: `NOT_FOUND` for a missing chunk,
 *   the backend's code (usually `BACKEND_ERROR`, with the original as
 *   `cause`) for a read that fails part-way.
 *
 * @throws {StorageError} before any blob call: `INVALID_HASH` for a
 *   malformed hash, `INVALID_ARGUMENT` for a negative or fractional size or
 *   a manifest whose chunk sizes do not add up to `totalSize`. `NOT_FOUND`
 *   when the first object is missing (as `BlobStorage.get` does); a later
 *   missing chunk fails the stream instead.
 *
 * @example
 * ```ts
 * import { openFileContent } from '@oxicloud/storage';
 * const stream = await openFileContent(
 *   { kind: 'manifest', fileHash, chunks: [{ hash: a, size: 262_144 }, { hash: b, size: 17 }], totalSize: 262_161 },
 *   blobs,
 * );
 * for await (const piece of stream) process(piece); // Buffers, in file order
 * ```
 */
export async function openFileContent(
  content: FileContent,
  blobs: BlobStorage,
  options: OpenFileContentOptions = {},
): Promise<Readable> {
  const objects = objectsOf(content);
  const { signal } = options;
  signal?.throwIfAborted();
  const first = objects[0];
  let current: BlobStream | undefined = first === undefined ? undefined : await openObject(first, blobs);

  async function* pieces(): AsyncGenerator<Buffer> {
    for (const object of objects) {
      current ??= await openObject(object, blobs);
      const stream = current;
      const chunks = stream[Symbol.asyncIterator]();
      let read = 0;
      try {
        for (;;) {
          let step: IteratorResult<Uint8Array | string>;
          try {
            step = await chunks.next();
          } catch (error) {
            // Only the blob's own failures are wrapped: an error thrown into
            // the generator at `yield` (the consumer's destroy, an abort)
            // passes through as it is.
            throw readError(object, blobs, error);
          }
          if (step.done) break;
          const chunk = step.value;
          const piece =
            typeof chunk === 'string'
              ? Buffer.from(chunk, 'utf8')
              : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
          read += piece.length;
          if (read > object.size) break; // the excess is never delivered
          yield piece;
        }
      } finally {
        destroy(stream);
        current = undefined;
      }
      if (read !== object.size) throw sizeError(object, read);
    }
  }

  const readable = Readable.from(
    pieces(),
    signal === undefined ? { objectMode: false } : { objectMode: false, signal },
  );
  // Every way the stream ends (the consumer's destroy, an abort, an error,
  // the end) runs `_destroy`, which Readable.from uses to stop the generator.
  // The blob being read is released first, at once: a generator that has
  // not started (destroyed unread) would never release the first blob, and
  // one waiting on a blob read could only stop once that read settles.
  const stopGenerator = readable._destroy.bind(readable);
  readable._destroy = (error, callback) => {
    destroy(current);
    stopGenerator(error, callback);
  };
  return readable;
}
