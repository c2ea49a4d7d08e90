import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServerConfig } from '../config/server-config.js';
import { ServerError } from '../server-error.js';

/** File name of the generated secret inside the data dir. */
export const JWT_SECRET_FILE = 'jwt-secret';

/** OxiCloud keeps its generated session secret here, under its storage root (when `OXICLOUD_JWT_SECRET` is unset). */
export const OXICLOUD_JWT_SECRET_FILE = '.jwt_secret';

/** The secret admin tokens are signed with, and where it came from. */
export interface JwtSecret {
  readonly secret: string;
  readonly source: 'OXIJOBS_JWT_SECRET' | 'file' | 'generated';
  /** The file, for `file` and `generated`. */
  readonly path?: string;
}

/**
 * The engine's own token secret: `OXIJOBS_JWT_SECRET` when set; otherwise
 * (never in production, the config refuses that) the secret kept in
 * `<data dir>/jwt-secret` (mode 0600), generated on first use. Never
 * OxiCloud's `OXICLOUD_JWT_SECRET` (the config refuses the same value), and
 * never the session secret OxiCloud keeps in `<its storage root>/.jwt_secret`
 * when the engine is pointed at that root (`OXICLOUD_STORAGE_PATH` or
 * `OXIJOBS_OXICLOUD_WORKDIR`): the same value there is a `BAD_CONFIG` error.
 * `serve` and `token` call this, so a token minted by `token` verifies on
 * the server.
 */
export async function resolveJwtSecret(config: ServerConfig): Promise<JwtSecret> {
  const resolved = await engineSecret(config);
  await refuseOxiCloudSessionSecret(config, resolved);
  return resolved;
}

/**
 * Refuses a secret that is the one OxiCloud keeps in `<storage root>/.jwt_secret`
 * (OxiCloud trims it when it reads it). The root is OxiCloud's only when
 * named (`createLocalRoot` false); a file that cannot be read is no match.
 */
async function refuseOxiCloudSessionSecret(config: ServerConfig, resolved: JwtSecret): Promise<void> {
  if (config.backends.createLocalRoot) return;
  const path = join(config.backends.localRoot, OXICLOUD_JWT_SECRET_FILE);
  let oxicloud: string;
  try {
    oxicloud = (await readFile(path, 'utf8')).trim();
  } catch {
    return;
  }
  if (oxicloud !== '' && oxicloud === resolved.secret.trim()) {
    throw new ServerError(
      'BAD_CONFIG',
      `the engine's token secret (${resolved.source === 'OXIJOBS_JWT_SECRET' ? 'OXIJOBS_JWT_SECRET' : resolved.path}) is OxiCloud's session secret in ${path}: ` +
        "the engine signs its admin tokens with a secret of its own, never OxiCloud's; give it another one (e.g. `openssl rand -hex 32`)",
    );
  }
}

async function engineSecret(config: ServerConfig): Promise<JwtSecret> {
  if (config.jwtSecret !== undefined) return { secret: config.jwtSecret, source: 'OXIJOBS_JWT_SECRET' };
  const path = join(config.dataDir, JWT_SECRET_FILE);
  const read = async (): Promise<string | undefined> => {
    try {
      return (await readFile(path, 'utf8')).trim();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new ServerError(
        'BAD_CONFIG',
        `cannot read the JWT secret file ${path}: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
  };
  const existing = await read();
  if (existing !== undefined) {
    if (existing.length < 32) {
      throw new ServerError(
        'BAD_CONFIG',
        `the JWT secret in ${path} is shorter than 32 characters; delete the file to generate a new one or set OXIJOBS_JWT_SECRET`,
      );
    }
    return { secret: existing, source: 'file', path };
  }
  await mkdir(config.dataDir, { recursive: true });
  const secret = randomBytes(32).toString('hex');
  try {
    await writeFile(path, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      const theirs = await read();
      if (theirs) return { secret: theirs, source: 'file', path };
    }
    throw new ServerError(
      'BAD_CONFIG',
      `cannot write the JWT secret file ${path}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  return { secret, source: 'generated', path };
}
