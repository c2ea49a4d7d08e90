#!/usr/bin/env node
// Issue 22's per-statement profile of run overhead: where one recoverable run's time goes against
// one pg-boss job's. Not part of `pnpm test`.
//
//   node bench/overhead-profile.mjs [--runs 300] [--warmup 20] [--work-dir bench/data]
//
// Starts an embedded Postgres with pg_stat_statements, times the same lifecycles as
// `pnpm bench -- --only overhead`, and prints, per system, each statement's calls per unit, mean
// planning + execution time in the server, rows and WAL bytes per call; then the split of a
// unit's wall time into the server's statement time and the rest (round trips, commits' WAL
// flushes, client code). Each system is timed twice more, with `synchronous_commit = off` for the
// database, to show what its commits' flushes cost.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { migrate } from '@oxicloud/migrations';
import pg from 'pg';
import { overheadBench } from './lib/benchmarks.mjs';
import { createDatabase, startPostgres } from './lib/postgres.mjs';
import { ROOT } from './lib/server.mjs';
import {
  readStatements,
  STATEMENT_COUNTING_FLAGS,
  statementTable,
  statementTotals,
} from './lib/statements.mjs';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '300' },
    warmup: { type: 'string', default: '20' },
    'work-dir': { type: 'string', default: join(ROOT, 'bench/data') },
  },
});
const runs = Number(values.runs);
const warmup = Number(values.warmup);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(warmup) || warmup < 0) {
  throw new Error('--runs must be an integer ≥ 1 and --warmup an integer ≥ 0');
}

const postgres = await startPostgres(values['work-dir'], {
  extraFlags: STATEMENT_COUNTING_FLAGS,
});
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
try {
  const out = [];
  for (const syncCommit of ['on', 'off']) {
    const url = await createDatabase(postgres.adminUrl, 'oxicloud_bench_overhead');
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    const migrated = await migrate(pool, { domain: 'oxicloud' });
    if (migrated.error) throw migrated.error;
    await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await pool.query(`ALTER DATABASE oxicloud_bench_overhead SET synchronous_commit = ${syncCommit}`);
    const profiles = {};
    const result = await overheadBench({
      databaseUrl: url,
      runs,
      warmup,
      onPhase: async (phase, edge) => {
        if (edge === 'start') {
          await pool.query('SELECT pg_stat_statements_reset()');
          return;
        }
        profiles[phase] = await readStatements(pool);
      },
    });
    await pool.end();
    out.push({ syncCommit, result, profiles });
  }

  for (const { syncCommit, result, profiles } of out) {
    console.log(`\n## synchronous_commit = ${syncCommit} (${runs} units after ${warmup} warm-up)\n`);
    for (const [phase, times] of [
      ['recoverable', result.recoverable],
      ['lease', result.leaseRenewal],
      ['pg-boss', result.pgBoss],
    ]) {
      const rows = profiles[phase] ?? [];
      const wall = mean(times);
      const { calls, serverMs, walBytes } = statementTotals(rows, runs);
      console.log(
        `### ${phase}: ${wall.toFixed(2)} ms a unit; ${calls.toFixed(1)} statements (round trips), ` +
          `${serverMs.toFixed(2)} ms of them in the server, ${(wall - serverMs).toFixed(2)} ms elsewhere ` +
          `(round trips, commit flushes, client); ${walBytes.toFixed(0)} WAL bytes a unit\n`,
      );
      console.log(statementTable(rows, runs));
      console.log('');
    }
    console.log(
      `ratio run / pg-boss: ${(mean(result.recoverable) / mean(result.pgBoss)).toFixed(2)} ` +
        `(${mean(result.recoverable).toFixed(2)} vs ${mean(result.pgBoss).toFixed(2)} ms)`,
    );
  }
} finally {
  await postgres.stop();
}
