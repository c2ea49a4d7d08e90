#!/usr/bin/env node
// files_consistency paged (one query per batch) against streamed (one server-side cursor per
// bounded segment), both through the engine with real checkpoints and findings, alternating in one
// run, each against the one-statement yardstick measured just before it (issue 22), on OxiCloud's
// storage domain (`OxiFileContentScan`).
//
//   node bench/files-stream.mjs [--files 200000] [--reps 3]
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { checkJob, PgFindingStore } from '@oxicloud/consistency';
import { RecoverableEngine } from '@oxicloud/recoverable';
import { OxiFileContentScan } from '@oxicloud/storage/oxicloud';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { directScan, yardstick } from './lib/benchmarks.mjs';
import { seedScratchDatabase } from './lib/dataset.mjs';
import { startPostgres } from './lib/postgres.mjs';
import { ROOT } from './lib/server.mjs';

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '200000' },
    blobs: { type: 'string', default: '1000' },
    reps: { type: 'string', default: '3' },
    'work-dir': { type: 'string', default: join(ROOT, 'bench/data') },
  },
});
const files = Number(values.files);
const reps = Number(values.reps);
const log = (line) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

const postgres = await startPostgres(values['work-dir']);
try {
  const url = await seedScratchDatabase(postgres, {
    name: 'oxicloud_files_stream',
    workDir: values['work-dir'],
    files,
    blobs: Number(values.blobs),
    log,
  });
  const pool = new pg.Pool({ connectionString: url, max: 8 });
  const db = new Kysely({ dialect: new PostgresDialect({ pool }) });
  const findings = new PgFindingStore({ pool });
  const modes = {
    paged: new OxiFileContentScan(db, { segmentRows: 0 }),
    streamed: new OxiFileContentScan(db),
  };
  const engines = {};
  for (const [mode, scan] of Object.entries(modes)) {
    engines[mode] = new RecoverableEngine({ pool });
    engines[mode].register(checkJob(scan.consistencyChecks()[0], { findings }));
  }
  const rows = [];
  for (let rep = 0; rep < reps; rep++) {
    const order = rep % 2 === 0 ? ['paged', 'streamed'] : ['streamed', 'paged'];
    for (const mode of order) {
      const y = await yardstick(pool, 'files_consistency', 1);
      const t0 = performance.now();
      const outcome = await engines[mode].runOrResume('files_consistency', { logRunLine: false });
      const ms = performance.now() - t0;
      if (outcome.kind !== 'ok' || !outcome.extra.completed) throw new Error(JSON.stringify(outcome));
      const direct = await directScan(url, 'files_consistency', 1000, { stream: mode === 'streamed' });
      const row = {
        rep,
        mode,
        yardstickMs: Math.round(y.ms),
        engineMs: Math.round(ms),
        ratio: +(y.ms / ms).toFixed(3),
        directMs: Math.round(direct.ms),
        directRatio: +(y.ms / direct.ms).toFixed(3),
      };
      log(JSON.stringify(row));
      rows.push(row);
    }
  }
  console.log('| rep | mode | yardstick ms | engine ms | ratio | in-memory store ms | ratio |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.rep} | ${r.mode} | ${r.yardstickMs} | ${r.engineMs} | ${r.ratio} | ${r.directMs} | ${r.directRatio} |`,
    );
  }
  await db.destroy();
} finally {
  await postgres.stop();
}
