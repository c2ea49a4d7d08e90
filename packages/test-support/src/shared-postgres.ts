/**
 * One test Postgres for a whole `pnpm test` pass (every package's vitest
 * run shares it), instead of one server per package: `scripts/test.mjs`
 * starts this after the pass's builds, with the pass's environment
 * (`OXICLOUD_TEST_POSTGRES`, the container runtime's variables), and passes
 * the line it prints to the test lanes as {@link SHARED_POSTGRES_ENV}.
 *
 * `node packages/test-support/dist/shared-postgres-main.js`: starts the server
 * (`startTestPostgres`, the same three sources), migrates the template
 * database, prints one JSON line `{ adminUrl, description }` on stdout, and
 * stops the server when stdin closes or on SIGTERM/SIGINT (so a killed
 * parent never leaves it behind). Each package's global setup then only
 * checks the template (`prepareTemplate`: an advisory lock and an up-to-date
 * migration), which takes well under a second instead of a server start.
 */

/** The variable that hands the shared server to the packages' global setups: the JSON line this prints. */
export const SHARED_POSTGRES_ENV = 'OXICLOUD_TEST_POSTGRES_SHARED';

/** What {@link SHARED_POSTGRES_ENV} holds. */
export interface SharedPostgres {
  readonly adminUrl: string;
  readonly description: string;
}

/** The shared server named by {@link SHARED_POSTGRES_ENV}, or `undefined` when unset. */
export function sharedPostgres(env: NodeJS.ProcessEnv = process.env): SharedPostgres | undefined {
  const value = env[SHARED_POSTGRES_ENV];
  if (value === undefined || value === '') return undefined;
  const parsed = JSON.parse(value) as Partial<SharedPostgres>;
  if (typeof parsed.adminUrl !== 'string' || typeof parsed.description !== 'string') {
    throw new Error(`${SHARED_POSTGRES_ENV} must be the JSON line shared-postgres.js prints, got ${value}`);
  }
  return { adminUrl: parsed.adminUrl, description: parsed.description };
}
