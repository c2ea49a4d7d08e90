import pg from 'pg';
import { probeContainerRuntime, startContainerPostgres } from './container-postgres.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import { TestSupportError } from './errors.js';

export { freePort } from './free-port.js';

/** A Postgres server the harness can create databases on. */
export interface TestPostgresServer {
  /** Connection URL of the server's `postgres` database, as a superuser. */
  readonly adminUrl: string;
  /** Which of the three sources was used, for the one-line report. */
  readonly source: 'TEST_DATABASE_URL' | 'testcontainers' | 'embedded';
  /** One human line: which server (and version), and why. */
  readonly description: string;
  stop(): Promise<void>;
}

/** The image Testcontainers starts unless `OXICLOUD_TEST_POSTGRES_IMAGE` names another. */
export const DEFAULT_POSTGRES_IMAGE = 'postgres:15-alpine';
/** How long a Postgres container may take to listen unless `OXICLOUD_TEST_POSTGRES_STARTUP_MS` says otherwise. */
export const DEFAULT_STARTUP_MS = 60_000;

const MODES = ['auto', 'testcontainers', 'embedded'] as const;
type Mode = (typeof MODES)[number];

function modeOf(env: NodeJS.ProcessEnv): Mode {
  const value = env['OXICLOUD_TEST_POSTGRES'] || 'auto';
  if ((MODES as readonly string[]).includes(value)) return value as Mode;
  throw new TestSupportError(
    'BAD_CONFIG',
    `OXICLOUD_TEST_POSTGRES=${value} is not a test database choice; use one of ${MODES.join(', ')}`,
  );
}

function startupMsOf(env: NodeJS.ProcessEnv): number {
  const value = env['OXICLOUD_TEST_POSTGRES_STARTUP_MS'];
  if (value === undefined || value === '') return DEFAULT_STARTUP_MS;
  const ms = Number(value);
  if (Number.isInteger(ms) && ms > 0) return ms;
  throw new TestSupportError(
    'BAD_CONFIG',
    `OXICLOUD_TEST_POSTGRES_STARTUP_MS=${value} is not a number of milliseconds; use a positive integer such as ${DEFAULT_STARTUP_MS}`,
  );
}

async function serverVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ v: string }>("SELECT current_setting('server_version') AS v");
    return `PostgreSQL ${rows[0]?.v.split(' ')[0]}`;
  } finally {
    await client.end();
  }
}

async function embedded(why: string): Promise<TestPostgresServer> {
  const server = await startEmbeddedPostgres();
  const version = await serverVersion(server.adminUrl);
  return {
    adminUrl: server.adminUrl,
    source: 'embedded',
    description: `test database: embedded Postgres (${version}) on 127.0.0.1:${server.port} (${why})`,
    stop: () => server.stop(),
  };
}

/**
 * Starts (or points at) the Postgres server for a test run:
 * - `TEST_DATABASE_URL` if set (any Postgres the caller runs);
 * - else, by `OXICLOUD_TEST_POSTGRES` (`auto` unless set):
 *   - `embedded`: an embedded Postgres 18 (real binaries from the
 *     `embedded-postgres` package) on a free port in a temporary folder;
 *   - `testcontainers`: a container of `OXICLOUD_TEST_POSTGRES_IMAGE`
 *     (default {@link DEFAULT_POSTGRES_IMAGE}); no runtime, or a container
 *     that does not listen within `OXICLOUD_TEST_POSTGRES_STARTUP_MS`, fails
 *     with the runtime's own words;
 *   - `auto`: that container when a runtime answers, else embedded; a
 *     container that does not come up falls back to embedded, and the
 *     description says why (with the runtime's words).
 */
export async function startTestPostgres(env: NodeJS.ProcessEnv = process.env): Promise<TestPostgresServer> {
  const url = env['TEST_DATABASE_URL'];
  if (url) {
    return {
      adminUrl: url,
      source: 'TEST_DATABASE_URL',
      description: `test database: TEST_DATABASE_URL (${new URL(url).host})`,
      stop: async () => undefined,
    };
  }
  const mode = modeOf(env);
  const startupTimeoutMs = startupMsOf(env);
  if (mode === 'embedded') return embedded('OXICLOUD_TEST_POSTGRES=embedded');
  const runtime = await probeContainerRuntime();
  if (!runtime.ok) {
    if (mode === 'testcontainers') {
      throw new TestSupportError(
        'NO_CONTAINER_RUNTIME',
        `OXICLOUD_TEST_POSTGRES=testcontainers, but no container runtime answered: ${runtime.reason}`,
      );
    }
    return embedded('TEST_DATABASE_URL unset, no container runtime answered');
  }
  const image = env['OXICLOUD_TEST_POSTGRES_IMAGE'] || DEFAULT_POSTGRES_IMAGE;
  let container: Awaited<ReturnType<typeof startContainerPostgres>>;
  try {
    container = await startContainerPostgres({ image, startupTimeoutMs });
  } catch (err) {
    if (mode === 'testcontainers' || !(err instanceof TestSupportError)) throw err;
    return embedded(`Testcontainers fallback: ${err.message}`);
  }
  const version = await serverVersion(container.adminUrl).catch(async (err: unknown) => {
    await container.stop();
    throw err;
  });
  return {
    adminUrl: container.adminUrl,
    source: 'testcontainers',
    description: `test database: Testcontainers ${image} (${version}) at ${container.host}:${container.port}`,
    stop: () => container.stop(),
  };
}
