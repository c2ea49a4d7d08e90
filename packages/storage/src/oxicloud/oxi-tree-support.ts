import type { Kysely } from 'kysely';
import { estimateRowsOf } from '../postgres/row-estimate.js';
import type { OxiCloudDatabase } from './database.js';

/**
 * The planner's row estimate summed over `tables` on OxiCloud's domain:
 * {@link estimateRowsOf} sends raw SQL only (`pg_class`, then `count(*)`),
 * so it serves either schema's Kysely instance.
 */
export function estimateOxiRows(
  db: Kysely<OxiCloudDatabase>,
  tables: readonly string[],
): Promise<number | null> {
  return estimateRowsOf(db, tables);
}
