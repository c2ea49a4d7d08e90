// pg_stat_statements for the profile scripts (overhead-profile.mjs, check-profile.mjs).

/** Flags of an embedded server that counts statements (utility statements too). */
export const STATEMENT_COUNTING_FLAGS = [
  '-c',
  'shared_preload_libraries=pg_stat_statements',
  '-c',
  'pg_stat_statements.track_utility=on',
];

/** This database's counted statements, slowest first (the counters' own queries left out). */
export async function readStatements(pool) {
  const { rows } = await pool.query(
    `SELECT query, calls::float8 AS calls, rows::float8 AS rows,
            total_plan_time + total_exec_time AS ms, wal_bytes::float8 AS wal_bytes
       FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND query NOT LIKE '%pg_stat_statements%'
      ORDER BY total_plan_time + total_exec_time DESC`,
  );
  return rows;
}

/** Statements, server milliseconds and WAL bytes of `rows`, per unit of `units`. */
export function statementTotals(rows, units = 1) {
  const sum = (key) => rows.reduce((a, r) => a + Number(r[key]), 0) / units;
  return { calls: sum('calls'), serverMs: sum('ms'), walBytes: sum('wal_bytes') };
}

/** The Markdown table of `rows`: calls per unit of `units`, server time, rows and WAL per call. */
export function statementTable(rows, units = 1) {
  const lines = [
    '| calls/unit | server ms total | server ms/call | rows/call | WAL B/call | statement |',
    '|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const c = Number(r.calls);
    const text = String(r.query).replace(/\s+/g, ' ').slice(0, 110).replace(/\|/g, '\\|');
    lines.push(
      `| ${(c / units).toFixed(2)} | ${Number(r.ms).toFixed(1)} | ${(Number(r.ms) / c).toFixed(3)} | ` +
        `${(Number(r.rows) / c).toFixed(1)} | ${(Number(r.wal_bytes) / c).toFixed(0)} | \`${text}\` |`,
    );
  }
  return lines.join('\n');
}
