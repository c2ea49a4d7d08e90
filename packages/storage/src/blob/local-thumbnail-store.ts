import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ThumbnailEntry, ThumbnailStore } from '@oxicloud/tenants';
import {
  THUMBNAIL_EXTENSIONS,
  THUMBNAIL_SIZES,
  THUMBNAILS_DIR,
  thumbnailHashOf,
} from './thumbnail-layout.js';

/**
 * {@link ThumbnailStore} over OxiCloud's storage root on local disk: the
 * three size folders of `.thumbnails`, merged by content hash.
 *
 * A walk (a `list` from the start) reads the three folders once and keeps
 * the sorted hashes; the pages after it come from that listing, so a walk
 * costs three `readdir`s and a `stat` per listed file, not three per page.
 * A thumbnail written after the walk began is seen by the next walk. No
 * thumbnail folder means no thumbnails.
 */
export class LocalThumbnailStore implements ThumbnailStore {
  readonly #root: string;
  /** The walk's listing: each thumbnailed hash, sorted, with its files as the folders named them. */
  #walk: { hashes: string[]; files: Map<string, string[]> } | null = null;

  /** @param root OxiCloud's storage root (`OXICLOUD_STORAGE_PATH`), the folder that holds `.thumbnails`. */
  constructor(root: string) {
    this.#root = root;
  }

  async list(options: {
    readonly startAfter: string | null;
    readonly limit: number;
  }): Promise<ThumbnailEntry[]> {
    if (options.startAfter === null || this.#walk === null) this.#walk = await this.#listing();
    const { hashes, files } = this.#walk;
    let at = 0;
    if (options.startAfter !== null) {
      // The first hash after startAfter (binary search over the sorted listing).
      let hi = hashes.length;
      while (at < hi) {
        const mid = (at + hi) >>> 1;
        if ((hashes[mid] as string) <= options.startAfter) at = mid + 1;
        else hi = mid;
      }
    }
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

  /** The thumbnails of `hash` among `candidates` (paths relative to the root) that are files now. */
  async #entry(hash: string, candidates: readonly string[]): Promise<ThumbnailEntry | null> {
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
    return files.length === 0 ? null : { hash, files, bytes, modifiedAt: new Date(newest) };
  }

  /** Every thumbnailed hash of the three size folders, sorted, with its files in size then extension order. */
  async #listing(): Promise<{ hashes: string[]; files: Map<string, string[]> }> {
    const files = new Map<string, string[]>();
    for (const size of THUMBNAIL_SIZES) {
      const names = await readdir(join(this.#root, THUMBNAILS_DIR, size)).catch(
        (error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return [] as string[];
          throw error;
        },
      );
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
}
