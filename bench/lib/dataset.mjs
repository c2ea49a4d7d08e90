// Migrates a bench database to OxiCloud's storage domain and fills it with @oxicloud/dataset's
// OxiCloud generator (`oxijobs seed` with OXICLOUD_STORAGE_DOMAIN=oxicloud).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  backdateLocalBlob,
  describeOxiCloudDatasetReport,
  generateOxiCloudDataset,
  oxiUsernamePrefix,
} from '@oxicloud/dataset';
import { migrate } from '@oxicloud/migrations';
import { LocalFsBlobStorage } from '@oxicloud/storage';
import pg from 'pg';
import { createDatabase } from './postgres.mjs';

const MiB = 1024 * 1024;
/** The generator's seed: the first user, `o1-u000001`, is an admin (the server's token user). */
const SEED = 1;

/**
 * The generator's options for a bench size (the mapping the README documents):
 *
 * - `files` files over `users` = files / 1000 internal users (each a personal drive) and
 *   ceil(users / 5) shared drives, `filesPerDrive` = files / drives;
 * - `blobs` distinct contents: `dedupShare` = 1 − blobs / files (every other file reuses an
 *   earlier content, as the old bench's 10 files per blob row did); each content has its bytes
 *   in the store: a one-chunk blob, a legacy whole-file blob, or a multi-chunk manifest's chunks;
 * - one-chunk sizes `blobSize` (log-uniform, under 64 KiB), `multiChunkShare` of the files
 *   multi-chunk (1 MiB + 1 to 2 MiB, FastCDC-sized chunks of 64 KiB–1 MiB), 10 % legacy blobs
 *   (1–256 KiB), 3 % empty, 20 % images (thumbnails), trash as the generator's defaults.
 *
 * `minDrives` raises the users (faults take drives out of each other's reach).
 */
export function datasetOptions({ files, blobs, blobSize, multiChunkShare, minDrives = 0 }) {
  let users = Math.max(1, Math.round(files / 1000));
  const sharedOf = (u) => Math.ceil(u / 5);
  while (users + sharedOf(users) < minDrives) users++;
  const sharedDrives = sharedOf(users);
  const filesPerDrive = Math.max(1, Math.round(files / (users + sharedDrives)));
  const dedupShare = files > 0 ? Math.min(0.99, Math.max(0, 1 - blobs / files)) : 0;
  return {
    users,
    sharedDrives,
    filesPerDrive,
    dedupShare,
    multiChunkFileShare: multiChunkShare,
    multiChunkSize: { min: MiB + 1, max: 2 * MiB },
    ...(blobSize ? { oneChunkSize: { min: blobSize.min, max: Math.min(blobSize.max, 64 * 1024 - 1) } } : {}),
    seed: SEED,
  };
}

/**
 * Migrates (`domain: 'oxicloud'`), generates `datasetOptions(...)` with real bytes under
 * `<dataDir>/storage/.blobs/<aa>/<hash>.blob` (the server's default storage root for that data
 * dir, OxiCloud's layout) and thumbnails under `<dataDir>/storage/.thumbnails`, then VACUUM ANALYZE.
 * `faults` (names, `faultsPerKind` each) are injected as `oxijobs seed --faults` does; the
 * result's `faults` are the generator's records.
 */
export async function seedDatabase({
  databaseUrl,
  dataDir,
  files,
  blobs,
  blobSize,
  multiChunkShare = 0.01,
  log,
  faults,
  faultsPerKind,
  minDrives,
}) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  try {
    const migrated = await migrate(pool, { domain: 'oxicloud' });
    if (migrated.error) throw migrated.error;
    const storageRoot = join(dataDir, 'storage'); // the server's default OXICLOUD_STORAGE_PATH for this data dir
    mkdirSync(storageRoot, { recursive: true });
    const options = {
      ...datasetOptions({ files, blobs, blobSize, multiChunkShare, minDrives }),
      ...(faults ? { faults, faultsPerKind } : {}),
    };
    let lastPhase = '';
    const t0 = performance.now();
    const storage = new LocalFsBlobStorage({ root: storageRoot });
    const report = await generateOxiCloudDataset({
      pool,
      blobs: storage,
      storageRoot,
      backdateBlob: backdateLocalBlob((hash) => storage.pathOf(hash)),
      options,
      onProgress: (p) => {
        if (p.phase !== lastPhase) {
          lastPhase = p.phase;
          log(`  seed: ${p.phase} (${Math.round(p.elapsedMs / 1000)} s)`);
        }
      },
    });
    const seedMs = performance.now() - t0;
    const t1 = performance.now();
    await pool.query('VACUUM ANALYZE');
    const vacuumMs = performance.now() - t1;
    const { rows } = await pool.query(`SELECT (SELECT count(*) FROM storage.files)::int AS files,
      (SELECT count(*) FROM storage.folders)::int AS folders,
      (SELECT count(*) FROM storage.drives)::int AS drives,
      (SELECT count(*) FROM auth.users)::int AS users,
      (SELECT count(*) FROM storage.blobs)::int AS blobs,
      (SELECT count(*) FROM storage.chunk_manifests)::int AS manifests,
      (SELECT count(*) FROM storage.role_grants)::int AS grants,
      (SELECT sum(size) FROM storage.blobs)::float8 AS blob_bytes,
      pg_database_size(current_database())::float8 AS db_bytes`);
    const c = report.counts;
    return {
      counts: {
        ...rows[0],
        multi_chunk_files: c.multiChunkFiles,
        one_chunk_files: c.oneChunkFiles,
        legacy_files: c.legacyFiles,
        empty_files: c.emptyFiles,
        dedup_files: c.dedupFiles,
        chunk_blobs: c.chunkBlobs,
        legacy_blobs: c.legacyBlobs,
        thumbnails: c.thumbnails,
      },
      options,
      seedMs,
      vacuumMs,
      storageRoot,
      blobDir: storage.blobsDir,
      adminUser: `${oxiUsernamePrefix(SEED)}u000001`,
      summary: describeOxiCloudDatasetReport(report),
      faults: report.faults,
    };
  } finally {
    await pool.end();
  }
}

/**
 * The one-off scripts' dataset: a fresh database `name` on `postgres` with `files` files and
 * about `blobs` distinct contents (one-chunk 4–8 KiB) under `workDir/<name>`; logs what it
 * seeded. Returns its URL.
 */
export async function seedScratchDatabase(postgres, { name, workDir, files, blobs, log }) {
  const url = await createDatabase(postgres.adminUrl, name);
  const seeded = await seedDatabase({
    databaseUrl: url,
    dataDir: join(workDir, name),
    files,
    blobs,
    blobSize: { min: 4096, max: 8192 },
    log,
  });
  log(`seeded ${JSON.stringify(seeded.counts)} in ${(seeded.seedMs / 1000).toFixed(1)} s`);
  return url;
}
