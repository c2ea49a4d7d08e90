import { randomUUID } from 'node:crypto';
import { constants as fsConstants, type Stats } from 'node:fs';
import { access, mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ConsistencyCheck } from '@oxicloud/consistency';
import type {
  BlobEntry,
  BlobQuarantine,
  BlobStorage,
  BlobStorageHealth,
  ChunkManifestRecord,
  QuarantinedEntry,
  QuarantineListOptions,
} from '@oxicloud/tenants';
import { StorageError, toStorageError } from '../storage-error.js';
import { type BlobData, chunksOf } from './blob-data.js';
import { assertBlobHash, assertBlobSize, assertListLimit, normaliseStartAfter } from './blob-hash.js';
import {
  BLOB_OBJECT_SUFFIX,
  hashOfBlobFileName,
  isBlobPrefixDir,
  localBlobDir,
  localBlobPath,
  localBlobsDir,
} from './blob-layout.js';
import { errnoCode, readNames } from './fs-names.js';
import { LocalFsQuarantine } from './local-fs-quarantine.js';

/** Options of {@link LocalFsBlobStorage}. */
export interface LocalFsBlobStorageOptions {
  /**
   * The storage root: OxiCloud's `OXICLOUD_STORAGE_PATH`, the folder that
   * holds `.blobs/` (and `.thumbnails/`, `.uploads/`, `.jwt_secret`, … that
   * this backend never lists or touches). Blobs live at
   * `<root>/.blobs/<aa>/<hash>.blob`; the folders are created on the first
   * `put` if missing.
   */
  readonly root: string;
  /**
   * The consistency checks this backend contributes, built from the storage
   * itself (the server wires `storage_consistency` here).
   * @defaultValue `() => []`
   */
  readonly consistencyChecks?: (self: LocalFsBlobStorage) => readonly ConsistencyCheck[];
}

const TEMP_PREFIX = '.tmp-';
/** How many `stat` calls `list` runs at once. */
const STAT_CONCURRENCY = 64;
/**
 * At most this many prefix folders `list` reads at once. How many it reads
 * is sized from the blobs per folder seen so far, so a page of 1000 on a
 * store of a few hundred blobs (most of the 256 folders empty or nearly)
 * does not cost 256 sequential `readdir` round trips, and a page on a store
 * of millions (thousands of blobs a folder) reads one folder at a time.
 */
const PREFIX_DIR_CONCURRENCY = 32;

/**
 * Content-addressed blobs on a local disk in OxiCloud's layout:
 * `<root>/.blobs/<aa>/<hash>.blob`, `aa` being the hash's first two hex
 * characters (256 prefix folders). The root is OxiCloud's storage root;
 * everything else in it (`.thumbnails`, `.uploads`, `.blob-cache`,
 * `.jwt_secret`, …) is not a blob and is never listed, read or written.
 *
 * - Writes are atomic: the bytes go to a temp file in the blob's own prefix
 *   folder (`.tmp-<hash>-<uuid>`), are fsynced, then renamed over the final
 *   name, then the folder is fsynced; a reader sees either no blob or the
 *   whole blob. Temp files are never listed.
 * - `list` reads the prefix folders in sorted order from `startAfter`'s
 *   folder on (never the folders before it) and returns only names
 *   `<hash>.blob` whose hash starts with their folder's name: strays
 *   (`.blobs/zz/…`, `notahash.blob`, temp files) are skipped. A root
 *   without `.blobs` lists nothing; a root that does not exist fails
 *   (`BACKEND_ERROR`): it is a wrong path, not an empty store.
 * - `health` only reads (stat and access of the root and `.blobs`): it
 *   never writes into a store this engine may not own.
 * - Keys are validated with `assertBlobHash` before any file call.
 * - The {@link BlobQuarantine} methods (used by `dedup_gc` only) move
 *   objects between `.blobs` and the engine's `<root>/.oxijobs-quarantine`
 *   by rename (see `LOCAL_QUARANTINE_DIR`).
 *
 * @example
 * ```ts
 * import { LocalFsBlobStorage } from '@oxicloud/storage';
 * const blobs = new LocalFsBlobStorage({ root: process.env.OXICLOUD_STORAGE_PATH ?? './storage' });
 * await blobs.put(hash, bytes, bytes.length); // ./storage/.blobs/af/af13….blob
 * for await (const chunk of await blobs.get(hash)) process(chunk);
 * ```
 */
export class LocalFsBlobStorage implements BlobStorage, BlobQuarantine {
  readonly backend = 'local';
  /** Absolute path of the storage root. */
  readonly root: string;
  /** Absolute path of `<root>/.blobs`, the folder of the prefix folders. */
  readonly blobsDir: string;
  readonly #checksFactory: ((self: LocalFsBlobStorage) => readonly ConsistencyCheck[]) | undefined;
  #checks: readonly ConsistencyCheck[] | undefined;
  readonly #quarantine: LocalFsQuarantine;

