import type { Logger } from '@oxicloud/scheduler';
import pg from 'pg';
import type { ServerConfig } from '../config/server-config.js';
import { SERVER_TARGET } from '../logger.js';
import { ServerError } from '../server-error.js';
import { startOrReuseEmbeddedPostgres } from './embedded-postgres.js';

/** Which database a process ended up on. */
export type DatabaseSource = 'DATABASE_URL' | 'embedded' | 'embedded (reused)';

/** A pool on the chosen database, and how to let go of it. */
export interface OpenDatabase {
  readonly pool: pg.Pool;
  readonly url: string;
  readonly source: DatabaseSource;
  /**
   * Closes the pool and waits (up to 2 s) for its sockets to close; the
   * embedded Postgres keeps running. Idempotent.
   */
  closePool(): Promise<void>;
  /** {@link closePool}, then stops the embedded Postgres when this process started it. */
  close(): Promise<void>;
  /** For a forced exit: asks an embedded Postgres this process started to stop, without waiting. */
  stopNow(): void;
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}

/** `lock_timeout` of every connection to a database given as `DATABASE_URL` (one the engine may share with OxiCloud). */
export const EXTERNAL_LOCK_TIMEOUT_MS = 5_000;

/**
 * Opens the database every command uses, in this order: `DATABASE_URL` when
 * set; else the embedded Postgres under the data dir, reusing the server's
 * when it runs, starting (and on {@link OpenDatabase.close} stopping) it
 * otherwise. The first connection is checked so a wrong URL fails here, with
 * a message that names it.
 */
export async function openDatabase(
  config: ServerConfig,
  logger: Logger,
  options: { readonly max?: number } = {},
): Promise<OpenDatabase> {
  let url: string;
  let source: DatabaseSource;
  let stopEmbedded: () => Promise<void> = async () => undefined;
  let stopEmbeddedNow: () => void = () => undefined;
  if (config.databaseUrl !== undefined) {
    url = config.databaseUrl;
    source = 'DATABASE_URL';
  } else {
    const embedded = await startOrReuseEmbeddedPostgres(config, logger);
    url = embedded.url;
    source = embedded.owned ? 'embedded' : 'embedded (reused)';
    stopEmbedded = () => embedded.stop();
    stopEmbeddedNow = () => embedded.stopNow();
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    // A database the engine shares (beside OxiCloud): no statement of the engine's waits long for a
    // lock, so OxiCloud's own migrations at its boot never queue behind a scan (the batch is retried).
    ...(source === 'DATABASE_URL' ? { lock_timeout: EXTERNAL_LOCK_TIMEOUT_MS } : {}),
  });
  // An idle client losing its connection (Postgres restarted) emits here; without a listener the process dies.
  pool.on('error', (error) => {
    logger.warn(
      { target: SERVER_TARGET, event: 'database.connection_lost', error: error.message },
      'a pooled database connection was lost; it will be replaced on the next query',
    );
  });
  // A CHECKED-OUT client (kysely holds one per query or transaction) has no pool listener: losing its
  // connection would emit an unhandled 'error' and kill the process. Its query rejects anyway; log only.
  const open = new Set<pg.PoolClient>();
  pool.on('connect', (client) => {
    open.add(client);
    client.on('end', () => open.delete(client));
    client.on('error', (error) => {
      logger.warn(
        { target: SERVER_TARGET, event: 'database.connection_lost', error: error.message, checked_out: true },
        'a database connection in use was lost; its query fails and the connection is replaced',
      );
    });
  });
  try {
    await pool.query('SELECT 1');
  } catch (cause) {
    await pool.end().catch(() => undefined);
    await stopEmbedded().catch(() => undefined);
    const where =
      source === 'DATABASE_URL' ? `DATABASE_URL (${redact(url)})` : `the embedded Postgres (${redact(url)})`;
    throw new ServerError('DATABASE_UNAVAILABLE', `cannot connect to ${where}: ${(cause as Error).message}`, {
      cause,
    });
  }
  logger.info(
    { target: SERVER_TARGET, event: 'database.connected', source, url: redact(url) },
    `database: ${source} (${redact(url)})`,
  );
  let poolClosed: Promise<void> | undefined;
  const closePool = () => {
    poolClosed ??= (async () => {
      await pool.end().catch(() => undefined);
      // pool.end() resolves once it has asked each client to close, not when the
      // sockets are closed: wait (briefly) so stopping Postgres cuts no connection.
      const deadline = Date.now() + 2_000;
      while (open.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    })();
    return poolClosed;
  };
  return {
    pool,
    url,
    source,
    closePool,
    async close() {
      await closePool();
      await stopEmbedded();
    },
    stopNow: () => stopEmbeddedNow(),
  };
}
