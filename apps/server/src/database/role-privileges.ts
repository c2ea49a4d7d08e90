import type pg from 'pg';

/**
 * OxiCloud's tables an approved repair or a write job changes (fact sheet
 * §3–§9), with the rights each needs. A role lacking any of them runs the
 * checks only: repairs and write jobs are refused with what is missing.
 */
export const WRITTEN_OXICLOUD_TABLES: readonly (readonly [table: string, rights: string])[] = [
  ['auth.users', 'UPDATE'],
  ['storage.drives', 'UPDATE'],
  ['storage.folders', 'UPDATE, DELETE'],
  ['storage.files', 'UPDATE, DELETE'],
  ['storage.blobs', 'INSERT, UPDATE, DELETE'],
  ['storage.chunk_manifests', 'INSERT, UPDATE, DELETE'],
  ['storage.role_grants', 'DELETE'],
];

/** What the engine's database role may do beside OxiCloud (the boot line, the refusals). */
export interface RolePrivileges {
  readonly role: string;
  /** Every table the checks read is readable (SELECT on OxiCloud's storage tables). */
  readonly canRead: boolean;
  /** `schema.table: RIGHT` for each right a repair or write job needs and the role lacks; empty when it may write. */
  readonly missingWrites: readonly string[];
}

const READ_TABLES = [
  'auth.users',
  'storage.drives',
  'storage.folders',
  'storage.files',
  'storage.blobs',
  'storage.chunk_manifests',
  'storage.role_grants',
];

/** Reads the role's rights from the catalog (`has_table_privilege`): nothing is tried, nothing written. */
export async function readRolePrivileges(pool: pg.Pool): Promise<RolePrivileges> {
  const checks: Array<{ table: string; right: string }> = [];
  for (const [table, rights] of WRITTEN_OXICLOUD_TABLES) {
    for (const right of rights.split(',').map((r) => r.trim())) checks.push({ table, right });
  }
  const { rows } = await pool.query<{ role: string; readable: boolean; granted: boolean[] }>(
    `SELECT current_user AS role,
            (SELECT bool_and(to_regclass(t) IS NOT NULL AND has_table_privilege(t, 'SELECT')) FROM unnest($1::text[]) AS t) AS readable,
            ARRAY(SELECT to_regclass(c.t) IS NOT NULL AND has_table_privilege(c.t, c.r)
                    FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS c(t, r, i) ORDER BY c.i) AS granted`,
    [READ_TABLES, checks.map((c) => c.table), checks.map((c) => c.right)],
  );
  const row = rows[0]!;
  return {
    role: row.role,
    canRead: row.readable === true,
    missingWrites: checks.filter((_, i) => row.granted[i] !== true).map((c) => `${c.table}: ${c.right}`),
  };
}

/** One line for the boot log: what the role may do. */
export function describeRolePrivileges(privileges: RolePrivileges): string {
  const read = privileges.canRead ? "reads OxiCloud's tables" : "may NOT read all of OxiCloud's tables";
  const write =
    privileges.missingWrites.length === 0
      ? 'may write what repairs and write jobs change'
      : `is read-only for OxiCloud (lacks ${privileges.missingWrites.join(', ')}): checks run, repairs and write jobs are refused`;
  return `database role ${privileges.role} ${read} and ${write}`;
}
