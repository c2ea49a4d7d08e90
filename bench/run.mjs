#!/usr/bin/env node
// The benchmark harness (issue 8, and issue 5's performance benchmark). Not part of `pnpm test`.
// Runs on OxiCloud's storage domain (issue 30): the schema of `migrate(pool, { domain: 'oxicloud' })`,
// data from `generateOxiCloudDataset`, the server with OXICLOUD_STORAGE_DOMAIN=oxicloud.
//
//   pnpm bench                                   # everything, 1,000,000 files, ~100,000 contents on disk
//   pnpm bench -- --only scan,deep --files 100000 --blobs 10000
//
// Every figure is a RATIO against a yardstick measured in the same run on the same database.
// Writes bench/results/latest.json and bench/results/latest.md (the tables), prints the tables.
import { execSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import {
  b3sumBench,
  deepBench,
  directScan,
  migrationBench,
  overheadBench,
  scanChecks,
  serverScan,
  trafficBench,
  yardstick,
} from './lib/benchmarks.mjs';
import { seedDatabase } from './lib/dataset.mjs';
import { faultsBench } from './lib/faults-bench.mjs';
import { findingsListingBench } from './lib/findings-bench.mjs';
import { createDatabase, serverVersion, startPostgres } from './lib/postgres.mjs';
import { renderMarkdown } from './lib/report.mjs';
import { ROOT, startServer } from './lib/server.mjs';

const ALL = [
  'scan',
  'memory',
  'checkpoint',
  'traffic',
  'deep',
  'migration',
  'overhead',
  'findings',
  'faults',
];
// `pnpm bench -- --only scan` may hand the `--` through: drop it, it would end option parsing.
const argv = process.argv.slice(2).filter((arg, i) => !(i === 0 && arg === '--'));
const { values } = parseArgs({
  args: argv,
  options: {
    only: { type: 'string', default: ALL.join(',') },
    files: { type: 'string', default: '1000000' },
    'small-files': { type: 'string', default: '100000' },
    blobs: { type: 'string', default: '100000' },
    'blob-size-min': { type: 'string', default: '4096' },
    'blob-size-max': { type: 'string', default: '65535' },
    'multi-chunk-share': { type: 'string', default: '0.01' },
    'work-dir': { type: 'string', default: join(ROOT, 'bench/data') },
    rate: { type: 'string', default: '20' },
    'throttle-ms': { type: 'string', default: '10' },
    'overhead-runs': { type: 'string', default: '300' },
    'faults-per-kind': { type: 'string', default: '20' },
    out: { type: 'string', default: join(ROOT, 'bench/results') },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
  allowPositionals: true,
});
if (values.help) {
  console.log(`node bench/run.mjs [--only ${ALL.join(',')}] [--files 1000000] [--small-files 100000]
  [--blobs 100000] [--blob-size-min 4096] [--blob-size-max 65535] [--multi-chunk-share 0.01]
  [--rate 20] [--throttle-ms 10]
  [--overhead-runs 300] [--faults-per-kind 20] [--work-dir bench/data] [--out bench/results] [--keep]`);
  process.exit(0);
}
const only = new Set(
  values.only
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);
for (const name of only)
  if (!ALL.includes(name)) throw new Error(`--only: unknown benchmark ${name}; known: ${ALL.join(', ')}`);
const int = (k) => {
  const n = Number(values[k]);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`--${k} must be a whole number, got ${values[k]}`);
  return n;
};
const files = int('files');
const smallFiles = int('small-files');
const blobs = Math.min(int('blobs'), files);
const blobSize = { min: int('blob-size-min'), max: int('blob-size-max') };
if (blobSize.min < 64 || blobSize.max > 65535 || blobSize.min > blobSize.max)
  throw new Error(
    '--blob-size-min/--blob-size-max: one-chunk sizes, 64 <= min <= max <= 65535 (under 64 KiB)',
  );
const multiChunkShare = Number(values['multi-chunk-share']);
if (!(multiChunkShare >= 0 && multiChunkShare <= 0.5))
  throw new Error(`--multi-chunk-share must be a fraction from 0 to 0.5, got ${values['multi-chunk-share']}`);
const rate = int('rate');
const throttleMs = int('throttle-ms');
const workDir = values['work-dir'];

const t0 = Date.now();
const log = (line) => console.error(`[${((Date.now() - t0) / 1000).toFixed(0).padStart(5)} s] ${line}`);
const sh = (cmd) => {
  try {
    return execSync(cmd, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'n/a';
  }
};

const results = {
  startedAt: new Date().toISOString(),
  command: `node bench/run.mjs ${argv.join(' ')}`.trim(),
  machine: {
    nproc: os.availableParallelism(),
    memoryGiB: os.totalmem() / 2 ** 30,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    kernel: os.release(),
    node: process.version,
    b3sum: sh('b3sum --version'),
    disk: sh(`df -h ${JSON.stringify(ROOT)} | tail -1`),
    commit: sh(`git -C ${JSON.stringify(ROOT)} rev-parse --short HEAD`),
  },
  domain: 'oxicloud',
  sizes: { files, smallFiles, blobs, blobSize, multiChunkShare },
  only: [...only],
};

mkdirSync(workDir, { recursive: true });
const postgres = await startPostgres(workDir);
results.postgres = { description: postgres.description, flags: postgres.flags };
let server;
try {
  const needsLarge = ['scan', 'checkpoint', 'traffic', 'deep', 'migration', 'overhead', 'memory'].some((b) =>
    only.has(b),
  );
  if (needsLarge) {
    const url = await createDatabase(postgres.adminUrl, 'oxicloud_bench');
    results.postgres.version = await serverVersion(url);
    const dataDir = join(workDir, 'large');
    rmSync(dataDir, { recursive: true, force: true });
    log(
      `seeding ${files} files, ~${blobs} contents (one-chunk ${blobSize.min}..${blobSize.max} B, ${multiChunkShare} multi-chunk) …`,
    );
    const seeded = await seedDatabase({
      databaseUrl: url,
      dataDir,
      files,
      blobs,
      blobSize,
      multiChunkShare,
      log,
    });
    const { faults: _none, ...dataset } = seeded;
    results.dataset = dataset;
    log(`seeded in ${(seeded.seedMs / 1000).toFixed(1)} s: ${JSON.stringify(seeded.counts)}`);
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    // An idle client of a Postgres stopped after a failure must not hide that failure.
    pool.on('error', () => undefined);

    server = await startServer({ databaseUrl: url, dataDir, adminUser: seeded.adminUser });
    log(`server pid ${server.pid} at ${server.base}`);
    const idleMemory = (await import('./lib/server.mjs')).memoryOf(server.pid);
    results.serverIdleRssMiB = idleMemory.rssKiB / 1024;

    if (only.has('scan') || only.has('memory') || only.has('checkpoint') || only.has('traffic')) {
      results.scan = [];
      for (const name of await scanChecks(server)) {
        const y = await yardstick(pool, name);
        if (y) log(`yardstick ${name}: ${y.rows} rows in ${y.ms.toFixed(0)} ms (bad ${y.bad})`);
        else log(`yardstick ${name}: none (measured without a ratio)`);
        const check = await serverScan(server, name);
        log(
          `${name}: ${check.scanned} scanned in ${check.ms} ms, peak RSS ${check.memory.peakRssMiB.toFixed(0)} MiB`,
        );
        results.scan.push({ name, yardstick: y, check });
      }
    }
    if (only.has('checkpoint')) {
      log(
        'checkpoint cost: files_consistency batch_size 10000 through the server, direct in-memory 1000 and 1e6 …',
      );
      const big = await serverScan(server, 'files_consistency', { batch_size: 10_000 });
      const direct1000 = await directScan(url, 'files_consistency', 1000);
      const directHuge = await directScan(url, 'files_consistency', 1_000_000_000);
      const folders10k = await serverScan(server, 'folders_consistency', { batch_size: 10_000 });
      results.checkpoint = { big, direct1000, directHuge, folders10k };
    }
    if (only.has('traffic')) {
      log(
        `traffic: GET /api/admin/jobs at ${rate}/s idle, during files_consistency, with throttle_ms ${throttleMs} …`,
      );
      results.traffic = await trafficBench(server, { rate, idleS: 10, throttleMs });
    }
    if (only.has('deep')) {
      log('deep verify: storage_consistency deep=true …');
      const deep = await deepBench(server, { rate });
      log(`deep: ${deep.scan.ms} ms; b3sum …`);
      const b3One = b3sumBench(seeded.blobDir, 1);
      const b3Default = b3sumBench(seeded.blobDir, 0);
      results.deep = {
        ...deep,
        b3One,
        b3Default,
        bytes: seeded.counts.blob_bytes,
        blobs: seeded.counts.blobs,
      };
    }
    await server.stop();
    server = undefined;
    if (only.has('migration')) {
      log('migration fs → fs …');
      results.migration = {
        ...(await migrationBench({
          databaseUrl: url,
          storageRoot: seeded.storageRoot,
          blobDir: seeded.blobDir,
          workDir,
          concurrencies: [undefined, 32],
        })),
        bytes: seeded.counts.blob_bytes,
        blobs: seeded.counts.blobs,
      };
    }
    if (only.has('overhead')) {
      log('run overhead: recoverable run vs pg-boss 10.4.2 …');
      results.overhead = await overheadBench({ databaseUrl: url, runs: int('overhead-runs'), warmup: 20 });
    }
    await pool.end();
  }
  if (only.has('memory')) {
    const url = await createDatabase(postgres.adminUrl, 'oxicloud_bench_small');
    const dataDir = join(workDir, 'small');
    rmSync(dataDir, { recursive: true, force: true });
    log(`memory: seeding ${smallFiles} files …`);
    const seeded = await seedDatabase({
      databaseUrl: url,
      dataDir,
      files: smallFiles,
      blobs: Math.min(Math.ceil(smallFiles / 10), smallFiles),
      blobSize,
      multiChunkShare,
      log,
    });
    server = await startServer({ databaseUrl: url, dataDir, adminUser: seeded.adminUser });
    const small = [];
    for (const name of await scanChecks(server)) small.push(await serverScan(server, name));
    await server.stop();
    server = undefined;
    results.memory = { small, smallCounts: seeded.counts };
  }
  if (only.has('findings')) {
    const url = await createDatabase(postgres.adminUrl, 'oxicloud_bench_findings');
    log('findings listing: 100,000 findings over 20 runs, first page against a deep page …');
    results.findings = await findingsListingBench({ databaseUrl: url, log });
  }
  if (only.has('faults')) {
    results.postgres.version ??= await serverVersion(postgres.adminUrl);
    results.faults = await faultsBench({
      adminUrl: postgres.adminUrl,
      createDatabase,
      workDir,
      files,
      blobs,
      blobSize,
      multiChunkShare,
      faultsPerKind: int('faults-per-kind'),
      log,
    });
  }
} finally {
  await server?.stop();
  await postgres.stop();
  if (!values.keep) rmSync(workDir, { recursive: true, force: true });
}
results.totalSeconds = (Date.now() - t0) / 1000;
mkdirSync(values.out, { recursive: true });
const markdown = renderMarkdown(results);
writeFileSync(join(values.out, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
writeFileSync(join(values.out, 'latest.md'), markdown);
console.log(markdown);
log(`done; wrote ${join(values.out, 'latest.md')} and latest.json`);
