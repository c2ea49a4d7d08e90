#!/usr/bin/env node
// Issue 22: what one files_consistency segment statement costs as the tables around it grow.
// Not part of `pnpm test`.
//
//   node bench/segment-plans.mjs [--files 1000000] [--blobs 100000] [--segments 20000,100000] [--reps 3]
//
// Seeds an OxiCloud-domain dataset, then times one segment statement (the rows of `storage.files`
// after a key in the middle of the table, in id order, joined to their folder, their manifest and
// its chunks' blob rows, or their legacy blob row) in two shapes:
//   hash    — plain LEFT JOINs, the planner's choice (hash joins: each statement may build a hash
//             of all of storage.folders and storage.blobs, whatever the segment's size);
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
// Each file row's folder, its manifest (whether a chunk has no blob row) and, without a manifest,
// its legacy blob row: by joins the planner may hash, or by one index probe per row.
const JOINS = {
  hash: `LEFT JOIN storage.folders d ON d.id = s.folder_id
         LEFT JOIN m ON m.file_hash = s.blob_hash
         LEFT JOIN broken bk ON bk.file_hash = m.file_hash
         LEFT JOIN storage.blobs l ON l.hash = s.blob_hash AND m.file_hash IS NULL`,
  probes: `LEFT JOIN LATERAL (SELECT x.drive_id FROM storage.folders x WHERE x.id = s.folder_id OFFSET 0) d ON true
           LEFT JOIN LATERAL (SELECT y.file_hash, y.total_size, y.content_type FROM m y
                               WHERE y.file_hash = s.blob_hash OFFSET 0) m ON true
           LEFT JOIN LATERAL (SELECT z.file_hash FROM broken z WHERE z.file_hash = m.file_hash OFFSET 0) bk ON true
           LEFT JOIN LATERAL (SELECT y.hash, y.size, y.content_type FROM storage.blobs y
                               WHERE y.hash = s.blob_hash AND m.file_hash IS NULL OFFSET 0) l ON true`,
};
// The statement of OxiFileRowStream (packages/storage/src/oxicloud/oxi-file-row-stream.ts), page 1000.
const segmentSql = (joins) => `
  WITH s AS MATERIALIZED (
    SELECT o.*, row_number() OVER w AS rn,
           (row_number() OVER w % 1000 = 0 OR lead(o.id) OVER w IS NULL) AS marker
      FROM (SELECT id, drive_id, folder_id, blob_hash, size, mime_type, created_at
              FROM storage.files WHERE id > $1::uuid ORDER BY id LIMIT $2) o
    WINDOW w AS (ORDER BY o.id)
  ),
  m AS MATERIALIZED (
    SELECT cm.file_hash, cm.total_size, cm.content_type, cm.chunk_hashes
      FROM storage.chunk_manifests cm WHERE cm.file_hash IN (SELECT DISTINCT s.blob_hash FROM s)
  ),
  broken AS MATERIALIZED (
    SELECT DISTINCT m.file_hash FROM m CROSS JOIN LATERAL unnest(m.chunk_hashes) c(h)
      LEFT JOIN storage.blobs cb ON cb.hash = c.h WHERE cb.hash IS NULL
  )
  SELECT s.id::text AS id, s.rn, s.marker, a.anomalous
    FROM s
    ${joins}
    CROSS JOIN LATERAL (
      SELECT m.file_hash IS NULL AND l.hash IS NULL OR bk.file_hash IS NOT NULL AS missing,
             COALESCE(m.total_size, l.size) AS size,
             CASE WHEN m.file_hash IS NOT NULL THEN m.content_type ELSE l.content_type END AS content_type
    ) k
    CROSS JOIN LATERAL (
      SELECT (s.created_at <= now() AND (COALESCE(d.drive_id <> s.drive_id, false) OR k.missing
               OR k.size <> s.size OR COALESCE(${MIME('s.mime_type')} <> ${MIME('k.content_type')}, false))) AS anomalous
    ) a
   WHERE s.marker OR a.anomalous`;

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
    `SELECT (SELECT count(*) FROM storage.folders)::int AS folders, (SELECT count(*) FROM storage.blobs)::int AS blobs,
            (SELECT count(*) FROM storage.chunk_manifests)::int AS manifests`,
  );
  console.log(
    `\n${files} files, ${sizes[0].folders} folders, ${sizes[0].manifests} manifests, ${sizes[0].blobs} blob rows; ` +
      `yardstick ${yRate.toFixed(0)} rows/s\n`,
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
