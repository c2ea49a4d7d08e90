import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { EmbeddedPostgresError } from './embedded-postgres-error.js';

const run = promisify(execFile);

/** The uid and gid a Postgres process runs as. */
export interface SystemUser {
  readonly uid: number;
  readonly gid: number;
}

/** The name of the system user Postgres runs as when this process is root. */
export const POSTGRES_SYSTEM_USER = 'postgres';

/** `true` when this process runs as root (Postgres then runs as {@link POSTGRES_SYSTEM_USER}). */
export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

async function lookUp(): Promise<SystemUser | undefined> {
  try {
    const [uid, gid] = await Promise.all([
      run('id', ['-u', POSTGRES_SYSTEM_USER]),
      run('id', ['-g', POSTGRES_SYSTEM_USER]),
    ]);
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  } catch {
    return undefined;
  }
}

/**
 * Who Postgres runs as: `undefined` (this process's own user) unless this
 * process is root; as root, the `postgres` system user, created (with its
 * group) when `create` is set and it does not exist yet.
 *
 * @throws EmbeddedPostgresError `SYSTEM_USER_FAILED` when it is missing and cannot be created.
 */
export async function postgresSystemUser(options: { create: boolean }): Promise<SystemUser | undefined> {
  if (!isRoot()) return undefined;
  const found = await lookUp();
  if (found !== undefined) return found;
  if (!options.create) {
    throw new EmbeddedPostgresError(
      'SYSTEM_USER_FAILED',
      `running as root, Postgres needs the "${POSTGRES_SYSTEM_USER}" system user, which does not exist`,
    );
  }
  try {
    await run('groupadd', ['--force', POSTGRES_SYSTEM_USER]);
    await run('useradd', ['--gid', POSTGRES_SYSTEM_USER, '--no-create-home', POSTGRES_SYSTEM_USER]);
  } catch (cause) {
    const again = await lookUp(); // another process created it meanwhile
    if (again !== undefined) return again;
    throw new EmbeddedPostgresError(
      'SYSTEM_USER_FAILED',
      `running as root, Postgres needs the "${POSTGRES_SYSTEM_USER}" system user; creating it failed: ${(cause as Error).message}`,
      { cause },
    );
  }
  const created = await lookUp();
  if (created === undefined) {
    throw new EmbeddedPostgresError(
      'SYSTEM_USER_FAILED',
      `useradd ${POSTGRES_SYSTEM_USER} ran but id does not find it`,
    );
  }
  return created;
}
