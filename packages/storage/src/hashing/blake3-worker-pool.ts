import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { StorageError } from '../storage-error.js';
import { NATIVE_BLAKE3_MODULE } from './blake3.js';
import { BLAKE3_WORKER_SOURCE } from './blake3-worker-source.js';

/** How many leading bytes a digest carries for mime sniffing. */
export const SNIFF_HEAD_BYTES = 4096;

/** What hashing a blob yields. */
export interface BlobDigest {
  /** BLAKE3 hex of all the bytes. */
  readonly hash: string;
  /** Number of bytes hashed. */
  readonly size: number;
  /** The first bytes (at most {@link SNIFF_HEAD_BYTES}), for mime sniffing. */
  readonly head: Uint8Array;
}

/** Options of {@link Blake3WorkerPool}. */
export interface Blake3WorkerPoolOptions {
  /** Number of worker threads. @defaultValue `min(2, availableParallelism())` */
  readonly size?: number;
  /** Bytes per read (files) or per message to a worker (streams). @defaultValue 1 MiB */
  readonly chunkBytes?: number;
  /** Stream chunks in flight to a worker before the reader waits. @defaultValue 4 */
  readonly maxChunksInFlight?: number;
}

type WorkerMessage =
  | { type: 'done'; id: number; hash: string; size: number; head?: Uint8Array }
  | { type: 'ack'; id: number; bytes?: ArrayBuffer }
  | { type: 'error'; id: number; code: string; message: string };

interface Slot {
  worker: Worker | undefined;
  onMessage: ((message: WorkerMessage) => void) | undefined;
  onFailure: ((error: Error) => void) | undefined;
  /** Staging buffers of `hashStream`, back from the worker and free for reuse. */
  buffers: ArrayBuffer[];
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted', 'AbortError');
}

/**
 * A small pool of worker threads that compute BLAKE3 off the event loop,
 * with the native `@napi-rs/blake-hash` binding in each worker.
 *
 * Each job holds one worker from start to end; further jobs wait in FIFO
 * order. An aborted job terminates its worker (a replacement starts on the
 * next job), so an `AbortSignal` stops even a long file read at once. Idle
 * workers are `unref`ed and do not keep the process alive; call `close()` on
 * shutdown all the same.
 *
 * @example
 * ```ts
 * const pool = new Blake3WorkerPool();
 * const { hash, size, head } = await pool.hashFile('/var/lib/oxicloud/blobs/ab/cd/abcd…');
 * await pool.close();
 * ```
 */
export class Blake3WorkerPool {
  /** Number of worker threads. */
  readonly size: number;
  readonly #chunkBytes: number;
  readonly #maxInFlight: number;
  readonly #slots: Slot[];
  readonly #idle: Slot[];
  readonly #waiting: Array<{ resolve: (slot: Slot) => void; reject: (error: unknown) => void }> = [];
  #nextId = 1;
  #closed = false;

