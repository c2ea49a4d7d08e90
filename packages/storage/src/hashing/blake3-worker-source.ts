/**
 * Source of a Blake3WorkerPool worker, run with `new Worker(source, { eval: true })`
 * so that it works unchanged from `src/` (tests) and from the bundled `dist/`.
 * `workerData.nativeModule` is the absolute path of `@napi-rs/blake-hash`.
 *
 * Messages in:  { type: 'file', id, path, headBytes, chunkBytes }
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
function hashFile(id, path, headBytes, chunkBytes) {
  let fd = -1;
  try {
    fd = fs.openSync(path, 'r');
    const hasher = new Blake3Hasher();
    if (readBuffer === null || readBuffer.length < chunkBytes) readBuffer = Buffer.allocUnsafe(chunkBytes);
    const buffer = readBuffer;
    let head = null;
    let size = 0;
    for (;;) {
      const n = fs.readSync(fd, buffer, 0, chunkBytes, null);
      if (n === 0) break;
      const chunk = buffer.subarray(0, n);
      // chunkBytes >= headBytes: the head is in the first chunk (copied: the buffer is reused).
      if (head === null) head = Uint8Array.prototype.slice.call(chunk, 0, Math.min(headBytes, n));
      hasher.update(chunk);
      size += n;
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
        hashFile(message.id, message.path, message.headBytes, message.chunkBytes);
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
