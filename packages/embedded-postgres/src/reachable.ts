import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { EmbeddedPostgresError } from './embedded-postgres-error.js';
import type { SystemUser } from './system-user.js';

/** A folder a user cannot enter, with its mode (for the message). */
export interface BlockedFolder {
  readonly folder: string;
  readonly mode: string;
}

function mayEnter(st: { uid: number; gid: number; mode: number }, user: SystemUser): boolean {
  if (st.uid === user.uid) return (st.mode & 0o100) !== 0;
  if (st.gid === user.gid) return (st.mode & 0o010) !== 0;
  return (st.mode & 0o001) !== 0;
}

/**
 * The first folder from `/` down to `path` (inclusive when it is a folder)
 * that `user` may not enter (no search permission by owner, group or other;
 * ACLs and supplementary groups are not read), or `undefined` when every
 * folder lets it through. Folders that do not exist yet end the walk.
 */
export async function firstBlockedFolder(path: string, user: SystemUser): Promise<BlockedFolder | undefined> {
  const chain: string[] = [];
  for (let at = resolve(path); ; at = dirname(at)) {
    chain.unshift(at);
    if (dirname(at) === at) break;
  }
  for (const folder of chain) {
    let st: Awaited<ReturnType<typeof stat>>;
    try {
      st = await stat(folder);
    } catch {
      return undefined;
    }
    if (!st.isDirectory()) return undefined;
    if (!mayEnter(st, user)) return { folder, mode: (st.mode & 0o7777).toString(8).padStart(4, '0') };
  }
  return undefined;
}

/**
 * Throws when `user` cannot enter every folder down to `path`.
 *
 * @param what what the folder is, for the message (e.g. "the data folder").
 * @param fix the alternative to name besides `chmod o+x`.
 * @throws EmbeddedPostgresError `UNREACHABLE` naming the folder, its mode and the fix.
 */
export async function assertReachable(
  path: string,
  user: SystemUser | undefined,
  what: string,
  fix: string,
): Promise<void> {
  if (user === undefined) return;
  const blocked = await firstBlockedFolder(path, user);
  if (blocked === undefined) return;
  throw new EmbeddedPostgresError(
    'UNREACHABLE',
    `running as root, Postgres runs as the "postgres" system user, which cannot enter ${blocked.folder} (mode ${blocked.mode}) on the way to ${what} ${path}; ` +
      `run chmod o+x ${blocked.folder}, or ${fix}`,
  );
}
