#!/usr/bin/env node
// Issue 32, first "Done when", by hand at scale: `consistency_batch --force --deep` on the
// generator's CLEAN OxiCloud dataset must report 0 findings. Not part of `pnpm test`.
//
//   node bench/clean-batch.mjs [--files 100000] [--multi-chunk-share 0.2]
//                              [--multi-chunk-size-max 1348576] [--shared-chunk-share 0.3] [--seed 1]
//                              [--encrypted] [--work-dir DIR] [--keep]
//
// Embedded Postgres (lib/postgres.mjs), a fresh database migrated with OxiCloud's domain, the
// dataset (generateOxiCloudDataset; users = files / 1000 as lib/dataset.mjs maps them, the
// generator's own dedup share) into a local store under the work dir (AES-256-GCM at rest with
// --encrypted, through the server's createBlobStorage), then the composed server on both
// (lib/server.mjs) and `consistency_batch?force=true&deep=true`. Prints the dataset, the times
// and the findings by check and kind; exits 1 on any finding or any check that did not complete.
import { createSecretKey, randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateOxiCloudDataset } from '@oxicloud/dataset';
import { migrate } from '@oxicloud/migrations';
import { createBlobStorage } from '@oxicloud/server';
import pg from 'pg';
import { datasetOptions } from './lib/dataset.mjs';
import { createDatabase, serverVersion, startPostgres } from './lib/postgres.mjs';
import { ROOT, startServer } from './lib/server.mjs';
import { sleep } from './lib/stats.mjs';

const MiB = 1024 * 1024;
const { values: v } = parseArgs({
  options: {
    files: { type: 'string', default: '100000' },
    'multi-chunk-share': { type: 'string', default: '0.2' },
    'multi-chunk-size-max': { type: 'string', default: String(MiB + 300_000) },
    // The generator's defaults (0.3, 1). Issue 32's 100k run needed 0.2 and seed 8: with 0.3 a
    // shared-chunk content's tail can be a few bytes that name nothing, so two contents that
    // reuse the same prefix come out byte-identical and the generator stops (bench/results.md).
    'shared-chunk-share': { type: 'string', default: '0.3' },
    seed: { type: 'string', default: '1' },
    encrypted: { type: 'boolean', default: false },
    'work-dir': { type: 'string', default: join(ROOT, 'bench/data/clean-batch') },
    keep: { type: 'boolean', default: false },
  },
});
const files = Number(v.files);
const log = (line) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
const workDir = v['work-dir'];
const dataDir = join(workDir, 'server');
const storageRoot = join(dataDir, 'storage'); // the server's default OXICLOUD_STORAGE_PATH for that data dir

