import type { ServerConfig } from '../config/server-config.js';
import { openDatabase } from '../database/open-database.js';
import { applyMigrations } from '../database/prepare-database.js';
import { createLogger } from '../logger.js';

/**
 * `oxijobs migrate`: applies the pending migrations to the database `serve`
 * would use (the running server's embedded Postgres when it is up) and prints
 * one summary line on stdout.
 */
export async function migrateCommand(
  config: ServerConfig,
  options: { readonly createStorageDomain?: boolean } = {},
): Promise<void> {
  const logger = createLogger({ level: config.logLevel, destination: 'stderr', format: config.logFormat });
  const db = await openDatabase(config, logger, { max: 1 });
  try {
    const { applied, total, mode } = await applyMigrations(db.pool, logger, {
      source: db.source,
      engineSchema: config.engineSchema,
      createStorageDomain: options.createStorageDomain === true,
    });
    // The same counts as the server's boot line: "applied N of M", later "up to date (M)".
    const what =
      applied.length === 0
        ? `up to date (${total} migration(s))`
        : `applied ${applied.length} of ${total}: ${applied.join(', ')}`;
    const where = mode.kind === 'sidecar' ? `, beside OxiCloud in schema ${mode.engineSchema}` : '';
    process.stdout.write(`migrations: ${what} (database: ${db.source}${where})\n`);
  } finally {
    await db.close();
  }
}
