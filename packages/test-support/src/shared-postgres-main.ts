/**
 * The shared test Postgres of a `pnpm test` pass as a process (see
 * shared-postgres.ts): `node packages/test-support/dist/shared-postgres-main.js`.
 */
import { startTestPostgres } from './postgres-server.js';
import type { SharedPostgres } from './shared-postgres.js';
import { prepareTemplate } from './test-database.js';

async function serve(): Promise<void> {
  const server = await startTestPostgres();
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void server.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(`shared-postgres: stopping the server failed: ${(err as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdin.on('end', stop);
  process.stdin.on('close', stop);
  process.stdin.resume();
  try {
    await prepareTemplate(server.adminUrl);
  } catch (err) {
    console.error(`shared-postgres: the template database did not migrate: ${(err as Error).message}`);
    await server.stop();
    process.exit(1);
  }
  const line: SharedPostgres = {
    adminUrl: server.adminUrl,
    description: `${server.description}, shared by the pass`,
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

serve().catch((err: unknown) => {
  console.error(`shared-postgres: ${(err as Error).message}`);
  process.exit(1);
});
