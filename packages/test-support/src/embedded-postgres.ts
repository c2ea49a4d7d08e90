import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  initCluster,
  PostgresProcess,
  postgresBinaries,
  postgresSystemUser,
} from '@oxicloud/embedded-postgres';
import { freePort } from './free-port.js';
import { SERVER_FLAGS } from './server-flags.js';

/** A running embedded Postgres (real binaries from the `embedded-postgres` packages). */
export interface EmbeddedPostgres {
  readonly adminUrl: string;
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * Starts an embedded Postgres on a free loopback port in a temporary folder
 * (as root: as the `postgres` system user, from binaries it can reach).
 */
export async function startEmbeddedPostgres(): Promise<EmbeddedPostgres> {
  const runAs = await postgresSystemUser({ create: true });
  const binaries = await postgresBinaries({ runAs });
  const port = await freePort();
  const parent = join(tmpdir(), `oxicloud-test-pg-${process.pid}-${port}`);
  mkdirSync(parent, { recursive: true });
  chmodSync(parent, 0o755);
  const dataDir = join(parent, 'data');
  await initCluster({
    binaries,
    dataDir,
    user: 'postgres',
    password: 'postgres',
    runAs,
    unreachableFix: 'set TMPDIR to a folder it can reach',
  });
  const postgres = new PostgresProcess({ binaries, dataDir, port, flags: SERVER_FLAGS, runAs });
  await postgres.start();
  return {
    adminUrl: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: async () => {
      await postgres.stop().catch(() => undefined);
      rmSync(parent, { recursive: true, force: true });
    },
  };
}
