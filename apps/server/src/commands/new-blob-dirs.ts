import { readdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';

/** The folders under a local blob root, two levels deep (`ab`, `ab/cd`), and whether the root exists. */
async function blobDirs(root: string): Promise<{ exists: boolean; dirs: Set<string> }> {
  const dirs = new Set<string>();
  let first: string[];
  try {
    first = (await readdir(root, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { exists: false, dirs };
    throw error;
  }
  for (const name of first) {
    dirs.add(name);
    const entries = await readdir(join(root, name), { withFileTypes: true }).catch(() => []);
    for (const e of entries) if (e.isDirectory()) dirs.add(join(name, e.name));
  }
  return { exists: true, dirs };
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
  /** Removes the empty folders made under the root since the record (and the root, if it was made). */
  removeEmpty(): Promise<number>;
}

/**
 * Records the folders of a local blob root (`<root>/ab/cd/<hash>`), so a
 * failed `oxijobs seed` can remove the ones it made: its rows roll back and
 * the bytes no row describes are deleted, and this removes the then-empty
 * shard folders too. A folder that holds anything is kept.
 */
export async function recordBlobDirs(root: string): Promise<NewBlobDirs> {
  const before = await blobDirs(root);
  return {
    async removeEmpty() {
      const now = await blobDirs(root);
      if (!now.exists) return 0;
      const made = [...now.dirs].filter((d) => !before.dirs.has(d));
      // Deepest first: a shard's parent is empty only once its shards are gone.
      made.sort((a, b) => b.split(/[\\/]/).length - a.split(/[\\/]/).length);
      let removed = 0;
      for (const dir of made) if (await removeIfEmpty(join(root, dir))) removed += 1;
      if (!before.exists && (await removeIfEmpty(root))) removed += 1;
      return removed;
    },
  };
}
