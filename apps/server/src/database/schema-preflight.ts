import type { ConsistencyCheck } from '@oxicloud/consistency';
import { schemaAssumptionProblems } from '@oxicloud/migrations';
import type pg from 'pg';

/**
 * Beside an OxiCloud that migrated past what this engine knows: before each
 * run of a check, the tables it reads (`check.reads`) are held against
 * OxiCloud's schema as the engine knows it (`OXICLOUD_SCHEMA`): a missing
 * or changed column or trigger refuses the check with the lines that
 * differ, instead of a scan whose SQL fails halfway or, worse, counts by a
 * rule OxiCloud no longer keeps. What OxiCloud only added is fine.
 */
export function schemaPreflight(
  pool: pg.Pool,
  oxicloud: { readonly latest: number | null; readonly known: number },
): (check: ConsistencyCheck) => Promise<string | null> {
  return async (check) => {
    if (check.reads === undefined || check.reads.length === 0) return null;
    const client = await pool.connect();
    let problems: string[];
    try {
      problems = await schemaAssumptionProblems(client, check.reads);
    } finally {
      client.release();
    }
    if (problems.length === 0) return null;
    return (
      `OxiCloud's latest migration ${oxicloud.latest} is newer than the ${oxicloud.known} this engine knows, ` +
      `and what ${check.name} reads changed: ${problems.join('; ')}. ` +
      'Upgrade the engine to one that knows this OxiCloud'
    );
  };
}
