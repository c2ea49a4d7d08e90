import { Readable } from 'node:stream';

/** A blob's byte stream as `BlobStorage.get` returns it. */
export type BlobStream = NodeJS.ReadableStream & AsyncIterable<Uint8Array>;

/**
 * The stream as a Node byte-mode `Readable` (what the parsers take). An
 * object-mode stream (`Readable.from([buffer])`) is re-wrapped: strtok3
 * fails on object-mode chunks with "offset is out of bounds".
 */
export function toReadable(stream: BlobStream): Readable {
  return stream instanceof Readable && !stream.readableObjectMode
    ? stream
    : Readable.from(stream, { objectMode: false });
}

/**
 * Reads at most `maxBytes` from the start of the stream, then stops reading
 * (the caller destroys the stream).
 */
export async function readPrefix(stream: AsyncIterable<Uint8Array>, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const buffer = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const room = maxBytes - total;
    chunks.push(buffer.length > room ? buffer.subarray(0, room) : buffer);
    total += Math.min(buffer.length, room);
    if (total >= maxBytes) break;
  }
  return Buffer.concat(chunks, total);
}

/** Destroys a stream if it can be destroyed (releases the file handle or the socket). */
export function destroyStream(stream: unknown): void {
  if (typeof stream === 'object' && stream !== null && 'destroy' in stream) {
    const destroy = (stream as { destroy: unknown }).destroy;
    if (typeof destroy === 'function') destroy.call(stream);
  }
}

/** The string `code` of an error, if it has one (`NOT_FOUND` from a blob backend). */
export function errorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}
