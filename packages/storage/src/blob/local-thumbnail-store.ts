import { readdir, stat, unlink } from 'node:fs/promises';
import { join, sep } from 'node:path';
import type { DerivedFiles, FileDerivativesEntry, ThumbnailEntry, ThumbnailStore } from '@oxicloud/tenants';
import { StorageError } from '../storage-error.js';
import {
  externalThumbnailFileIdOf,
  THUMBNAIL_EXTENSIONS,
  THUMBNAIL_SIZES,
  THUMBNAILS_DIR,
  TRANSCODED_DIR,
  TRANSCODED_FORMAT,
  thumbnailHashOf,
  transcodedFileIdOf,
} from './thumbnail-layout.js';

/** Paths (relative to the root) of one file id's derived files, by family. */
interface FileIdFiles {
  readonly external: string[];
  readonly transcoded: string[];
}

/** The first position in the sorted `keys` after `startAfter` (binary search). */
function firstAfter(keys: readonly string[], startAfter: string | null): number {
  let at = 0;
  if (startAfter === null) return at;
  let hi = keys.length;
  while (at < hi) {
    const mid = (at + hi) >>> 1;
    if ((keys[mid] as string) <= startAfter) at = mid + 1;
    else hi = mid;
  }
  return at;
}

/** `true` for `.thumbnails/<size>/<hash or ext-id>.<ext>` and `.transcoded/webp/<id>.webp(.skip)`, as the listings name them. */
function isDerivedFile(file: string): boolean {
  const parts = file.split(sep);
  if (parts.length !== 3) return false;
  const [top, folder, name] = parts as [string, string, string];
  if (top === THUMBNAILS_DIR) {
    return (
      (THUMBNAIL_SIZES as readonly string[]).includes(folder) &&
      (thumbnailHashOf(name) !== null || externalThumbnailFileIdOf(name) !== null)
    );
  }
  return top === TRANSCODED_DIR && folder === TRANSCODED_FORMAT && transcodedFileIdOf(name) !== null;
}

/** The names in `dir`; none when it is missing. */
async function namesIn(dir: string): Promise<string[]> {
  return readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return [] as string[];
    throw error;
  });
}

/**
 * {@link ThumbnailStore} over OxiCloud's storage root on local disk: the
 * three size folders of `.thumbnails`, merged by content hash.
 *
 * A walk (a `list` from the start) reads the three folders once and keeps
 * the sorted hashes; the pages after it come from that listing, so a walk
 * costs three `readdir`s and a `stat` per listed file, not three per page.
 * A thumbnail written after the walk began is seen by the next walk. No
 * thumbnail folder means no thumbnails.
 *
 * The file-id keyed files (`listByFileId`: `ext-<file_id>.jpg` in the three
 * size folders, `.transcoded/webp/<file_id>.webp` and its `.skip` marker)
 * are walked the same way, with a listing of their own: four `readdir`s
 * per walk and a `stat` per listed file.
 */
export class LocalThumbnailStore implements ThumbnailStore {
  readonly #root: string;
  /** The walk's listing: each thumbnailed hash, sorted, with its files as the folders named them. */
  #walk: { hashes: string[]; files: Map<string, string[]> } | null = null;
  /** The file-id walk's listing: each file id, sorted, with its files as the folders named them. */
  #fileIdWalk: { ids: string[]; files: Map<string, FileIdFiles> } | null = null;

  /** @param root OxiCloud's storage root (`OXICLOUD_STORAGE_PATH`), the folder that holds `.thumbnails`. */
  constructor(root: string) {
    this.#root = root;
  }

  /**
   * Removes the thumbnail and transcoded files named (relative paths an
   * entry listed): each must be a thumbnail or transcoded file name in its
   * folder, else nothing is removed and it throws. The walks' listings are
   * dropped, so the next walk reads the folders again.
   */
  async remove(files: readonly string[]): Promise<number> {
    for (const file of files) {
      if (!isDerivedFile(file)) {
        throw new StorageError(
          'INVALID_ARGUMENT',
          `not a thumbnail or transcoded file of the storage root: ${file}`,
        );
      }
    }
    let removed = 0;
    for (const file of files) {
      const gone = await unlink(join(this.#root, file)).then(
        () => true,
        (error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT') return false;
          throw error;
        },
      );
      if (gone) removed += 1;
    }
    this.#walk = null;
    this.#fileIdWalk = null;
    return removed;
  }

  async list(options: {
    readonly startAfter: string | null;
    readonly limit: number;
  }): Promise<ThumbnailEntry[]> {
    if (options.startAfter === null || this.#walk === null) this.#walk = await this.#listing();
    const { hashes, files } = this.#walk;
    const at = firstAfter(hashes, options.startAfter);
    const out: ThumbnailEntry[] = [];
    for (const hash of hashes.slice(at, at + options.limit)) {
      // Only the files the listing found are read (a stat each), not every size and extension.
      const entry = await this.#entry(hash, files.get(hash) ?? []);
      if (entry !== null) out.push(entry);
    }
    return out;
  }

  stat(hash: string): Promise<ThumbnailEntry | null> {
    return this.#entry(
      hash,
      THUMBNAIL_SIZES.flatMap((size) =>
        THUMBNAIL_EXTENSIONS.map((ext) => join(THUMBNAILS_DIR, size, `${hash}.${ext}`)),
      ),
    );
  }

  async listByFileId(options: {
    readonly startAfter: string | null;
    readonly limit: number;
  }): Promise<FileDerivativesEntry[]> {
    if (options.startAfter === null || this.#fileIdWalk === null)
      this.#fileIdWalk = await this.#fileIdListing();
    const { ids, files } = this.#fileIdWalk;
    const at = firstAfter(ids, options.startAfter);
    const out: FileDerivativesEntry[] = [];
    for (const fileId of ids.slice(at, at + options.limit)) {
      const entry = await this.#fileIdEntry(fileId, files.get(fileId) ?? { external: [], transcoded: [] });
      if (entry !== null) out.push(entry);
    }
    return out;
  }

  statByFileId(fileId: string): Promise<FileDerivativesEntry | null> {
    return this.#fileIdEntry(fileId, {
      external: THUMBNAIL_SIZES.map((size) => join(THUMBNAILS_DIR, size, `ext-${fileId}.jpg`)),
      transcoded: [
        join(TRANSCODED_DIR, TRANSCODED_FORMAT, `${fileId}.${TRANSCODED_FORMAT}`),
        join(TRANSCODED_DIR, TRANSCODED_FORMAT, `${fileId}.${TRANSCODED_FORMAT}.skip`),
      ],
    });
  }

