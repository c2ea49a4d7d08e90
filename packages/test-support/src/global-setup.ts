import { startTestPostgres } from './postgres-server.js';
import { sharedPostgres } from './shared-postgres.js';
import { ADMIN_URL_ENV, prepareTemplate } from './test-database.js';

/** One server per vitest process, however many projects (the parallel and the serial files) load this setup. */
const SHARED = Symbol.for('oxicloud.test-support.postgres');
interface Shared {
  users: number;
  ready: Promise<{ stop(): Promise<void> }>;
}
type WithShared = typeof globalThis & { [SHARED]?: Shared };

/**
 * Vitest global setup: starts (or points at) one Postgres server for the
 * whole run, migrates a template database, and says in one line which of the
 * three sources it used. Test files then call `createTestDatabase()`. Under
 * `pnpm test` the server is the pass's shared one (`shared-postgres.ts`),
 * which the pass stops.
 *
 * A package whose serial files form a second vitest project loads this setup
 * once per project, in one process: the first starts the server, the others
 * share it, and the last teardown stops it.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const scope = globalThis as WithShared;
  let shared = scope[SHARED];
  if (!shared) {
    shared = {
      users: 0,
      ready: (async () => {
        // `pnpm test` started one server for the whole pass (shared-postgres.ts): use it, never stop it.
        const pass = sharedPostgres();
        const server = pass ? { ...pass, stop: async () => undefined } : await startTestPostgres();
        console.log(server.description);
        process.env[ADMIN_URL_ENV] = server.adminUrl;
        await prepareTemplate(server.adminUrl);
        return server;
      })(),
    };
    scope[SHARED] = shared;
  }
  shared.users += 1;
  const server = await shared.ready;
  return async () => {
    const current = scope[SHARED];
    if (!current) return;
    current.users -= 1;
    if (current.users > 0) return;
    delete scope[SHARED];
    await server.stop();
  };
}
