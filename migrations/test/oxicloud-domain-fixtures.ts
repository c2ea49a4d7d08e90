import type { MigrationFile } from '../src/index.js';

/** One session: a `pg` Client or a pool's client. */
export interface Session {
  query(sql: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
}

/**
 * Applies the files in order, each in a transaction of its own (as
 * `migrate()` does, without its bookkeeping). A failing file is rolled
 * back, and the error names it.
 */
export async function applyInTransactions(client: Session, files: readonly MigrationFile[]): Promise<void> {
  for (const file of files) {
    try {
      await client.query('BEGIN');
      await client.query(file.sql);
      await client.query('COMMIT');
    } catch (cause) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw new Error(`${file.name} failed: ${(cause as Error).message}`, { cause });
    }
  }
}
