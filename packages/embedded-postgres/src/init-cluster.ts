import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chown, mkdir, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { PostgresBinaries } from './binaries.js';
import { EmbeddedPostgresError } from './embedded-postgres-error.js';
import { messagesLocale } from './locale.js';
import { assertReachable } from './reachable.js';
import type { SystemUser } from './system-user.js';

/** What {@link initCluster} needs. */
export interface InitClusterOptions {
  readonly binaries: PostgresBinaries;
  /** The cluster's folder: created, must be missing or empty. */
  readonly dataDir: string;
  /** The superuser initdb creates, and its password (password authentication). */
  readonly user: string;
  readonly password: string;
  /** Who Postgres runs as (from `postgresSystemUser`); `undefined` for this process's user. */
  readonly runAs: SystemUser | undefined;
  /** What to say besides `chmod o+x` when the data folder is out of the Postgres user's reach. */
  readonly unreachableFix?: string;
}

/**
 * Runs initdb for a new cluster in `dataDir`, as `runAs` (password auth, the
 * given superuser). The password goes through a 0600 file beside the data
 * folder, removed afterwards whatever initdb did.
 *
 * @throws EmbeddedPostgresError `UNREACHABLE` (the Postgres user cannot reach the folder), `INITDB_FAILED`.
 */
export async function initCluster(options: InitClusterOptions): Promise<void> {
  const { binaries, dataDir, runAs } = options;
  const parent = dirname(dataDir);
  await mkdir(parent, { recursive: true });
  await assertReachable(
    parent,
    runAs,
    'the data folder',
    options.unreachableFix ?? 'choose a data folder it can reach',
  );
  await mkdir(dataDir, { recursive: true });
  const passwordFile = join(parent, `.pg-password-${randomBytes(6).toString('hex')}`);
  await writeFile(passwordFile, `${options.password}\n`, { mode: 0o600 });
  if (runAs !== undefined) {
    await chown(dataDir, runAs.uid, runAs.gid);
    await chown(passwordFile, runAs.uid, runAs.gid);
  }
  const locale = messagesLocale();
  try {
    await new Promise<void>((resolve, reject) => {
      execFile(
        binaries.initdb,
        [
          `--pgdata=${dataDir}`,
          '--auth=password',
          `--username=${options.user}`,
          `--pwfile=${passwordFile}`,
          `--lc-messages=${locale}`,
        ],
        { cwd: parent, env: { ...process.env, LC_MESSAGES: locale }, ...runAs },
        (error, stdout, stderr) => {
          if (!error) return resolve();
          const output = `${stdout}${stderr}`.replace(/\s+/g, ' ').trim().slice(-800);
          reject(
            new EmbeddedPostgresError(
              'INITDB_FAILED',
              `initdb failed in ${dataDir}: ${output || error.message}`,
              {
                cause: error,
              },
            ),
          );
        },
      );
    });
  } finally {
    await unlink(passwordFile).catch(() => undefined);
  }
}
