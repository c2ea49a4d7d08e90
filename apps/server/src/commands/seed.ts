import type { ServerConfig } from '../config/server-config.js';
import { openDatabase } from '../database/open-database.js';
import { applyMigrations } from '../database/prepare-database.js';
import { createLogger } from '../logger.js';
import { ServerError } from '../server-error.js';

/** The `oxijobs seed` flags, validated. */
export interface SeedOptions {
  readonly users: number;
  readonly filesPerUser: number;
  readonly blobsOnDisk: boolean;
  readonly faults: readonly string[];
  readonly seed: number;
}

/**
 * `oxijobs seed`: fills the database (and the local blob folder) with a
 * generated dataset through `generateDataset` from `@oxicloud/dataset`.
 * SEAM: until that package exports `generateDataset`, the command says so.
 */
export async function seedCommand(config: ServerConfig, options: SeedOptions): Promise<void> {
  const dataset = (await import('@oxicloud/dataset')) as Record<string, unknown>;
  const generateDataset = dataset['generateDataset'];
  if (typeof generateDataset !== 'function') {
    throw new ServerError('NOT_AVAILABLE', '@oxicloud/dataset does not export generateDataset yet');
  }
  const logger = createLogger({ level: config.logLevel, destination: 'stderr' });
  const db = await openDatabase(config, logger, { max: 4 });
  try {
    await applyMigrations(db.pool, logger);
    const blobRoot = config.storage.backend === 'local' ? config.storage.root : undefined;
    const result: unknown = await generateDataset({ pool: db.pool, blobRoot, logger, ...options });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await db.close();
  }
}