  constructor(options: Blake3WorkerPoolOptions = {}) {
    const size = options.size ?? Math.max(1, Math.min(2, availableParallelism()));
    const chunkBytes = options.chunkBytes ?? 1024 * 1024;
    const maxInFlight = options.maxChunksInFlight ?? 4;
    for (const [name, value, min] of [
      ['size', size, 1],
      ['chunkBytes', chunkBytes, SNIFF_HEAD_BYTES],
      ['maxChunksInFlight', maxInFlight, 1],
    ] as const) {
      if (!Number.isSafeInteger(value) || value < min) {
        throw new StorageError(
          'INVALID_CONFIG',
          `Blake3WorkerPool: ${name} must be an integer of at least ${min}, got ${String(value)}`,
        );
      }
    }
    this.size = size;
    this.#chunkBytes = chunkBytes;
    this.#maxInFlight = maxInFlight;
    this.#slots = Array.from({ length: size }, () => ({
      worker: undefined,
      onMessage: undefined,
      onFailure: undefined,
      buffers: [],
    }));
    this.#idle = [...this.#slots];
  }

  /**
   * Hashes the file at `path` inside a worker (the worker reads it itself,
   * so no bytes cross the event loop). Rejects with `NOT_FOUND` when the
   * file does not exist, with `signal.reason` when aborted.
   */
  hashFile(path: string, signal?: AbortSignal): Promise<BlobDigest> {
    return this.#hashPaths({ type: 'file', path }, path, signal);
  }

  /**
   * Hashes the files at `paths` read one after the other, as one byte
   * stream (a path that repeats is read again each time), inside a worker
   * that reads them itself: a chunked file's chunks in order. The worker
   * holds one read buffer, never a file. The empty list is the hash of no
   * bytes. Rejects with `NOT_FOUND` when a file does not exist (the message
   * names it), with `signal.reason` when aborted.
   */
  hashFiles(paths: readonly string[], signal?: AbortSignal): Promise<BlobDigest> {
    return this.#hashPaths(
      { type: 'files', paths: [...paths] },
      `one of a sequence of ${paths.length} file(s)`,
      signal,
    );
  }

  /** One job the worker reads from disk itself (`file` or `files`), in a slot of its own. */
  async #hashPaths(
    job: { type: 'file'; path: string } | { type: 'files'; paths: string[] },
    label: string,
    signal?: AbortSignal,
  ): Promise<BlobDigest> {
    const slot = await this.#acquire(signal);
    const id = this.#nextId++;
    try {
      return await this.#run(
        slot,
        signal,
        (worker) => {
          worker.postMessage({ ...job, id, headBytes: SNIFF_HEAD_BYTES, chunkBytes: this.#chunkBytes });
        },
        id,
        label,
      );
    } finally {
      this.#release(slot);
    }
  }

  /**
   * Hashes a stream: its chunks are copied into `chunkBytes` staging buffers
   * that are transferred to a worker and back (never copied again, reused
   * across jobs), with at most `maxChunksInFlight` at the worker, so memory
   * stays bounded when the source is faster than the hash and a long stream
   * makes no garbage of its own.
   */
  async hashStream(
    stream: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array>,
    signal?: AbortSignal,
  ): Promise<BlobDigest> {
    const slot = await this.#acquire(signal);
    const id = this.#nextId++;
    const head = new Uint8Array(SNIFF_HEAD_BYTES);
    let headLength = 0;
    let inFlight = 0;
    let wake: (() => void) | undefined;
    try {
      return await this.#run(
        slot,
        signal,
        (worker, fail, active) => {
          worker.postMessage({ type: 'begin', id });
          const chunkBytes = this.#chunkBytes;
          // Staging buffers travel to the worker and back (transferred, never
          // copied): at most maxChunksInFlight + 1 exist, and they are reused
          // across jobs, so a long stream allocates no garbage here.
          const takeBuffer = async (): Promise<ArrayBuffer | undefined> => {
            for (;;) {
              if (!active()) return undefined;
              const free = slot.buffers.pop();
              if (free !== undefined) return free;
              if (inFlight < this.#maxInFlight) return new ArrayBuffer(chunkBytes);
              await new Promise<void>((resolve) => {
                wake = resolve;
              });
            }
          };
          void (async () => {
            let staging = await takeBuffer();
            if (staging === undefined) return;
            let view = new Uint8Array(staging);
            let filled = 0;
            for await (const raw of stream) {
              const chunk = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
              if (headLength < SNIFF_HEAD_BYTES) {
                const take = Math.min(SNIFF_HEAD_BYTES - headLength, chunk.byteLength);
                head.set(chunk.subarray(0, take), headLength);
                headLength += take;
              }
              let offset = 0;
              while (offset < chunk.byteLength) {
                const take = Math.min(chunkBytes - filled, chunk.byteLength - offset);
                view.set(chunk.subarray(offset, offset + take), filled);
                filled += take;
                offset += take;
                if (filled === chunkBytes) {
                  inFlight++;
                  worker.postMessage({ type: 'chunk', id, bytes: staging, length: filled }, [staging]);
                  staging = await takeBuffer();
                  if (staging === undefined) return;
                  view = new Uint8Array(staging);
                  filled = 0;
                }
              }
              if (!active()) return;
            }
            if (filled > 0) {
              inFlight++;
              worker.postMessage({ type: 'chunk', id, bytes: staging, length: filled }, [staging]);
            } else {
              slot.buffers.push(staging);
            }
            worker.postMessage({ type: 'end', id });
          })().catch(fail);
        },
        id,
        undefined,
        (bytes) => {
          if (bytes !== undefined) slot.buffers.push(bytes);
          inFlight--;
          wake?.();
          wake = undefined;
        },
      ).then((digest) => ({ ...digest, head: head.slice(0, headLength) }));
    } finally {
      wake?.();
      this.#release(slot);
    }
  }

  /** Terminates every worker; pending and later calls reject with `BACKEND_ERROR`. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const waiter of this.#waiting.splice(0)) {
      waiter.reject(new StorageError('BACKEND_ERROR', 'Blake3WorkerPool is closed'));
    }
    await Promise.all(
      this.#slots.map(async (slot) => {
        const worker = slot.worker;
        slot.worker = undefined;
        slot.onFailure?.(new StorageError('BACKEND_ERROR', 'Blake3WorkerPool was closed while hashing'));
        if (worker !== undefined) await worker.terminate();
      }),
    );
  }

  #acquire(signal: AbortSignal | undefined): Promise<Slot> {
    if (this.#closed) return Promise.reject(new StorageError('BACKEND_ERROR', 'Blake3WorkerPool is closed'));
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const slot = this.#idle.shift();
    if (slot !== undefined) return Promise.resolve(slot);
    return new Promise<Slot>((resolve, reject) => {
      const waiter = {
        resolve: (s: Slot) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(s);
        },
        reject,
      };
      const onAbort = () => {
        const index = this.#waiting.indexOf(waiter);
        if (index !== -1) this.#waiting.splice(index, 1);
        reject(abortReason(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(waiter);
    });
  }

  #release(slot: Slot): void {
    slot.onMessage = undefined;
    slot.onFailure = undefined;
    const next = this.#waiting.shift();
    if (next !== undefined) {
      next.resolve(slot);
      return;
    }
    slot.worker?.unref();
    this.#idle.push(slot);
  }

  #worker(slot: Slot): Worker {
    if (slot.worker !== undefined) return slot.worker;
    const worker = new Worker(BLAKE3_WORKER_SOURCE, {
      eval: true,
      workerData: { nativeModule: NATIVE_BLAKE3_MODULE },
    });
    // A discarded worker (aborted job) may still talk or exit: only the slot's current worker counts.
    worker.on('message', (message: WorkerMessage) => {
      if (slot.worker === worker) slot.onMessage?.(message);
    });
    const lost = (error: Error) => {
      if (slot.worker !== worker) return;
      slot.worker = undefined;
      slot.onFailure?.(error);
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`BLAKE3 worker exited with code ${code}`)));
    slot.worker = worker;
    return worker;
  }

  #run(
    slot: Slot,
    signal: AbortSignal | undefined,
    start: (worker: Worker, fail: (error: unknown) => void, active: () => boolean) => void,
    id: number,
    path: string | undefined,
    onAck?: (bytes: ArrayBuffer | undefined) => void,
  ): Promise<BlobDigest> {
    return new Promise<BlobDigest>((resolve, reject) => {
      const worker = this.#worker(slot);
      worker.ref();
      let settled = false;
      const settle = (action: () => void) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        slot.onMessage = undefined;
        slot.onFailure = undefined;
        action();
      };
      const discardWorker = () => {
        if (slot.worker === worker) slot.worker = undefined;
        slot.buffers = [];
        void worker.terminate();
      };
      const fail = (error: unknown) =>
        settle(() => {
          discardWorker();
          reject(
            error instanceof StorageError || error === signal?.reason
              ? error
              : new StorageError('BACKEND_ERROR', `BLAKE3 hashing failed: ${String(error)}`, {
                  cause: error,
                }),
          );
        });
      const onAbort = () =>
        settle(() => {
          discardWorker();
          reject(abortReason(signal!));
        });
      slot.onFailure = fail;
      slot.onMessage = (message) => {
        if (message.id !== id) return;
        if (message.type === 'ack') {
          onAck?.(message.bytes);
        } else if (message.type === 'done') {
          settle(() =>
            resolve({ hash: message.hash, size: message.size, head: message.head ?? new Uint8Array() }),
          );
        } else if (message.code === 'ENOENT') {
          settle(() =>
            reject(
              new StorageError('NOT_FOUND', `no file to hash at ${path ?? '(stream)'}: ${message.message}`),
            ),
          );
        } else {
          settle(() =>
            reject(
              new StorageError(
                'BACKEND_ERROR',
                `BLAKE3 hashing of ${path ?? 'a stream'} failed: ${message.code}: ${message.message}`,
              ),
            ),
          );
        }
      };
      if (signal?.aborted) {
        onAbort();
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        start(worker, fail, () => !settled);
      } catch (error) {
        fail(error);
      }
    });
  }
}
