/** What `BlobStorage.put` accepts: bytes, or a stream / async iterable of bytes. */
export type BlobData = Uint8Array | AsyncIterable<Uint8Array> | NodeJS.ReadableStream;

/** The chunks of {@link BlobData} as `Uint8Array`s (string chunks of an old-style stream become UTF-8 bytes). */
export async function* chunksOf(data: BlobData): AsyncGenerator<Uint8Array> {
  if (data instanceof Uint8Array) {
    yield data;
    return;
  }
  for await (const chunk of data as AsyncIterable<Uint8Array | string>) {
    yield typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
  }
}
