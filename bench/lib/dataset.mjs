// Migrates a bench database and fills it with @oxicloud/dataset's generator (`oxijobs seed`'s engine).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { backdateLocalBlob, describeDatasetReport, generateDataset } from '@oxicloud/dataset';
import { migrate } from '@oxicloud/migrations';
import { LocalFsBlobStorage } from '@oxicloud/storage';
import pg from 'pg';
import { createDatabase } from './postgres.mjs';

/**
 * `files` files as `files / 1000` users × 1000 files, `blobs` blobs with real bytes under
 * `<dataDir>/storage/.blobs` (the server's default local storage root for that data dir, in
 * OxiCloud's layout), then VACUUM ANALYZE.
 * `faults` (names, `faultsPerKind` each) are injected as `oxijobs seed --faults` does; the
 * result's `faults` are the generator's records (each fault with the findings it must produce).
 */
export async function seedDatabase({
  databaseUrl,
  dataDir,
  files,
  blobs,
  blobSize,
  log,
  faults,
  faultsPerKind,
}) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  try {
    const migrated = await migrate(pool);
    if (migrated.error) throw migrated.error;
    const root = join(dataDir, 'storage'); // the server's default OXICLOUD_STORAGE_PATH for this data dir
    mkdirSync(root, { recursive: true });
    const users = Math.max(1, Math.round(files / 1000));
    let lastPhase = '';
    const t0 = performance.now();
    const storage = new LocalFsBlobStorage({ root });
    const report = await generateDataset({
      pool,
      blobs: storage,
      backdateBlob: backdateLocalBlob((hash) => storage.pathOf(hash)),
      options: {
        users,
        filesPerUser: Math.round(files / users),
        blobsOnDisk: blobs,
        ...(blobSize ? { blobSize } : {}),
        // Half the users get a second drive: drive faults need pairs of non-empty drives.
        ...(faults ? { faults, faultsPerKind, secondDriveShare: 0.5 } : {}),
      },
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
      (SELECT sum(size) FROM storage.blobs)::float8 AS blob_bytes,
      pg_database_size(current_database())::float8 AS db_bytes`);
    return {
      counts: rows[0],
      seedMs,
      vacuumMs,
      blobRoot: root,
      summary: describeDatasetReport(report),
      faults: report.faults,
    };
  } finally {
    await pool.end();
  }
}

/**
 * The one-off scripts' dataset: a fresh database `name` on `postgres` with `files` file rows and
 * `blobs` small blobs (4–8 KiB) under `workDir/<name>`; logs what it seeded. Returns its URL.
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