  constructor(options: LocalFsBlobStorageOptions) {
    if (typeof options?.root !== 'string' || options.root.trim() === '') {
      throw new StorageError(
        'INVALID_CONFIG',
        `LocalFsBlobStorage: root must be a non-empty folder path (the storage root), got ${JSON.stringify(options?.root)}`,
      );
    }
    if (options.consistencyChecks !== undefined && typeof options.consistencyChecks !== 'function') {
      throw new StorageError(
        'INVALID_CONFIG',
        'LocalFsBlobStorage: consistencyChecks must be a function (self) => ConsistencyCheck[] when given',
      );
    }
    this.root = resolve(options.root);
    this.blobsDir = localBlobsDir(this.root);
    this.#checksFactory = options.consistencyChecks;
    this.#quarantine = new LocalFsQuarantine(this.root);
  }

  subsystem(): string {
    return 'blobs';
  }

  consistencyChecks(): readonly ConsistencyCheck[] {
    // TODO(consistency): storage_consistency is wired by the server through the
    // `consistencyChecks` option; without it this backend contributes none.
    this.#checks ??= this.#checksFactory?.(this) ?? [];
    return this.#checks;
  }

  /** Absolute path where the blob `hash` lives: `<root>/.blobs/<aa>/<hash>.blob` (validated first; the file may not exist). */
  pathOf(hash: string): string {
    return localBlobPath(this.root, hash);
  }

  async put(hash: string, data: BlobData, size?: number): Promise<void> {
    assertBlobHash(hash);
    assertBlobSize(size);
    const target = this.pathOf(hash);
    const dir = localBlobDir(this.root, hash);
    const temp = join(dir, `${TEMP_PREFIX}${hash}-${randomUUID()}`);
    let written = 0;
    try {
      await mkdir(dir, { recursive: true });
      const handle = await open(temp, 'wx', 0o644);
      try {
        for await (const chunk of chunksOf(data)) {
          let offset = 0;
          while (offset < chunk.byteLength) {
            const { bytesWritten } = await handle.write(chunk, offset, chunk.byteLength - offset);
            offset += bytesWritten;
          }
          written += chunk.byteLength;
          if (size !== undefined && written > size) break;
        }
        if (size !== undefined && written !== size) {
          throw new StorageError(
            'SIZE_MISMATCH',
            `blob ${hash}: got ${written > size ? 'more than ' : ''}${written} bytes but the caller announced ${size}; nothing was stored`,
          );
        }
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, target);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw toStorageError(error, `local blob put ${hash} under ${this.root} failed`);
    }
    await this.#syncDir(dir);
  }

