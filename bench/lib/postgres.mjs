// The Postgres server of a bench run: DATABASE_URL (an admin URL on which the
// harness may CREATE DATABASE) or an embedded Postgres started here.
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';

/** Settings of the embedded server: defaults except memory for a 1M-row working set. */
export const EMBEDDED_POSTGRES_FLAGS = [
  '-c',
  'shared_buffers=1GB',
  '-c',
  'max_wal_size=8GB',
  '-c',
  'max_connections=300',
];

export async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

/**
 * Starts (or points at) the server; returns `{ adminUrl, description, stop }`.
 * `extraFlags` (`['-c', 'name=value', …]`) apply to the embedded server only, and so does
 * `onLog` (each line the server writes; dropped by default).
 */
export async function startPostgres(workDir, { extraFlags = [], onLog = () => undefined } = {}) {
  const url = process.env['DATABASE_URL'];
  if (url) {
    return {
      adminUrl: url,
      description: `DATABASE_URL (${new URL(url).host})`,
      flags: '(as configured)',
      stop: async () => undefined,
    };
  }
  const { initCluster, PostgresProcess, postgresBinaries, postgresSystemUser } = await import(
    '@oxicloud/embedded-postgres'
  );
  const runAs = await postgresSystemUser({ create: true });
  const binaries = await postgresBinaries({ runAs });
  const port = await freePort();
  const parent = join(workDir, 'postgres');
  rmSync(parent, { recursive: true, force: true });
  mkdirSync(parent, { recursive: true });
  chmodSync(parent, 0o755);
  const dataDir = join(parent, 'data');
  await initCluster({ binaries, dataDir, user: 'postgres', password: 'postgres', runAs });
  const server = new PostgresProcess({
    binaries,
    dataDir,
    port,
    flags: [...EMBEDDED_POSTGRES_FLAGS, ...extraFlags],
    runAs,
    onLog: (text) => {
      for (const line of text.split('\n')) if (line) onLog(line);
    },
  });
  await server.start();
  return {
    adminUrl: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    description: `embedded Postgres (embedded-postgres 18.4.0-beta.17) on 127.0.0.1:${port}`,
    flags: [...EMBEDDED_POSTGRES_FLAGS, ...extraFlags].filter((f) => f !== '-c').join(' '),
    stop: async () => {
      await server.stop().catch(() => undefined);
      rmSync(parent, { recursive: true, force: true });
    },
  };
}

/** Creates (dropping first) a database and returns its URL. */
export async function createDatabase(adminUrl, name) {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

export async function serverVersion(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query('SHOW server_version');
    return rows[0].server_version;
  } finally {
    await client.end();
  }
}
