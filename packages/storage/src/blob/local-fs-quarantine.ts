import { randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, stat, unlink, utimes } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ChunkManifestRecord, QuarantinedEntry, QuarantineListOptions } from '@oxicloud/tenants';
import { toStorageError } from '../storage-error.js';
import { assertListLimit, normaliseStartAfter } from './blob-hash.js';
import {
  hashOfBlobFileName,
  isBlobPrefixDir,
  localBlobPath,
  localQuarantineDir,
  localQuarantinedBlobPath,
  localQuarantinedManifestPath,
  localQuarantinedManifestsDir,
  MANIFEST_RECORD_SUFFIX,
} from './blob-layout.js';
import { errnoCode, readNames } from './fs-names.js';
import { decodeManifestRecord, encodeManifestRecord } from './manifest-record-codec.js';

/** Makes a rename durable; best effort (some filesystems refuse fsync on folders). */
async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // The move happened; only its durability across a power cut is weaker.
  }
}

/** Renames `from` to `to` (replacing `to`), creating `to`'s folder; `false` when `from` does not exist. */
async function move(from: string, to: string): Promise<boolean> {
  await mkdir(dirname(to), { recursive: true });
  try {
    await rename(from, to);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return false;
    throw error;
  }
  await syncDir(dirname(to));
  await syncDir(dirname(from));
  return true;
}

async function removeFile(path: string): Promise<boolean> {
  try {
    await unlink(path);
    return true;
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return false;
    throw error;
  }
}

/**
 * Entries `<aa>/<hash><suffix>` under `base`, in hash order after
 * `startAfter`, with their mtime as the quarantine time.
 */
async function listEntries(
  base: string,
  suffix: string,
  options: QuarantineListOptions,
): Promise<QuarantinedEntry[]> {
  const startAfter = normaliseStartAfter(options.startAfter);
  assertListLimit(options.limit);
  const from = startAfter ?? '';
  const out: QuarantinedEntry[] = [];
  const folders = (await readNames(base, ['ENOTDIR']))
    .filter((n) => isBlobPrefixDir(n) && n >= from.slice(0, 2))
    .sort();
  for (const folder of folders) {
    if (out.length >= options.limit) break;
    const hashes = (await readNames(join(base, folder), ['ENOTDIR']))
      .map((name) =>
        name.endsWith(suffix) ? hashOfBlobFileName(folder, `${name.slice(0, -suffix.length)}.blob`) : null,
      )
      .filter((h): h is string => h !== null && h > from)
      .sort();
    for (const hash of hashes) {
      if (out.length >= options.limit) break;
      try {
        const info = await stat(join(base, folder, `${hash}${suffix}`));
        if (info.isFile()) out.push({ hash, quarantinedAt: info.mtime });
      } catch (error) {
        if (errnoCode(error) !== 'ENOENT') throw error; // restored or purged since the readdir
      }
    }
  }
  return out;
}

/**
 * The quarantine of a local store under `<root>/.oxijobs-quarantine` (see
 * `LOCAL_QUARANTINE_DIR`): moves are renames within the storage root (one
 * filesystem, atomic), then the folders are fsynced. A quarantined object's
 * mtime is set to the time of the move: it is the quarantine time the purge
 * grace counts from.
 */
export class LocalFsQuarantine {
  readonly #root: string;

  constructor(root: string) {
    this.#root = root;
  }

  async quarantineBlob(hash: string): Promise<boolean> {
    const target = localQuarantinedBlobPath(this.#root, hash);
    try {
      if (!(await move(localBlobPath(this.#root, hash), target))) return false;
      const at = new Date();
      await utimes(target, at, at);
      return true;
    } catch (error) {
      throw toStorageError(error, `quarantining local blob ${hash} under ${this.#root} failed`);
    }
  }

  async restoreBlob(hash: string): Promise<boolean> {
    try {
      return await move(localQuarantinedBlobPath(this.#root, hash), localBlobPath(this.#root, hash));
    } catch (error) {
      throw toStorageError(error, `restoring quarantined blob ${hash} under ${this.#root} failed`);
    }
  }

  async listQuarantinedBlobs(options: QuarantineListOptions): Promise<QuarantinedEntry[]> {
    try {
      return await listEntries(localQuarantineDir(this.#root), '.blob', options);
    } catch (error) {
      throw toStorageError(error, `listing the quarantine under ${this.#root} failed`);
    }
  }

  async purgeQuarantinedBlob(hash: string): Promise<boolean> {
    try {
      return await removeFile(localQuarantinedBlobPath(this.#root, hash));
    } catch (error) {
      throw toStorageError(error, `purging quarantined blob ${hash} under ${this.#root} failed`);
    }
  }

  async saveManifest(record: ChunkManifestRecord): Promise<void> {
    const target = localQuarantinedManifestPath(this.#root, record.fileHash);
    const temp = join(dirname(target), `.tmp-${randomUUID()}`);
    try {
      await mkdir(dirname(target), { recursive: true });
      const handle = await open(temp, 'wx', 0o644);
      try {
        await handle.writeFile(encodeManifestRecord(record));
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, target);
      await syncDir(dirname(target));
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw toStorageError(error, `saving manifest ${record.fileHash} under ${this.#root} failed`);
    }
  }

  async listQuarantinedManifests(options: QuarantineListOptions): Promise<QuarantinedEntry[]> {
    try {
      return await listEntries(localQuarantinedManifestsDir(this.#root), MANIFEST_RECORD_SUFFIX, options);
    } catch (error) {
      throw toStorageError(error, `listing saved manifests under ${this.#root} failed`);
    }
  }

  async readQuarantinedManifest(fileHash: string): Promise<ChunkManifestRecord | null> {
    const path = localQuarantinedManifestPath(this.#root, fileHash);
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return null;
      throw toStorageError(error, `reading saved manifest ${fileHash} under ${this.#root} failed`);
    }
    return decodeManifestRecord(fileHash, bytes, path);
  }

  async purgeQuarantinedManifest(fileHash: string): Promise<boolean> {
    try {
      return await removeFile(localQuarantinedManifestPath(this.#root, fileHash));
    } catch (error) {
      throw toStorageError(error, `purging saved manifest ${fileHash} under ${this.#root} failed`);
    }
  }
}