  async get(hash: string): Promise<NodeJS.ReadableStream & AsyncIterable<Uint8Array>> {
    assertBlobHash(hash);
    const path = this.pathOf(hash);
    try {
      const handle = await open(path, 'r');
      return handle.createReadStream({ autoClose: true });
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') {
        throw new StorageError('NOT_FOUND', `blob ${hash} does not exist under ${this.root}`, {
          cause: error,
        });
      }
      throw toStorageError(error, `local blob get ${hash} under ${this.root} failed`);
    }
  }

  async head(hash: string): Promise<BlobEntry | null> {
    assertBlobHash(hash);
    try {
      const info = await stat(this.pathOf(hash));
      return info.isFile() ? { hash, size: info.size, modifiedAt: info.mtime } : null;
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return null;
      throw toStorageError(error, `local blob head ${hash} under ${this.root} failed`);
    }
  }

  async exists(hash: string): Promise<boolean> {
    return (await this.head(hash)) !== null;
  }

  async delete(hash: string): Promise<boolean> {
    assertBlobHash(hash);
    try {
      await unlink(this.pathOf(hash));
      return true;
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return false;
      throw toStorageError(error, `local blob delete ${hash} under ${this.root} failed`);
    }
  }

  async list(options: { startAfter?: string | null; limit: number }): Promise<BlobEntry[]> {
    const startAfter = normaliseStartAfter(options.startAfter);
    assertListLimit(options.limit);
    const limit = options.limit;
    const from = startAfter ?? '';
    const out: BlobEntry[] = [];
    try {
      const names = await readNames(this.blobsDir);
      if (names.length === 0) await this.#assertRootExists();
      const folders = names.filter((name) => isBlobPrefixDir(name) && name >= from.slice(0, 2)).sort();
      let read = 0;
      let blobsSeen = 0;
      while (read < folders.length && out.length < limit) {
        // One folder first, then as many as the blobs per folder seen so far say the rest of the page needs.
        const want = read === 0 ? 1 : Math.ceil((limit - out.length) / Math.max(1, blobsSeen / read));
        const window = folders.slice(read, read + Math.min(PREFIX_DIR_CONCURRENCY, Math.max(1, want)));
        read += window.length;
        const listed = await Promise.all(window.map((folder) => readNames(join(this.blobsDir, folder))));
        // Folders are sorted and every hash starts with its folder: the candidates stay in hash order.
        const candidates = window.flatMap((folder, j) => {
          const hashes: string[] = [];
          for (const name of listed[j] ?? []) {
            const hash = hashOfBlobFileName(folder, name);
            if (hash !== null) hashes.push(hash);
          }
          blobsSeen += hashes.length;
          return hashes
            .filter((hash) => hash > from)
            .sort()
            .map((hash) => ({ hash, path: join(this.blobsDir, folder, `${hash}${BLOB_OBJECT_SUFFIX}`) }));
        });
        for (let k = 0; k < candidates.length && out.length < limit; ) {
          // Never more stats than the page still needs; a candidate that is not a file (a folder
          // named like a blob, a blob deleted since the readdir) leaves room for the next one.
          const batch = candidates.slice(k, k + Math.min(STAT_CONCURRENCY, limit - out.length));
          k += batch.length;
          const entries = await Promise.all(batch.map((c) => this.#statEntry(c.path, c.hash)));
          for (const entry of entries) if (entry !== null && out.length < limit) out.push(entry);
        }
      }
    } catch (error) {
      throw toStorageError(error, `local blob list under ${this.blobsDir} failed`);
    }
    return out;
  }

  quarantineBlob(hash: string): Promise<boolean> {
    return this.#quarantine.quarantineBlob(hash);
  }

  restoreBlob(hash: string): Promise<boolean> {
    return this.#quarantine.restoreBlob(hash);
  }

  listQuarantinedBlobs(options: QuarantineListOptions): Promise<QuarantinedEntry[]> {
    return this.#quarantine.listQuarantinedBlobs(options);
  }

  purgeQuarantinedBlob(hash: string): Promise<boolean> {
    return this.#quarantine.purgeQuarantinedBlob(hash);
  }

  saveManifest(record: ChunkManifestRecord): Promise<void> {
    return this.#quarantine.saveManifest(record);
  }

  listQuarantinedManifests(options: QuarantineListOptions): Promise<QuarantinedEntry[]> {
    return this.#quarantine.listQuarantinedManifests(options);
  }

  readQuarantinedManifest(fileHash: string): Promise<ChunkManifestRecord | null> {
    return this.#quarantine.readQuarantinedManifest(fileHash);
  }

  purgeQuarantinedManifest(fileHash: string): Promise<boolean> {
    return this.#quarantine.purgeQuarantinedManifest(fileHash);
  }

  /**
   * Read-only: the root must be a folder this process can read, write and
   * enter (`access`, which writes nothing), and `.blobs`, when it exists,
   * too. Nothing is created or written.
   */
  async health(): Promise<BlobStorageHealth> {
    const usable = async (dir: string, optional: boolean): Promise<void> => {
      let info: Stats;
      try {
        info = await stat(dir);
      } catch (error) {
        if (optional && errnoCode(error) === 'ENOENT') return;
        throw error;
      }
      if (!info.isDirectory()) throw new Error(`${dir} is not a folder`);
      await access(dir, fsConstants.R_OK | fsConstants.W_OK | fsConstants.X_OK);
    };
    try {
      await usable(this.root, false);
      await usable(this.blobsDir, true);
      return { ok: true, backend: this.backend };
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return {
        ok: false,
        backend: this.backend,
        message: `storage root ${this.root} is not a readable and writable folder: ${reason}`,
      };
    }
  }

  /**
   * A storage root that does not exist is a wrong path, not an empty store:
   * listing it as empty would make every blob row look like lost bytes.
   */
  async #assertRootExists(): Promise<void> {
    try {
      await stat(this.root);
    } catch (error) {
      if (errnoCode(error) !== 'ENOENT') throw error;
      throw new StorageError(
        'BACKEND_ERROR',
        `local blob list: the storage root ${this.root} does not exist; a missing root is not an empty store ` +
          '(check the root option, OXICLOUD_STORAGE_PATH for the server)',
        { cause: error },
      );
    }
  }

  async #statEntry(path: string, hash: string): Promise<BlobEntry | null> {
    try {
      const info = await stat(path);
      return info.isFile() ? { hash, size: info.size, modifiedAt: info.mtime } : null;
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return null; // deleted between readdir and stat
      throw error;
    }
  }

  /** Makes the rename durable; best effort (some filesystems refuse fsync on folders). */
  async #syncDir(dir: string): Promise<void> {
    try {
      const handle = await open(dir, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    } catch {
      // The blob is in place; only its durability across a power cut is weaker.
    }
  }
}
