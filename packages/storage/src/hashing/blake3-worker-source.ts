/**
 * Source of a Blake3WorkerPool worker, run with `new Worker(source, { eval: true })`
 * so that it works unchanged from `src/` (tests) and from the bundled `dist/`.
 * `workerData.nativeModule` is the absolute path of `@napi-rs/blake-hash`.
 *
 * Messages in:  { type: 'file', id, path, headBytes, chunkBytes }
 *               { type: 'files', id, paths, headBytes, chunkBytes } (one hash of the files read in order)
 *               { type: 'begin', id } · { type: 'chunk', id, bytes: ArrayBuffer, length } · { type: 'end', id }
 * Messages out: { type: 'done', id, hash, size, head? } · { type: 'ack', id, bytes } (the chunk's buffer, back for reuse)
 *               { type: 'error', id, code, message }
 */
export const BLAKE3_WORKER_SOURCE = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { Blake3Hasher } = require(workerData.nativeModule);
let streamId = null;
let streamHasher = null;
let streamSize = 0;
function fail(id, error) {
  parentPort.postMessage({ type: 'error', id, code: error && error.code ? String(error.code) : 'EWORKER', message: error && error.message ? error.message : String(error) });
}
// One read buffer per worker, reused for every file (a fresh 1 MiB buffer per small blob cost
// more than reading it: issue 22).
let readBuffer = null;
// One BLAKE3 over the files read in order, one after the other: a single file, or a chunked
// file's chunks (never more than one read buffer in memory, whatever the sizes).
function hashFiles(id, paths, headBytes, chunkBytes) {
  let fd = -1;
  try {
    const hasher = new Blake3Hasher();
    if (readBuffer === null || readBuffer.length < chunkBytes) readBuffer = Buffer.allocUnsafe(chunkBytes);
    const buffer = readBuffer;
    let head = null;
    let size = 0;
    for (const path of paths) {
      fd = fs.openSync(path, 'r');
      for (;;) {
        const n = fs.readSync(fd, buffer, 0, chunkBytes, null);
        if (n === 0) break;
        const chunk = buffer.subarray(0, n);
        // chunkBytes >= headBytes: a file's head is in its first chunk (copied: the buffer is reused);
        // when the first files are shorter than the head, the next ones complete it.
        if (head === null) {
          head = Uint8Array.prototype.slice.call(chunk, 0, Math.min(headBytes, n));
        } else if (head.length < headBytes) {
          const more = chunk.subarray(0, Math.min(headBytes - head.length, n));
          const joined = new Uint8Array(head.length + more.length);
          joined.set(head);
          joined.set(more, head.length);
          head = joined;
        }
        hasher.update(chunk);
        size += n;
      }
      fs.closeSync(fd);
      fd = -1;
    }
    const out = head === null ? new Uint8Array(0) : head;
    parentPort.postMessage({ type: 'done', id, hash: hasher.digest('hex'), size, head: out }, [out.buffer]);
  } catch (error) {
    fail(id, error);
  } finally {
    if (fd !== -1) fs.closeSync(fd);
  }
}
parentPort.on('message', (message) => {
  try {
    switch (message.type) {
      case 'file':
        hashFiles(message.id, [message.path], message.headBytes, message.chunkBytes);
        break;
      case 'files':
        hashFiles(message.id, message.paths, message.headBytes, message.chunkBytes);
        break;
      case 'begin':
        streamId = message.id;
        streamHasher = new Blake3Hasher();
        streamSize = 0;
        break;
      case 'chunk':
        if (message.id !== streamId) break;
        streamHasher.update(new Uint8Array(message.bytes, 0, message.length));
        streamSize += message.length;
        parentPort.postMessage({ type: 'ack', id: message.id, bytes: message.bytes }, [message.bytes]);
        break;
      case 'end':
        if (message.id !== streamId) break;
        parentPort.postMessage({ type: 'done', id: message.id, hash: streamHasher.digest('hex'), size: streamSize });
        streamId = null;
        streamHasher = null;
        break;
      default:
        fail(message.id, new Error('unknown message type ' + String(message.type)));
    }
  } catch (error) {
    fail(message.id, error);
  }
});
`;
