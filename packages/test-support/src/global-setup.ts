import { startTestPostgres } from './postgres-server.js';
import { ADMIN_URL_ENV, prepareTemplate } from './test-database.js';

/**
 * Vitest global setup: starts (or points at) one Postgres server for the
 * whole run, migrates a template database, and says in one line which of the
 * three sources it used. Test files then call `createTestDatabase()`.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const server = await startTestPostgres();
  console.log(server.description);
  process.env[ADMIN_URL_ENV] = server.adminUrl;
  await prepareTemplate(server.adminUrl);
  return async () => {
    await server.stop();
  };
}
