import type { ServerConfig } from '../config/server-config.js';
import { openDatabase } from '../database/open-database.js';
import { applyMigrations } from '../database/prepare-database.js';
import { createLogger } from '../logger.js';

/**
 * `oxijobs migrate`: applies the pending migrations to the database `serve`
 * would use (the running server's embedded Postgres when it is up) and prints
 * one summary line on stdout.
 */
export async function migrateCommand(config: ServerConfig): Promise<void> {
  const logger = createLogger({ level: config.logLevel, destination: 'stderr', format: config.logFormat });
  const db = await openDatabase(config, logger, { max: 1 });
  try {
    const { applied } = await applyMigrations(db.pool, logger);
    process.stdout.write(
      `migrations: ${applied.length === 0 ? 'up to date' : `applied ${applied.join(', ')}`} (database: ${db.source})\n`,
    );
  } finally {
    await db.close();
  }
}
