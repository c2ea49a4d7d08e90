import { readdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { localBlobsDir } from '@oxicloud/storage';

/** Whether `dir` exists, and its sub-folders when it does. */
async function subFolders(dir: string): Promise<{ exists: boolean; dirs: Set<string> }> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return { exists: true, dirs: new Set(entries.filter((e) => e.isDirectory()).map((e) => e.name)) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { exists: false, dirs: new Set() };
    throw error;
  }
}

/** Removes `dir` when it is empty; `false` when it holds something (or is gone). */
async function removeIfEmpty(dir: string): Promise<boolean> {
  try {
    await rmdir(dir);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOENT') return false;
    throw error;
  }
}

/** What {@link recordBlobDirs} returns: the step that undoes the folders made since. */
export interface NewBlobDirs {
  /** Removes the empty folders made since the record: prefix folders, then `.blobs`, then the root. */
  removeEmpty(): Promise<number>;
}

/**
 * Records the blob folders of a local storage root (`<root>/.blobs/<aa>/`),
 * so a failed `oxijobs seed` can remove the ones it made: its rows roll back
 * and the bytes no row describes are deleted, and this removes the
 * then-empty prefix folders too, `.blobs` and the root if the seed made
 * them. A folder that holds anything is kept, and nothing else under the
 * root (`.thumbnails`, …) is looked at.
 */
export async function recordBlobDirs(root: string): Promise<NewBlobDirs> {
  const blobsDir = localBlobsDir(root);
  const rootBefore = await subFolders(root);
  const before = await subFolders(blobsDir);
  return {
    async removeEmpty() {
      const now = await subFolders(blobsDir);
      let removed = 0;
      for (const dir of now.dirs) {
        if (!before.dirs.has(dir) && (await removeIfEmpty(join(blobsDir, dir)))) removed += 1;
      }
      if (now.exists && !before.exists && (await removeIfEmpty(blobsDir))) removed += 1;
      if (!rootBefore.exists && (await removeIfEmpty(root))) removed += 1;
      return removed;
    },
  };
}
