import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  initCluster,
  PostgresProcess,
  postgresBinaries,
  postgresSystemUser,
} from '@oxicloud/embedded-postgres';
import { migrate } from '@oxicloud/migrations';
import pg from 'pg';
import { freePort } from './fault-support.js';

/**
 * A Postgres of the test's own (embedded-postgres binaries, a separate
 * process) it can stop, crash and start again, with one database `name`.
 */
export async function ownPostgres(dir: string, options: { name: string; flags?: readonly string[] }) {
  const runAs = await postgresSystemUser({ create: true });
  const binaries = await postgresBinaries({ runAs });
  const port = await freePort();
  const parent = join(dir, 'pg');
  mkdirSync(parent, { recursive: true });
  chmodSync(parent, 0o755);
  const dataDir = join(parent, 'data');
  await initCluster({ binaries, dataDir, user: 'postgres', password: 'postgres', runAs });
  const server = new PostgresProcess({
    binaries,
    dataDir,
    port,
    flags: ['-c', 'max_connections=100', ...(options.flags ?? ['-c', 'fsync=off'])],
    runAs,
  });
  await server.start();
  const admin = new pg.Client({
    connectionString: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
  });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(options.name)}`);
  } finally {
    await admin.end();
  }
  const url = `postgres://postgres:postgres@127.0.0.1:${port}/${options.name}`;
  // The database of the engine's own: what `oxijobs migrate --create-storage-domain` makes of an empty one.
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    const result = await migrate(pool);
    if (result.error) throw result.error;
  } finally {
    await pool.end();
  }
  return {
    url,
    server,
    /**
     * What `pg_ctl stop -m immediate` does (SIGQUIT to the postmaster; pg_ctl
     * itself refuses to run as root): every backend dies at once, nothing is
     * flushed, the next start runs crash recovery from the WAL on disk.
     */
    async crash(): Promise<void> {
      if (server.child === undefined) throw new Error('the test Postgres is not running');
      await server.crash();
    },
  };
}
