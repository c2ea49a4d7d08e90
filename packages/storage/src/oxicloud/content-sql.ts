import { type Kysely, type RawBuilder, sql } from 'kysely';
import { CATEGORY_ORDERS, CATEGORY_RULES } from '../content/category-order.js';
import { bigintToNumber } from '../postgres/database.js';
import type { OxiCloudDatabase } from './database.js';

/**
 * The placeholder content hash (64 zeros): OxiCloud's unused
 * `register_file_deferred` and its `load-seed` tool write it, the latter
 * with a fake 0-byte blob row and no bytes behind it (fact sheet §5). A file
 * carrying it has no content to resolve or compare: the content adapters
 * never report it as `missing_blob` or `blob_size_mismatch` (§12 item 11,
 * "treat the zero hash as a placeholder").
 */
export const PLACEHOLDER_HASH = '0'.repeat(64);

/** A mime type with case and parameters dropped; NULL when unknown (empty or the column default). The old adapters' rule. */
export const KNOWN_MIME = (column: string): RawBuilder<string | null> =>
  sql.raw(
    `NULLIF(NULLIF(lower(btrim(split_part(COALESCE(${column}, ''), ';', 1))), ''), 'application/octet-stream')`,
  );

/**
 * `true` when the content named `hash` resolves (fact sheet §5 "How a file
 * maps to bytes", §12 item 11): a manifest with `file_hash = hash` whose
 * chunks all have a `storage.blobs` row (the empty manifest has none to
 * miss), or, when no manifest has it, a legacy blob row `hash`. The SQL
 * twin of `openFileContent`'s choice (manifest first, else legacy); the
 * placeholder is not handled here.
 */
export const CONTENT_RESOLVES = (hash: RawBuilder<unknown>): RawBuilder<boolean> => sql<boolean>`(
  EXISTS (SELECT 1 FROM storage.chunk_manifests rm
           WHERE rm.file_hash = ${hash}
             AND NOT EXISTS (SELECT 1 FROM unnest(rm.chunk_hashes) rc(h)
                              WHERE NOT EXISTS (SELECT 1 FROM storage.blobs rb WHERE rb.hash = rc.h)))
  OR (NOT EXISTS (SELECT 1 FROM storage.chunk_manifests rm WHERE rm.file_hash = ${hash})
      AND EXISTS (SELECT 1 FROM storage.blobs rb WHERE rb.hash = ${hash})))`;

/**
 * The planner's row estimate (`pg_class.reltuples`) summed over `tables`,
 * counted exactly when never analysed: `estimateRowsOf` of the old
 * adapters, on this domain's `Kysely`.
 */
export async function estimateRowsOf(
  db: Kysely<OxiCloudDatabase>,
  tables: readonly string[],
): Promise<number | null> {
  const { rows } = await sql<{ total: number | null }>`
    SELECT sum(reltuples)::float8 AS total
      FROM pg_class
     WHERE oid IN (${sql.join(tables.map((t) => sql`${t}::regclass`))})
       AND reltuples >= 0`.execute(db);
  const total = rows[0]?.total;
  if (total !== null && total !== undefined) return Math.round(total);
  const counts = await Promise.all(
    tables.map((t) => sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.table(t)}`.execute(db)),
  );
  return counts.reduce((sum, r) => sum + bigintToNumber(r.rows[0]?.n ?? 0), 0);
}

const literal = (value: string): string => `'${value.replace(/'/g, "''")}'`;
const list = (values: readonly string[]): string => values.map(literal).join(', ');
const likeEscaped = (value: string): string => value.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * `categoryOrderFor` as one SQL expression over the columns `name` and
 * `mime` (qualified names, trusted: the callers pass column references). A
 * `CASE` evaluates its arms in order and stops at the first that holds, so
 * the extension is read only for the MIME types that do not decide.
 */
export function CATEGORY_ORDER_SQL(name: string, mime: string): RawBuilder<number> {
  const arms: string[] = [];
  for (const [category, types] of CATEGORY_RULES.byMime) {
    arms.push(`WHEN ${mime} IN (${list(types)}) THEN ${CATEGORY_ORDERS[category]}`);
  }
  for (const rule of CATEGORY_RULES.byMimeShape) {
    const tests = [
      ...(rule.prefix ?? []).map((p) => `${mime} LIKE ${literal(`${likeEscaped(p)}%`)}`),
      ...(rule.contains ?? []).map((c) => `strpos(${mime}, ${literal(c)}) > 0`),
    ];
    arms.push(`WHEN ${tests.join(' OR ')} THEN ${CATEGORY_ORDERS[rule.category]}`);
  }
  // The extension: after the last dot of the last path segment, ASCII lower-cased, at most 16 bytes.
  const ext = `translate(substring(${name} FROM '\\.([^./]*)$'), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')`;
  const byExt = CATEGORY_RULES.byExtension.map(
    ([category, exts]) => `WHEN e.x IN (${list(exts)}) THEN ${CATEGORY_ORDERS[category]}`,
  );
  arms.push(
    `ELSE (SELECT CASE ${byExt.join(' ')} ELSE ${CATEGORY_ORDERS.Document} END
             FROM (SELECT CASE WHEN octet_length(x) BETWEEN 1 AND ${CATEGORY_RULES.maxExtensionBytes} THEN x END AS x
                     FROM (SELECT ${ext} AS x) y) e)`,
  );
  return sql.raw<number>(`(CASE ${arms.join(' ')} END)`);
}
