#!/usr/bin/env node
// Issue 22: where one consistency check's time goes, statement by statement. Not part of `pnpm test`.
//
//   node bench/check-profile.mjs [--check drives_consistency] [--files 1000000] [--blobs 100000]
//                                [--explain-ms 100]
//
// Seeds a dataset on an embedded Postgres with pg_stat_statements, times the check's one-statement
// yardstick, then runs the check through the engine in this process (real checkpoints and
// findings) with the statement counters reset just before, and prints the run's wall time against
// the yardstick and each statement's calls, server time (plan + execute) and rows.
// With --explain-ms, auto_explain logs the plan (ANALYZE, BUFFERS) of every statement slower than
// that during the run, and they are printed after the table.
// Checks: files_consistency, folders_consistency, drives_consistency, blobs_consistency,
// grants_consistency, on OxiCloud's storage domain (the `@oxicloud/storage/oxicloud` adapters).
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { checkJob, PgFindingStore } from '@oxicloud/consistency';
import { RecoverableEngine } from '@oxicloud/recoverable';
import {
  OxiBlobRowScan,
  OxiDriveUsageScan,
  OxiFileContentScan,
  OxiFolderTreeScan,
  OxiGrantScan,
} from '@oxicloud/storage/oxicloud';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { yardstick } from './lib/benchmarks.mjs';
import { seedScratchDatabase } from './lib/dataset.mjs';
import { startPostgres } from './lib/postgres.mjs';
import { ROOT } from './lib/server.mjs';
import {
  readStatements,
  STATEMENT_COUNTING_FLAGS,
  statementTable,
  statementTotals,
} from './lib/statements.mjs';

const SCANS = {
  files_consistency: (db) => new OxiFileContentScan(db),
  folders_consistency: (db) => new OxiFolderTreeScan(db),
  drives_consistency: (db) => new OxiDriveUsageScan(db),
  blobs_consistency: (db) => new OxiBlobRowScan(db),
  grants_consistency: (db) => new OxiGrantScan(db),
};
const { values } = parseArgs({
  options: {
    check: { type: 'string', default: 'drives_consistency' },
    files: { type: 'string', default: '1000000' },
    blobs: { type: 'string', default: '100000' },
    'explain-ms': { type: 'string' },
    'work-dir': { type: 'string', default: join(ROOT, 'bench/data') },
  },
});
const name = values.check;
if (!(name in SCANS)) throw new Error(`--check: ${name} is not one of ${Object.keys(SCANS).join(', ')}`);
const files = Number(values.files);
if (!Number.isInteger(files) || files < 1000) throw new Error('--files must be an integer ≥ 1000');
const log = (line) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

const explainMs = values['explain-ms'] === undefined ? null : Number(values['explain-ms']);
if (explainMs !== null && !(explainMs >= 0))
  throw new Error('--explain-ms must be a number of milliseconds ≥ 0');
/** What the server wrote (auto_explain's plans among it). */
const serverLog = [];
const postgres = await startPostgres(values['work-dir'], {
  extraFlags: [
    ...STATEMENT_COUNTING_FLAGS.map((flag) =>
      explainMs !== null && flag.startsWith('shared_preload_libraries=') ? `${flag},auto_explain` : flag,
    ),
    ...(explainMs === null
      ? []
      : [
          '-c',
          'auto_explain.log_analyze=on',
          '-c',
          'auto_explain.log_buffers=on',
          '-c',
          'auto_explain.log_min_duration=-1',
        ]),
  ],
  onLog: (line) => serverLog.push(line),
});
try {
  const url = await seedScratchDatabase(postgres, {
    name: 'oxicloud_check_profile',
    workDir: values['work-dir'],
    files,
    blobs: Number(values.blobs),
    log,
  });
  const pool = new pg.Pool({ connectionString: url, max: 8 });
  // Every session of the pool logs its slow plans (the yardstick's too: they come first).
  if (explainMs !== null) {
    pool.on('connect', (client) => {
      client.query(`SET auto_explain.log_min_duration = ${explainMs}`).catch(() => undefined);
    });
  }
  await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const db = new Kysely({ dialect: new PostgresDialect({ pool }) });
  const check = SCANS[name](db)
    .consistencyChecks()
    .find((c) => c.name === name);
  const engine = new RecoverableEngine({ pool });
  engine.register(checkJob(check, { findings: new PgFindingStore({ pool }) }));
  const y = await yardstick(pool, name, 3);
  await pool.query('SELECT pg_stat_statements_reset()');
  const t0 = performance.now();
  const outcome = await engine.runOrResume(name, { logRunLine: false });
  const ms = performance.now() - t0;
  if (outcome.kind !== 'ok' || !outcome.extra.completed) throw new Error(JSON.stringify(outcome));
  const rows = await readStatements(pool);
  const { calls, serverMs } = statementTotals(rows);
  console.log(
    `\n${name} on ${files} files: ${y.rows} rows; the run ${ms.toFixed(0)} ms, the yardstick ${y.ms.toFixed(0)} ms ` +
      `(ratio ${(y.ms / ms).toFixed(2)}); ${calls} statements, ${serverMs.toFixed(0)} ms of them in the server, ` +
      `${(ms - serverMs).toFixed(0)} ms elsewhere (round trips, commits, client)\n`,
  );
  console.log(statementTable(rows));
  await db.destroy();
  if (explainMs !== null) {
    console.log(
      `\nPlans of the statements slower than ${explainMs} ms (auto_explain; ${serverLog.length} log lines):\n`,
    );
    const text = serverLog.join('\n');
    const plans = text
      .split(/\n(?=\S)/)
      .filter((entry) => entry.includes('duration:') && entry.includes('plan:'));
    for (const plan of plans) console.log(`\`\`\`\n${plan.trim()}\n\`\`\`\n`);
  }
} finally {
  await postgres.stop();
}