  /** The derived files of `fileId` among `candidates` that are files now, by family. */
  async #fileIdEntry(fileId: string, candidates: FileIdFiles): Promise<FileDerivativesEntry | null> {
    const externalThumbnails = await this.#files(candidates.external);
    const transcoded = await this.#files(candidates.transcoded);
    return externalThumbnails === null && transcoded === null
      ? null
      : { fileId, externalThumbnails, transcoded };
  }

  /** The thumbnails of `hash` among `candidates` (paths relative to the root) that are files now. */
  async #entry(hash: string, candidates: readonly string[]): Promise<ThumbnailEntry | null> {
    const found = await this.#files(candidates);
    return found === null ? null : { hash, ...found };
  }

  /** Those of `candidates` (paths relative to the root) that are files now; `null` when none is. */
  async #files(candidates: readonly string[]): Promise<DerivedFiles | null> {
    const files: string[] = [];
    let bytes = 0;
    let newest = 0;
    for (const relative of candidates) {
      const info = await stat(join(this.#root, relative)).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null;
        throw error;
      });
      if (info === null || !info.isFile()) continue;
      files.push(relative);
      bytes += info.size;
      newest = Math.max(newest, info.mtimeMs);
    }
    return files.length === 0 ? null : { files, bytes, modifiedAt: new Date(newest) };
  }

  /** Every thumbnailed hash of the three size folders, sorted, with its files in size then extension order. */
  async #listing(): Promise<{ hashes: string[]; files: Map<string, string[]> }> {
    const files = new Map<string, string[]>();
    for (const size of THUMBNAIL_SIZES) {
      const names = await namesIn(join(this.#root, THUMBNAILS_DIR, size));
      const here = new Set(names);
      for (const name of names) {
        const hash = thumbnailHashOf(name);
        if (hash === null) continue;
        // Once per hash and size, in THUMBNAIL_EXTENSIONS order, as stat() would find them.
        if (!files.has(hash)) files.set(hash, []);
        const list = files.get(hash) as string[];
        for (const ext of THUMBNAIL_EXTENSIONS) {
          const relative = join(THUMBNAILS_DIR, size, `${hash}.${ext}`);
          if (here.has(`${hash}.${ext}`) && !list.includes(relative)) list.push(relative);
        }
      }
    }
    return { hashes: [...files.keys()].sort(), files };
  }

  /** Every file id of the three size folders' `ext-` thumbnails and of `.transcoded/webp`, sorted, with its files. */
  async #fileIdListing(): Promise<{ ids: string[]; files: Map<string, FileIdFiles> }> {
    const files = new Map<string, FileIdFiles>();
    const of = (fileId: string): FileIdFiles => {
      let entry = files.get(fileId);
      if (entry === undefined) {
        entry = { external: [], transcoded: [] };
        files.set(fileId, entry);
      }
      return entry;
    };
    for (const size of THUMBNAIL_SIZES) {
      for (const name of await namesIn(join(this.#root, THUMBNAILS_DIR, size))) {
        const fileId = externalThumbnailFileIdOf(name);
        if (fileId !== null) of(fileId).external.push(join(THUMBNAILS_DIR, size, name));
      }
    }
    const transcoded = join(TRANSCODED_DIR, TRANSCODED_FORMAT);
    // Sorted, so the image comes before its marker (`<id>.webp` < `<id>.webp.skip`), as statByFileId lists them.
    for (const name of (await namesIn(join(this.#root, transcoded))).sort()) {
      const fileId = transcodedFileIdOf(name);
      if (fileId !== null) of(fileId).transcoded.push(join(transcoded, name));
    }
    return { ids: [...files.keys()].sort(), files };
  }
}
