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
function hashFile(id, path, headBytes, chunkBytes) {
  let fd = -1;
  try {
    fd = fs.openSync(path, 'r');
    const hasher = new Blake3Hasher();
    const buffer = Buffer.allocUnsafe(chunkBytes);
    const head = new Uint8Array(headBytes);
    let headLength = 0;
    let size = 0;
    for (;;) {
      const n = fs.readSync(fd, buffer, 0, chunkBytes, null);
      if (n === 0) break;
      const chunk = buffer.subarray(0, n);
      if (headLength < headBytes) {
        const take = Math.min(headBytes - headLength, n);
        head.set(chunk.subarray(0, take), headLength);
        headLength += take;
      }
      hasher.update(chunk);
      size += n;
    }
    const out = head.slice(0, headLength);
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