rmSync(workDir, { recursive: true, force: true });
mkdirSync(storageRoot, { recursive: true });
const postgres = await startPostgres(workDir);
let server;
let failed = true;
try {
  const url = await createDatabase(postgres.adminUrl, 'oxicloud_clean_batch');
  log(`Postgres ${await serverVersion(url)}: ${postgres.description}`);
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  try {
    const migrated = await migrate(pool, { domain: 'oxicloud' });
    if (migrated.error) throw migrated.error;

    // The dataset: the bench's size mapping, the generator's dedup share, multi-chunk files of
    // 1 MiB + 1 .. --multi-chunk-size-max (the generator refuses anything not over 1 MiB).
    const { dedupShare: _, ...mapped } = datasetOptions({ files, blobs: files, multiChunkShare: 0 });
    const options = {
      ...mapped,
      multiChunkFileShare: Number(v['multi-chunk-share']),
      multiChunkSize: { min: MiB + 1, max: Number(v['multi-chunk-size-max']) },
      sharedChunkShare: Number(v['shared-chunk-share']),
      seed: Number(v.seed),
    };
    const key = v.encrypted ? randomBytes(32) : null;
    const blobs = createBlobStorage(
      { backend: 'local', root: storageRoot },
      key ? { key: createSecretKey(key) } : null,
    );
    log(`generating ${JSON.stringify(options)}${key ? ', AES-256-GCM at rest' : ''} …`);
    let phase = '';
    const report = await generateOxiCloudDataset({
      pool,
      blobs,
      storageRoot,
      options,
      onProgress: (p) => {
        if (p.phase === phase) return;
        phase = p.phase;
        log(`  ${phase} (${s(p.elapsedMs)})`);
      },
    });
    const c = report.counts;
    log('VACUUM ANALYZE …');
    await pool.query('VACUUM ANALYZE');
    console.log(
      `dataset: ${c.files} files (${c.multiChunkFiles} multi-chunk, ${c.oneChunkFiles} one-chunk, ` +
        `${c.legacyFiles} legacy, ${c.emptyFiles} empty; ${c.dedupFiles} sharing content), ${c.folders} folders, ` +
        `${c.personalDrives + c.sharedDrives} drives, ${c.manifests} manifests, ${c.chunkBlobs} chunk blobs ` +
        `(${c.sharedChunks} shared), ${c.legacyBlobs} legacy blobs, ${(c.blobBytes / 1e9).toFixed(2)} GB of blob bytes, ` +
        `${c.thumbnails} thumbnails, ${c.grants} grants, ${c.shares} shares${key ? '; encrypted at rest' : ''}`,
    );
    console.log(
      `generated in ${s(report.durationMs)} (${Object.entries(report.phaseMs)
        .map(([p, ms]) => `${p} ${s(ms)}`)
        .join(', ')})`,
    );

    // The composed server on that database and store (lib/server.mjs's env, plus the key).
    if (key) {
      process.env.OXICLOUD_STORAGE_ENCRYPTION_ENABLED = 'true';
      process.env.OXICLOUD_STORAGE_ENCRYPTION_KEY = key.toString('base64');
    }
    server = await startServer({ databaseUrl: url, dataDir, adminUser: `${report.usernamePrefix}u000001` });
    log('consistency_batch force=true deep=true …');
    const t0 = Date.now();
    await server.api('POST', '/api/admin/jobs/consistency_batch/trigger?force=true&deep=true&wait=false', {});
    let batch;
    let jobs;
    for (;;) {
      jobs = await server.api('GET', '/api/admin/jobs');
      batch = jobs.find((j) => j.name === 'consistency_batch');
      if (batch && !batch.running && Date.parse(batch.last_outcome?.at ?? 0) >= t0 - 1000) break;
      await sleep(1000);
    }
    const wallMs = Date.now() - t0;
    const outcome = batch.last_outcome.outcome;
    const extra = outcome.extra ?? {};
    console.log(
      `consistency_batch: ${outcome.kind}, ${s(wallMs)} wall; completed ${extra.completed}, paused ${extra.paused}, ` +
        `failed ${extra.failed}, skipped ${extra.skipped}, deep ${extra.deep}, force ${extra.force}`,
    );
    const runIds = [];
    for (const [check, entry] of Object.entries(extra.per_check ?? {})) {
      const run = entry.run_id
        ? (
            await pool.query(
              `SELECT status, started_at, completed_at, stats FROM jobs.recoverable_runs WHERE id = $1`,
              [entry.run_id],
            )
          ).rows[0]
        : undefined;
      if (entry.run_id) runIds.push(entry.run_id);
      const o = entry.outcome;
      const what = o?.kind === 'err' ? `err: ${o.message}` : (o?.kind ?? entry.skipped);
      console.log(
        `  ${check.padEnd(24)} ${String(run?.status ?? what).padEnd(10)} ` +
          `${run ? s(run.completed_at - run.started_at).padStart(8) : ''} ` + // Dates from pg: ms kept
          `scanned ${run?.stats?.scanned_count ?? '-'}, findings ${o?.count ?? '-'} ` +
          `(of ${jobs.find((j) => j.name === check)?.finding_kinds?.length ?? '?'} declared kinds)`,
      );
    }

    // The findings tables: this batch's runs (run_findings, run_unexamined) and the ledger.
    const byKind = await pool.query(
      `SELECT r.job_name, f.kind, f.severity, count(*)::int AS n,
              (array_agg(f.resource_id ORDER BY f.resource_id))[1:3] AS sample,
              (array_agg(f.detail::text ORDER BY f.resource_id))[1] AS detail
         FROM jobs.run_findings f JOIN jobs.recoverable_runs r ON r.id = f.run_id
        WHERE f.run_id = ANY($1::uuid[]) GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
      [runIds],
    );
    const ledger = await pool.query(
      `SELECT check_name, kind, state, count(*)::int AS n FROM jobs.findings GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    );
    const unexamined = await pool.query(
      `SELECT r.job_name, u.kind, u.reason, count(*)::int AS n
         FROM jobs.run_unexamined u JOIN jobs.recoverable_runs r ON r.id = u.run_id
        WHERE u.run_id = ANY($1::uuid[]) GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
      [runIds],
    );
    const total = byKind.rows.reduce((a, r) => a + r.n, 0);
    console.log(`findings: ${total} (jobs.run_findings of the batch's ${runIds.length} runs)`);
    for (const r of byKind.rows) {
      console.log(
        `  ${r.job_name} ${r.kind} ${r.severity}: ${r.n}, e.g. ${r.sample.join(', ')}; ${r.detail}`,
      );
    }
    for (const r of ledger.rows)
      console.log(`  ledger jobs.findings ${r.check_name} ${r.kind} ${r.state}: ${r.n}`);
    for (const r of unexamined.rows)
      console.log(`  unexamined ${r.job_name} ${r.kind} (${r.reason}): ${r.n}`);
    const incomplete = extra.failed + extra.paused + extra.skipped;
    failed = total > 0 || ledger.rows.length > 0 || incomplete > 0 || (extra.checks ?? []).length === 0;
    console.log(failed ? 'NOT CLEAN' : 'clean: 0 findings, every check completed');
  } finally {
    await pool.end();
  }
} finally {
  await server?.stop();
  await postgres.stop();
  if (!v.keep) rmSync(workDir, { recursive: true, force: true });
  else log(`kept ${workDir} (the Postgres data folder is removed with its server)`);
}
process.exit(failed ? 1 : 0);
