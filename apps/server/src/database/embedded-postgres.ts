import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  EmbeddedPostgresError,
  initCluster,
  postgresBinaries,
  postgresSystemUser,
} from '@oxicloud/embedded-postgres';
import type { Logger } from '@oxicloud/scheduler';
import pg from 'pg';
import type { ServerConfig } from '../config/server-config.js';
import { SERVER_TARGET } from '../logger.js';
import { ServerError } from '../server-error.js';
import { startPostmaster, UNREACHABLE_FIX } from './postmaster.js';

/** The database the server uses inside the embedded cluster. */
export const EMBEDDED_DATABASE = 'oxicloud';
/** The superuser of the embedded cluster. */
export const EMBEDDED_USER = 'postgres';
/** File (mode 0600) holding the superuser password generated at initdb. */
export const EMBEDDED_PASSWORD_FILE = 'postgres-password';

/** An embedded Postgres this process uses: started by it (`owned`) or found running (a server's). */
export interface EmbeddedPostgresHandle {
  /** URL of the `oxicloud` database. */
  readonly url: string;
  /** `true` when this process started the cluster and stops it in {@link stop}. */
  readonly owned: boolean;
  /** Stops the cluster when owned; a no-op otherwise. */
  stop(): Promise<void>;
  /**
   * Asks an owned cluster to stop now (SIGINT: fast shutdown) without
   * waiting, for a forced exit; a no-op otherwise.
   */
  stopNow(): void;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

function urlFor(port: number, password: string): string {
  return `postgres://${EMBEDDED_USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${EMBEDDED_DATABASE}`;
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid in `postmaster.pid` when that process is alive, else `undefined` (no file, or stale). */
async function postmasterPid(config: ServerConfig): Promise<number | undefined> {
  let text: string;
  try {
    text = await readFile(join(config.postgresDir, 'postmaster.pid'), 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number(text.split('\n')[0]);
  return Number.isSafeInteger(pid) && pid > 0 && alive(pid) ? pid : undefined;
}

/**
 * Whether a server's embedded Postgres is running on this data dir: its
 * `postmaster.pid` names a live process AND the `oxicloud` database answers
 * on the configured port. While the cluster is still starting (or the server
 * has not created the database yet) it keeps asking for up to `waitMs`.
 *
 * @throws ServerError `DATABASE_UNAVAILABLE` when a live cluster never answers on the port.
 */
export async function runningEmbeddedPostgres(
  config: ServerConfig,
  waitMs = 15_000,
): Promise<string | undefined> {
  const pid = await postmasterPid(config);
  if (pid === undefined) return undefined;
  const deadline = Date.now() + waitMs;
  for (;;) {
    const password = await readPassword(config);
    const url = password === undefined ? undefined : urlFor(config.embeddedPostgresPort, password);
    if (url !== undefined && (await answers(url))) return url;
    if (!alive(pid)) return undefined;
    if (Date.now() >= deadline) {
      throw new ServerError(
        'DATABASE_UNAVAILABLE',
        `a Postgres (pid ${pid}) runs on ${config.postgresDir} but its "${EMBEDDED_DATABASE}" database does not answer on ` +
          `127.0.0.1:${config.embeddedPostgresPort}; set OXICLOUD_EMBEDDED_POSTGRES_PORT to the port the server uses`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function readPassword(config: ServerConfig): Promise<string | undefined> {
  try {
    return (await readFile(join(config.dataDir, EMBEDDED_PASSWORD_FILE), 'utf8')).trim();
  } catch {
    return undefined;
  }
}

/**
 * Uses the embedded Postgres of `config.dataDir`: reuses the one a server
 * already runs there, else initialises the cluster when the folder is new
 * (persistent; as root with a `postgres` system user and a 0755 parent),
 * starts it on 127.0.0.1:`embeddedPostgresPort` and creates the `oxicloud`
 * database when missing.
 */
export async function startOrReuseEmbeddedPostgres(
  config: ServerConfig,
  logger: Logger,
): Promise<EmbeddedPostgresHandle> {
  const port = config.embeddedPostgresPort;
  const running = await runningEmbeddedPostgres(config);
  if (running) {
    logger.info(
      { target: SERVER_TARGET, event: 'database.embedded_reused', port, data_dir: config.postgresDir },
      `using the running embedded Postgres on 127.0.0.1:${port}`,
    );
    return { url: running, owned: false, stop: async () => undefined, stopNow: () => undefined };
  }

  const isRoot = process.getuid?.() === 0;
  await mkdir(config.dataDir, { recursive: true });
  // As root, postgres runs as the `postgres` user, which must be able to enter the parent folder.
  if (isRoot) await chmod(config.dataDir, 0o755);
  const initialised = await exists(join(config.postgresDir, 'PG_VERSION'));
  if (!initialised && (await exists(config.postgresDir)) && (await readdir(config.postgresDir)).length > 0) {
    throw new ServerError(
      'DATABASE_UNAVAILABLE',
      `${config.postgresDir} exists but holds no Postgres cluster (no PG_VERSION); empty it or point OXICLOUD_DATA_DIR elsewhere`,
    );
  }
  let password = await readPassword(config);
  if (!initialised && password === undefined) {
    password = randomBytes(18).toString('base64url');
    await writeFile(join(config.dataDir, EMBEDDED_PASSWORD_FILE), `${password}\n`, { mode: 0o600 });
  }
  if (password === undefined) {
    throw new ServerError(
      'DATABASE_UNAVAILABLE',
      `${join(config.dataDir, EMBEDDED_PASSWORD_FILE)} is missing for the existing cluster in ${config.postgresDir}; restore it or start over with an empty OXICLOUD_DATA_DIR`,
    );
  }

  if (!initialised) {
    logger.info(
      { target: SERVER_TARGET, event: 'database.embedded_initialise', data_dir: config.postgresDir },
      `initialising the embedded Postgres in ${config.postgresDir}`,
    );
    try {
      const runAs = await postgresSystemUser({ create: true });
      await initCluster({
        binaries: await postgresBinaries({ runAs }),
        dataDir: config.postgresDir,
        user: EMBEDDED_USER,
        password,
        runAs,
        unreachableFix: UNREACHABLE_FIX,
      });
    } catch (cause) {
      if (!(cause instanceof EmbeddedPostgresError)) throw cause;
      throw new ServerError('DATABASE_UNAVAILABLE', cause.message, { cause });
    }
  }
  // pg_ctl starts the postmaster in its own session: a Ctrl-C on the terminal
  // (SIGINT to the foreground process group) does not reach it, and the
  // server stops it itself after its runs are paused.
  const postmaster = await startPostmaster(config, port);
  const admin = new pg.Client({ connectionString: urlFor(port, password).replace(/\/[^/]+$/, '/postgres') });
  try {
    await admin.connect();
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [EMBEDDED_DATABASE]);
    if (found.rowCount === 0) await admin.query(`CREATE DATABASE ${EMBEDDED_DATABASE}`);
  } finally {
    await admin.end().catch(() => undefined);
  }
  logger.info(
    { target: SERVER_TARGET, event: 'database.embedded_started', port, data_dir: config.postgresDir },
    `embedded Postgres started on 127.0.0.1:${port}`,
  );
  let stopped = false;
  return {
    url: urlFor(port, password),
    owned: true,
    async stop() {
      if (stopped) return;
      stopped = true;
      await postmaster.stop();
      logger.info(
        { target: SERVER_TARGET, event: 'database.embedded_stopped', port },
        'embedded Postgres stopped',
      );
    },
    stopNow() {
      if (stopped) return;
      stopped = true;
      postmaster.stopNow();
    },
  };
}
