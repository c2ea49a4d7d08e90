import { chmod, cp, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { arch, platform } from 'node:os';
import { dirname, join } from 'node:path';
import { EmbeddedPostgresError } from './embedded-postgres-error.js';
import { firstBlockedFolder } from './reachable.js';
import type { SystemUser } from './system-user.js';

/** Absolute paths of the Postgres programs this package runs. */
export interface PostgresBinaries {
  readonly initdb: string;
  readonly pg_ctl: string;
  readonly postgres: string;
  /** The `native` folder they are in (`bin/`, `lib/`, `share/`). */
  readonly nativeDir: string;
  /** `true` when they were copied out of node_modules for the Postgres user to reach them. */
  readonly copied: boolean;
}

/** Where copies of the binaries go by default: kept across reboots, writable by root, enterable by all. */
export const DEFAULT_BINARIES_CACHE = '/var/tmp';

const COMPLETE_MARKER = '.oxicloud-complete';

async function installedBinaries(): Promise<{ initdb: string; pg_ctl: string; postgres: string }> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  try {
    return (await import(name)) as { initdb: string; pg_ctl: string; postgres: string };
  } catch (cause) {
    throw new EmbeddedPostgresError(
      'UNSUPPORTED_PLATFORM',
      `no embedded Postgres binaries for ${platform()}-${arch()} (${name} is not installed); set DATABASE_URL to use a Postgres of your own`,
      { cause },
    );
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function copyOnce(nativeDir: string, target: string): Promise<void> {
  if (await exists(join(target, COMPLETE_MARKER))) return;
  await mkdir(dirname(target), { recursive: true });
  const staging = `${target}.partial-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await cp(nativeDir, staging, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
  await chmod(staging, 0o755);
  await writeFile(join(staging, COMPLETE_MARKER), `${nativeDir}\n`);
  await rm(target, { recursive: true, force: true }); // an earlier copy cut short (no marker)
  try {
    await rename(staging, target);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    // another process renamed its complete copy first
    if (!(await exists(join(target, COMPLETE_MARKER)))) throw error;
  }
}

/**
 * The embedded-postgres binaries, from where `runAs` can execute them. As
 * root, Postgres runs as the `postgres` system user, which cannot execute
 * them inside a checkout under a folder only root may enter (a `mktemp -d`
 * folder is 0700): then the `native` folder is copied once per version to
 * `<cacheRoot>/oxicloud-embedded-postgres-<version>-<platform>-<arch>` and
 * run from there.
 *
 * @throws EmbeddedPostgresError `UNSUPPORTED_PLATFORM` without binaries for this machine,
 *   `UNREACHABLE` when the copy is not reachable either.
 */
export async function postgresBinaries(
  options: {
    runAs?: SystemUser | undefined;
    cacheRoot?: string;
    /** The programs to start from; default: those of `@embedded-postgres/<platform>-<arch>`. */
    installed?: { initdb: string; pg_ctl: string; postgres: string };
  } = {},
): Promise<PostgresBinaries> {
  const installed = options.installed ?? (await installedBinaries());
  const nativeDir = dirname(dirname(installed.initdb));
  const found = { ...installed, nativeDir, copied: false };
  if (options.runAs === undefined) return found;
  if ((await firstBlockedFolder(dirname(installed.initdb), options.runAs)) === undefined) return found;

  const manifest = JSON.parse(
    await readFile(join(nativeDir, '..', 'package.json'), 'utf8').catch(() => '{}'),
  ) as { version?: string };
  const cacheRoot = options.cacheRoot ?? DEFAULT_BINARIES_CACHE;
  const target = join(
    cacheRoot,
    `oxicloud-embedded-postgres-${manifest.version ?? 'unknown'}-${platform()}-${arch()}`,
  );
  await copyOnce(nativeDir, target);
  const blocked = await firstBlockedFolder(join(target, 'bin'), options.runAs);
  if (blocked !== undefined) {
    throw new EmbeddedPostgresError(
      'UNREACHABLE',
      `the Postgres user (uid ${options.runAs.uid}) cannot enter ${blocked.folder} (mode ${blocked.mode}), where the Postgres binaries were copied; make it enterable (chmod o+x ${blocked.folder})`,
    );
  }
  const at = (program: string) => join(target, 'bin', program);
  return {
    initdb: at('initdb'),
    pg_ctl: at('pg_ctl'),
    postgres: at('postgres'),
    nativeDir: target,
    copied: true,
  };
}
