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
  #walk: string[] | null = null;

  /** @param root OxiCloud's storage root (`OXICLOUD_STORAGE_PATH`), the folder that holds `.thumbnails`. */
  constructor(root: string) {
    this.#root = root;
  }

  async list(options: {
    readonly startAfter: string | null;
    readonly limit: number;
  }): Promise<ThumbnailEntry[]> {
    if (options.startAfter === null || this.#walk === null) this.#walk = await this.#hashes();
    const hashes = this.#walk;
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
      const entry = await this.stat(hash);
      if (entry !== null) out.push(entry);
    }
    return out;
  }

  async stat(hash: string): Promise<ThumbnailEntry | null> {
    const files: string[] = [];
    let bytes = 0;
    let newest = 0;
    for (const size of THUMBNAIL_SIZES) {
      for (const ext of THUMBNAIL_EXTENSIONS) {
        const relative = join(THUMBNAILS_DIR, size, `${hash}.${ext}`);
        const info = await stat(join(this.#root, relative)).catch((error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null;
          throw error;
        });
        if (info === null || !info.isFile()) continue;
        files.push(relative);
        bytes += info.size;
        newest = Math.max(newest, info.mtimeMs);
      }
    }
    return files.length === 0 ? null : { hash, files, bytes, modifiedAt: new Date(newest) };
  }

  /** Every thumbnailed hash of the three size folders, sorted, once each. */
  async #hashes(): Promise<string[]> {
    const found = new Set<string>();
    for (const size of THUMBNAIL_SIZES) {
      const names = await readdir(join(this.#root, THUMBNAILS_DIR, size)).catch(
        (error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return [] as string[];
          throw error;
        },
      );
      for (const name of names) {
        const hash = thumbnailHashOf(name);
        if (hash !== null) found.add(hash);
      }
    }
    return [...found].sort();
  }
}
