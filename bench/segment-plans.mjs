#!/usr/bin/env node
// Issue 22: what one files_consistency segment statement costs as the tables around it grow.
// Not part of `pnpm test`.
//
//   node bench/segment-plans.mjs [--files 1000000] [--blobs 100000] [--segments 20000,100000] [--reps 3]
//
// Seeds a dataset, then times one segment statement (the rows of `storage.files` after a key in
// the middle of the table, in id order, joined to their folder and blob rows) in two shapes:
//   hash    — plain LEFT JOINs, the planner's choice (hash joins: each statement builds a hash of
//             all of storage.folders and storage.blobs, whatever the segment's size);
//   probes  — one index probe per row into each table (LATERAL … OFFSET 0: a nested loop), so a
//             statement's cost follows its own rows, not the tables' sizes.
// Each against the one-statement yardstick's rows/s over the whole table, in the same run.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { yardstick } from './lib/benchmarks.mjs';
import { seedScratchDatabase } from './lib/dataset.mjs';
import { startPostgres } from './lib/postgres.mjs';
import { ROOT } from './lib/server.mjs';
import { median } from './lib/stats.mjs';

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '1000000' },
    blobs: { type: 'string', default: '100000' },
    segments: { type: 'string', default: '20000,100000' },
    reps: { type: 'string', default: '3' },
    'work-dir': { type: 'string', default: join(ROOT, 'bench/data') },
  },
});
const files = Number(values.files);
const reps = Number(values.reps);
const segments = values.segments.split(',').map(Number);
for (const [name, v] of [['files', files], ['reps', reps], ...segments.map((s) => ['segments', s])]) {
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a positive integer, got ${v}`);
}
const log = (line) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

const MIME = (c) =>
  `NULLIF(NULLIF(lower(btrim(split_part(COALESCE(${c}, ''), ';', 1))), ''), 'application/octet-stream')`;
const JOINS = {
  hash: `LEFT JOIN storage.folders d ON d.id = s.folder_id
         LEFT JOIN storage.blobs bl ON bl.hash = s.blob_hash`,
  probes: `LEFT JOIN LATERAL (SELECT x.drive_id FROM storage.folders x WHERE x.id = s.folder_id OFFSET 0) d ON true
           LEFT JOIN LATERAL (SELECT y.hash, y.size, y.content_type FROM storage.blobs y
                               WHERE y.hash = s.blob_hash OFFSET 0) bl ON true`,
};
// The statement of PgFileRowStream (packages/storage/src/postgres/pg-file-row-stream.ts), page 1000.
const segmentSql = (joins) => `
  SELECT s.id::text AS id, s.rn, s.marker, c.anomalous
    FROM (
      SELECT o.*, row_number() OVER w AS rn,
             (row_number() OVER w % 1000 = 0 OR lead(o.id) OVER w IS NULL) AS marker
        FROM (SELECT id, drive_id, folder_id, blob_hash, size, mime_type, created_at
                FROM storage.files WHERE id > $1::uuid ORDER BY id LIMIT $2) o
      WINDOW w AS (ORDER BY o.id)
    ) s
    ${joins}
    CROSS JOIN LATERAL (
      SELECT COALESCE(${MIME('s.mime_type')} <> ${MIME('bl.content_type')}, false) AS mime_mismatch
    ) m
    CROSS JOIN LATERAL (
      SELECT (s.created_at <= now() AND (COALESCE(d.drive_id <> s.drive_id, false) OR bl.hash IS NULL
               OR bl.size <> s.size OR m.mime_mismatch)) AS anomalous
    ) c
   WHERE s.marker OR c.anomalous`;

const postgres = await startPostgres(values['work-dir']);
try {
  const url = await seedScratchDatabase(postgres, {
    name: 'oxicloud_segment_plans',
    workDir: values['work-dir'],
    files,
    blobs: Number(values.blobs),
    log,
  });
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const y = await yardstick(pool, 'files_consistency', reps);
  const yRate = Number(y.rows) / (y.ms / 1000);
  log(`yardstick: ${y.rows} rows in ${y.ms.toFixed(0)} ms (${yRate.toFixed(0)} rows/s)`);
  const { rows: mid } = await pool.query(
    'SELECT id::text FROM storage.files ORDER BY id OFFSET (SELECT count(*) / 2 FROM storage.files) LIMIT 1',
  );
  const after = mid[0].id;
  const { rows: sizes } = await pool.query(
    `SELECT (SELECT count(*) FROM storage.folders)::int AS folders, (SELECT count(*) FROM storage.blobs)::int AS blobs`,
  );
  console.log(
    `\n${files} files, ${sizes[0].folders} folders, ${sizes[0].blobs} blob rows; yardstick ${yRate.toFixed(0)} rows/s\n`,
  );
  console.log('| segment rows | shape | median ms | rows/s | vs yardstick |');
  console.log('|---|---|---|---|---|');
  for (const rows of segments) {
    for (const shape of Object.keys(JOINS)) {
      const text = segmentSql(JOINS[shape]);
      await pool.query(text, [after, rows]); // warm
      const times = [];
      for (let i = 0; i < reps; i++) {
        const t0 = performance.now();
        await pool.query(text, [after, rows]);
        times.push(performance.now() - t0);
      }
      const ms = median(times);
      const rate = rows / (ms / 1000);
      console.log(
        `| ${rows} | ${shape} | ${ms.toFixed(0)} | ${rate.toFixed(0)} | ${(rate / yRate).toFixed(2)} |`,
      );
    }
  }
  await pool.end();
} finally {
  await postgres.stop();
}
