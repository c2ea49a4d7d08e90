import type { BlobStorage } from '@oxicloud/tenants';
import type pg from 'pg';
import { BLOB_KINDS, Blake3, blobBytes, STREAM } from './blob-content.js';
import { DatasetError, isDatasetError } from './errors.js';
import { injectDatabaseFaults, type StorageFaultAction } from './inject-faults.js';
import { type DatasetOptions, type ResolvedDatasetOptions, resolveDatasetOptions } from './options.js';
import { type DatasetPlan, planDataset, secondDrivePpm } from './plan.js';
import type { DatasetCounts, DatasetPhase, DatasetProgress, DatasetReport, FaultRecord } from './report.js';
import { rows, type SqlClient, toInt } from './sql-client.js';

/** The structured logger the generator writes to: pino and `@oxicloud/scheduler`'s `Logger` fit. */
export interface DatasetLogger {
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
}

/** Input of {@link generateDataset}. */
export interface GenerateDatasetInput {
  /** The database (migrated) to write into. One connection is used for the whole generation. */
  readonly pool: pg.Pool;
  /** Where the blob bytes go (the configured backend: local disk or S3). */
  readonly blobs: BlobStorage;
  readonly options: DatasetOptions;
  readonly logger?: DatasetLogger;
  /** Called as each phase advances (about every 1% of a long phase). */
  readonly onProgress?: (progress: DatasetProgress) => void;
  /**
   * Sets a stored blob's modification time. The `BlobStorage` port cannot
   * do it, so the caller who knows the backend may pass it (local disk:
   * `utimes` on the blob's file). Used for `orphan_blob_on_disk`, so the
   * orphan is older than `storage_consistency`'s grace window.
   */
  readonly backdateBlob?: (hash: string, modifiedAt: Date) => Promise<void>;
}

const TARGET = 'oxicloud::dataset';
const DAY_SECONDS = 86_400;
/** Two primes for the file → blob permutation; the one that does not divide the blob count is used. */
const BLOB_PRIMES = [1_000_003, 999_983] as const;
const FILE_WORDS = [
  'report',
  'photo',
  'track',
  'invoice',
  'notes',
  'scan',
  'draft',
  'summary',
  'slides',
  'budget',
  'letter',
  'contract',
  'recording',
  'export',
  'backup',
  'image',
  'song',
  'memo',
  'plan',
  'receipt',
  'minutes',
  'cover',
];
const CHUNK = 20_000;

/** Usernames of a dataset start with this: `s<seed>-`. */
export function usernamePrefix(seed: number): string {
  return `s${seed}-`;
}

/**
 * Generates a dataset: users, drives, folder trees, files, blob rows and
 * the blob bytes, then the requested faults. The clean part is consistent
 * (see the package README for every invariant): drive `used_bytes` = sum of
 * its files' sizes, trashed files included; user `storage_used_bytes` = sum
 * of the user's drives; `files.size` = `blobs.size`; folder `path`/`lpath`
 * from the triggers; `ref_count` from the triggers and never 0; trash is
 * whole subtrees, 1 to 7 days old; no expired grant; every blob row has
 * bytes and every written blob has a row; every row is at least a day old.
 *
 * Rows are written in ONE transaction with set-based statements
 * (`INSERT … SELECT` over `generate_series` and `unnest`, folders level by
 * level, files `filesPerStatement` at a time). Blob bytes are written first,
 * `writeConcurrency` at a time.
 *
 * @throws DatasetError `INVALID_OPTIONS` before anything is written; `ALREADY_SEEDED`;
 *   `FAULT_NOT_APPLICABLE` (rows rolled back); `GENERATION_FAILED` with the cause.
 * @example
 * ```ts
 * const report = await generateDataset({
 *   pool, blobs: new LocalFsBlobStorage({ root: './.oxicloud/storage' }),
 *   options: { users: 1000, filesPerUser: 1000, blobsOnDisk: 100_000, faults: parseFaults('all') },
 * });
 * console.log(describeDatasetReport(report));
 * ```
 */
export async function generateDataset(input: GenerateDatasetInput): Promise<DatasetReport> {
  const options = resolveDatasetOptions(input.options);
  const started = Date.now();
  const phaseMs: Partial<Record<DatasetPhase, number>> = {};
  let phaseStarted = started;
  let currentPhase: DatasetPhase = 'plan';
  const log = input.logger;
  const progress = (phase: DatasetPhase, done: number, total: number): void => {
    if (phase !== currentPhase) {
      phaseMs[currentPhase] = Date.now() - phaseStarted;
      log?.info(
        { target: TARGET, event: 'dataset.phase', phase: currentPhase, ms: phaseMs[currentPhase] },
        `dataset phase ${currentPhase} done`,
      );
      currentPhase = phase;
      phaseStarted = Date.now();
    }
    input.onProgress?.({ phase, done, total, elapsedMs: Date.now() - started });
  };
  const prefix = usernamePrefix(options.seed);

  const client = await input.pool.connect();
  try {
    const seeded = await rows(client, 'SELECT 1 FROM auth.users WHERE username = $1', [`${prefix}u0000001`]);
    if (seeded.length > 0) {
      throw new DatasetError(
        'ALREADY_SEEDED',
        `the database already holds a dataset with seed ${options.seed} (user ${prefix}u0000001 exists): ` +
          'use another seed or a fresh database',
      );
    }

    progress('plan', 0, 1);
    const plan = planDataset(options);
    const blake3 = await Blake3.create();
    progress('plan', 1, 1);

    const hashes: string[] = new Array(plan.blobs.length);
    try {
      await writeBlobBytes(input.blobs, options, plan, blake3, hashes, (done) =>
        progress('blob_bytes', done, plan.blobs.length),
      );
    } catch (err) {
      // A write failed: the bytes already written have no row (none are inserted yet). Remove them.
      await removeBytesWithoutRows(client, input.blobs, hashes).catch(() => undefined);
      throw err;
    }

    let faults: FaultRecord[] = [];
    let storageActions: StorageFaultAction[] = [];
    let counts: DatasetCounts;
    await client.query('BEGIN');
    try {
      await client.query("SET LOCAL work_mem = '64MB'");
      await client.query('SET LOCAL synchronous_commit = off');
      await createScratchTables(client);
      progress('users', 0, options.users);
      await insertUsers(client, options, prefix);
      progress('users', options.users, options.users);
      progress('drives', 0, plan.drives.length);
      await insertDrives(client, plan);
      progress('drives', plan.drives.length, plan.drives.length);
      await insertFolders(client, plan, (done) => progress('folders', done, plan.folderCount));
      await insertBlobRows(client, plan, hashes, (done) => progress('blob_rows', done, plan.blobs.length));
      await insertFiles(client, options, (done) =>
        progress('files', done, options.users * options.filesPerUser),
      );
      progress('usage', 0, 1);
      await recomputeUsage(client);
      progress('usage', 1, 1);
      progress('grants', 0, options.grants);
      await insertGrants(client, options);
      progress('grants', options.grants, options.grants);
      counts = await countDataset(client, plan, options);
      progress('faults', 0, options.faults.length);
      ({ records: faults, storageActions } = await injectDatabaseFaults({
        client,
        options,
        blake3,
        onFault: (done) => progress('faults', done, options.faults.length),
      }));
      progress('commit', 0, 1);
      await client.query('COMMIT');
      progress('commit', 1, 1);
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      // Nothing half-written: the rows rolled back, so the bytes this call
      // wrote that no row describes would be orphans on disk. Remove them.
      await removeBytesWithoutRows(client, input.blobs, hashes).catch(() => undefined);
      throw err;
    }

    progress('storage_faults', 0, storageActions.length);
    let done = 0;
    for (const action of storageActions) {
      if (action.type === 'delete') {
        await input.blobs.delete(action.hash);
      } else {
        await input.blobs.put(action.hash, action.bytes, action.bytes.length);
        if (input.backdateBlob) await input.backdateBlob(action.hash, action.modifiedAt);
      }
      progress('storage_faults', ++done, storageActions.length);
    }
    phaseMs[currentPhase] = Date.now() - phaseStarted;

    const report: DatasetReport = {
      options,
      usernamePrefix: prefix,
      counts,
      faults,
      phaseMs,
      durationMs: Date.now() - started,
    };
    log?.info(
      {
        target: TARGET,
        event: 'dataset.generated',
        counts,
        faults: faults.map((f) => f.fault),
        ms: report.durationMs,
      },
      'dataset generated',
    );
    return report;
  } catch (err) {
    if (isDatasetError(err)) throw err;
    throw new DatasetError(
      'GENERATION_FAILED',
      `dataset generation failed in phase ${currentPhase}: ${(err as Error).message}`,
      { cause: err },
    );
  } finally {
    client.release();
  }
}

/** Deletes the bytes of `hashes` that have no `storage.blobs` row (after a rolled-back generation). */
async function removeBytesWithoutRows(
  client: SqlClient,
  storage: BlobStorage,
  hashes: string[],
): Promise<void> {
  for (let start = 0; start < hashes.length; start += 10_000) {
    const chunk = hashes.slice(start, start + 10_000).filter((h): h is string => typeof h === 'string');
    const kept = new Set(
      (
        await rows<{ hash: string }>(client, 'SELECT hash FROM storage.blobs WHERE hash = ANY($1::text[])', [
          chunk,
        ])
      ).map((r) => r.hash),
    );
    for (const hash of chunk) if (!kept.has(hash)) await storage.delete(hash);
  }
}

/**
 * Generates, hashes and writes every blob's bytes, `writeConcurrency` at a
 * time, filling `hashes` by blob number (before each write: on a failure it
 * names every blob that may have been written).
 */
async function writeBlobBytes(
  storage: BlobStorage,
  options: ResolvedDatasetOptions,
  plan: DatasetPlan,
  blake3: Blake3,
  hashes: string[],
  onProgress: (done: number) => void,
): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  const step = Math.max(1, Math.floor(plan.blobs.length / 100));
  let done = 0;
  let failure: unknown;
  onProgress(0);
  for (let i = 0; i < plan.blobs.length; i++) {
    if (failure !== undefined) break;
    const blob = plan.blobs[i] as (typeof plan.blobs)[number];
    const bytes = blobBytes(options.seed, STREAM.blobBytes, i, blob.size, blob.kind);
    const hash = blake3.hex(bytes);
    hashes[i] = hash;
    const write: Promise<void> = storage
      .put(hash, bytes, bytes.length)
      .then(
        () => {
          done++;
          if (done % step === 0) onProgress(done);
        },
        (err: unknown) => {
          failure ??= err;
        },
      )
      .finally(() => inFlight.delete(write));
    inFlight.add(write);
    if (inFlight.size >= options.writeConcurrency) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  if (failure !== undefined) {
    throw new DatasetError('GENERATION_FAILED', `writing blob bytes failed: ${(failure as Error).message}`, {
      cause: failure,
    });
  }
  onProgress(plan.blobs.length);
}

async function createScratchTables(client: SqlClient): Promise<void> {
  await client.query(`
    CREATE TEMP TABLE ds_users (
      user_no int PRIMARY KEY, id uuid NOT NULL, username text NOT NULL, drive_count int NOT NULL
    ) ON COMMIT DROP;
    CREATE TEMP TABLE ds_drives (
      drive_no int PRIMARY KEY, user_no int NOT NULL, drive_idx int NOT NULL,
      id uuid NOT NULL DEFAULT public.oxicloud_uuid_v7(), name text NOT NULL, username text,
      folder_count int NOT NULL, UNIQUE (user_no, drive_idx)
    ) ON COMMIT DROP;
    CREATE TEMP TABLE ds_folders (
      drive_no int NOT NULL, folder_no int NOT NULL, parent_no int NOT NULL, depth int NOT NULL, name text NOT NULL,
      trashed_ago int, created_ago int NOT NULL, id uuid NOT NULL DEFAULT public.oxicloud_uuid_v7(),
      PRIMARY KEY (drive_no, folder_no)
    ) ON COMMIT DROP;
    CREATE TEMP TABLE ds_blobs (
      blob_no int PRIMARY KEY, hash text NOT NULL, size bigint NOT NULL, content_type text NOT NULL, ext text NOT NULL
    ) ON COMMIT DROP;
  `);
}

async function insertUsers(
  client: SqlClient,
  options: ResolvedDatasetOptions,
  prefix: string,
): Promise<void> {
  // drive_count: the integer twin of hasSecondDrive() in plan.ts.
  await client.query(
    `INSERT INTO ds_users (user_no, id, username, drive_count)
     SELECT n, public.oxicloud_uuid_v7(), $1::text || 'u' || lpad((n + 1)::text, 7, '0'),
            CASE WHEN ((n + 1)::bigint * $3::bigint) / 1000000 > (n::bigint * $3::bigint) / 1000000 THEN 2 ELSE 1 END
       FROM generate_series(0, $2::int - 1) n`,
    [prefix, options.users, secondDrivePpm(options.secondDriveShare)],
  );
  await client.query(
    `INSERT INTO auth.users (id, username, email, role, storage_used_bytes, created_at)
     SELECT id, username, username || '@dataset.oxicloud.test', 'user', 0, now() - interval '120 days'
       FROM ds_users ORDER BY user_no`,
  );
  await client.query('ANALYZE ds_users');
}

async function insertDrives(client: SqlClient, plan: DatasetPlan): Promise<void> {
  for (let at = 0; at < plan.drives.length; at += CHUNK) {
    const part = plan.drives.slice(at, at + CHUNK);
    await client.query(
      `INSERT INTO ds_drives (drive_no, user_no, drive_idx, name, folder_count)
       SELECT * FROM unnest($1::int[], $2::int[], $3::int[], $4::text[], $5::int[])`,
      [
        part.map((d) => d.driveNo),
        part.map((d) => d.userNo),
        part.map((d) => d.driveIdx),
        part.map((d) => d.name),
        part.map((d) => d.folders.folders.length),
      ],
    );
  }
  await client.query(
    'UPDATE ds_drives d SET username = u.username FROM ds_users u WHERE u.user_no = d.user_no',
  );
  const mismatch = await rows<{ n: string }>(
    client,
    `SELECT count(*) AS n FROM ds_users u
      WHERE u.drive_count <> (SELECT count(*) FROM ds_drives d WHERE d.user_no = u.user_no)`,
  );
  if (toInt(mismatch[0]?.n) !== 0) throw new Error('internal: drive plan and SQL second-drive rule disagree');
  await client.query(
    `INSERT INTO storage.drives (id, owner_id, name, used_bytes, created_at)
     SELECT d.id, u.id, d.name, 0, now() - interval '120 days'
       FROM ds_drives d JOIN ds_users u ON u.user_no = d.user_no ORDER BY d.drive_no`,
  );
  await client.query('ANALYZE ds_drives');
}

async function insertFolders(
  client: SqlClient,
  plan: DatasetPlan,
  onProgress: (done: number) => void,
): Promise<void> {
  const all = plan.drives.flatMap((d) => d.folders.folders.map((f) => ({ driveNo: d.driveNo, f })));
  for (let at = 0; at < all.length; at += CHUNK) {
    const part = all.slice(at, at + CHUNK);
    await client.query(
      `INSERT INTO ds_folders (drive_no, folder_no, parent_no, depth, name, trashed_ago, created_ago)
       SELECT * FROM unnest($1::int[], $2::int[], $3::int[], $4::int[], $5::text[], $6::int[], $7::int[])`,
      [
        part.map((p) => p.driveNo),
        part.map((p) => p.f.folderNo),
        part.map((p) => p.f.parentNo),
        part.map((p) => p.f.depth),
        part.map((p) => p.f.name),
        part.map((p) => p.f.trashedAgoSeconds),
        part.map((p) => p.f.createdAgoSeconds),
      ],
    );
  }
  await client.query('ANALYZE ds_folders');
  // Level by level: the path trigger reads the parent's row.
  let done = 0;
  onProgress(0);
  for (let depth = 1; depth <= plan.maxDepth; depth++) {
    const result = await client.query(
      `INSERT INTO storage.folders (id, drive_id, parent_id, name, is_trashed, trashed_at, created_at, updated_at)
       SELECT f.id, d.id, p.id, f.name, f.trashed_ago IS NOT NULL,
              now() - make_interval(secs => f.trashed_ago),
              now() - make_interval(secs => f.created_ago),
              now() - make_interval(secs => COALESCE(f.trashed_ago, f.created_ago))
         FROM ds_folders f
         JOIN ds_drives d ON d.drive_no = f.drive_no
         LEFT JOIN ds_folders p ON p.drive_no = f.drive_no AND p.folder_no = f.parent_no
        WHERE f.depth = $1
        ORDER BY f.drive_no, f.folder_no`,
      [depth],
    );
    done += result.rowCount ?? 0;
    onProgress(done);
  }
}

async function insertBlobRows(
  client: SqlClient,
  plan: DatasetPlan,
  hashes: readonly string[],
  onProgress: (done: number) => void,
): Promise<void> {
  onProgress(0);
  for (let at = 0; at < plan.blobs.length; at += CHUNK) {
    const part = plan.blobs.slice(at, at + CHUNK);
    await client.query(
      `INSERT INTO ds_blobs (blob_no, hash, size, content_type, ext)
       SELECT * FROM unnest($1::int[], $2::text[], $3::bigint[], $4::text[], $5::text[])`,
      [
        part.map((_, i) => at + i),
        hashes.slice(at, at + part.length),
        part.map((b) => b.size),
        part.map((b) => BLOB_KINDS[b.kind].contentType),
        part.map((b) => BLOB_KINDS[b.kind].ext),
      ],
    );
  }
  await client.query('ANALYZE ds_blobs');
  // Older than every file; the insert trigger sets orphaned_at (ref_count 0)
  // and the files' statement trigger clears it again.
  await client.query(
    `INSERT INTO storage.blobs (hash, size, ref_count, content_type, created_at)
     SELECT hash, size, 0, content_type, now() - interval '100 days' + make_interval(secs => blob_no % 86400)
       FROM ds_blobs ORDER BY hash`,
  );
  onProgress(plan.blobs.length);
}

async function insertFiles(
  client: SqlClient,
  options: ResolvedDatasetOptions,
  onProgress: (done: number) => void,
): Promise<void> {
  const total = options.users * options.filesPerUser;
  if (total === 0) return;
  const prime = BLOB_PRIMES.find((p) => options.blobsOnDisk % p !== 0) ?? BLOB_PRIMES[0];
  onProgress(0);
  // Per file g (0 … total-1): user g / filesPerUser; h1, h2 are seeded hashes
  // of g (hashint8extended, stable across Postgres versions) whose digits
  // drive each choice: h1 → root or folder, which folder, creation time;
  // h2 → which drive, name word, individually trashed and when. Blob =
  // (g × prime) mod blobs, a permutation, so every blob gets a reference.
  const sql = `
    WITH x AS (
      SELECT g, (g / $3::bigint)::int AS user_no,
             hashint8extended(g, $4::bigint) & 9223372036854775807 AS h1,
             hashint8extended(g, $4::bigint + 7919) & 9223372036854775807 AS h2
        FROM generate_series($1::bigint, $2::bigint - 1) g
    ), y AS (
      SELECT x.*, d.drive_no, d.id AS drive_id,
             CASE WHEN x.h1 % 10000 < $5::int THEN -1 ELSE ((x.h1 / 10000) % d.folder_count)::int END AS folder_no,
             ((x.g * $6::bigint) % $7::bigint)::int AS blob_no
        FROM x
        JOIN ds_users u ON u.user_no = x.user_no
        JOIN ds_drives d ON d.user_no = x.user_no
         AND d.drive_idx = CASE WHEN u.drive_count = 2 AND x.h2 % 100 < 30 THEN 1 ELSE 0 END
    ), z AS (
      SELECT y.*, b.hash, b.size, b.content_type, b.ext, f.id AS folder_id,
             CASE WHEN f.trashed_ago IS NOT NULL THEN f.trashed_ago
                  WHEN (y.h2 / 100) % 10000 < $8::int THEN ${DAY_SECONDS} + ((y.h2 / 1000000) % ${6 * DAY_SECONDS})::int
             END AS trashed_ago,
             ${8 * DAY_SECONDS} + ((y.h1 / 100000000) % (COALESCE(f.created_ago, ${90 * DAY_SECONDS}) - ${8 * DAY_SECONDS} + 1))::int
               AS created_ago
        FROM y
        JOIN ds_blobs b ON b.blob_no = y.blob_no
        LEFT JOIN ds_folders f ON f.drive_no = y.drive_no AND f.folder_no = y.folder_no
    )
    INSERT INTO storage.files
      (drive_id, folder_id, name, blob_hash, size, mime_type, is_trashed, trashed_at, created_at, updated_at)
    SELECT z.drive_id, z.folder_id,
           ($9::text[])[1 + ((z.h2 / 10000000000) % $10::int)::int] || '-' || lpad(z.g::text, 8, '0') || '.' || z.ext,
           z.hash, z.size, z.content_type,
           z.trashed_ago IS NOT NULL,
           now() - make_interval(secs => z.trashed_ago),
           now() - make_interval(secs => z.created_ago),
           now() - make_interval(secs => COALESCE(z.trashed_ago, z.created_ago))
      FROM z
     ORDER BY z.g`;
  let done = 0;
  for (let g0 = 0; g0 < total; g0 += options.filesPerStatement) {
    const g1 = Math.min(total, g0 + options.filesPerStatement);
    await client.query(sql, [
      g0,
      g1,
      options.filesPerUser,
      options.seed,
      Math.round(options.rootFileShare * 10000),
      prime,
      options.blobsOnDisk,
      Math.round(options.trashedFileShare * 10000),
      FILE_WORDS,
      FILE_WORDS.length,
    ]);
    done = g1;
    onProgress(done);
  }
}

async function recomputeUsage(client: SqlClient): Promise<void> {
  // All of a drive's files count, trashed included (the storage_reconcile rule).
  await client.query(
    `UPDATE storage.drives d SET used_bytes = s.total
       FROM (SELECT f.drive_id, sum(f.size)::bigint AS total
               FROM storage.files f JOIN ds_drives sd ON sd.id = f.drive_id
              GROUP BY f.drive_id) s
      WHERE d.id = s.drive_id`,
  );
  await client.query(
    `UPDATE auth.users u SET storage_used_bytes = s.total
       FROM (SELECT d.owner_id, sum(d.used_bytes)::bigint AS total
               FROM storage.drives d JOIN ds_drives sd ON sd.id = d.id
              GROUP BY d.owner_id) s
      WHERE u.id = s.owner_id`,
  );
}

async function insertGrants(client: SqlClient, options: ResolvedDatasetOptions): Promise<void> {
  if (options.grants === 0) return;
  // Subject i mod users; owner a different user; even i: the owner's main
  // drive, odd i: its first root folder (never trashed). Half never expire,
  // the rest expire 30 to 89 days from now.
  await client.query(
    `INSERT INTO storage.role_grants (subject_id, resource_type, resource_id, role, granted_by, created_at, expires_at)
     SELECT s.id,
            CASE WHEN i % 2 = 0 THEN 'drive' ELSE 'folder' END,
            CASE WHEN i % 2 = 0 THEN d.id ELSE f.id END,
            CASE WHEN i % 3 = 0 THEN 'editor' ELSE 'viewer' END,
            o.id, now() - interval '5 days',
            CASE WHEN i % 2 = 0 THEN NULL ELSE now() + make_interval(days => 30 + i % 60) END
       FROM generate_series(0, $1::int - 1) i
       JOIN ds_users s ON s.user_no = i % $2::int
       JOIN ds_users o ON o.user_no = (i % $2::int + 1 + (i / $2::int) % ($2::int - 1)) % $2::int
       JOIN ds_drives d ON d.user_no = o.user_no AND d.drive_idx = 0
       JOIN ds_folders f ON f.drive_no = d.drive_no AND f.folder_no = 0
      ORDER BY i`,
    [options.grants, options.users],
  );
}

async function countDataset(
  client: SqlClient,
  plan: DatasetPlan,
  options: ResolvedDatasetOptions,
): Promise<DatasetCounts> {
  const [files] = await rows<Record<string, string>>(
    client,
    `SELECT count(*) AS files,
            count(*) FILTER (WHERE f.is_trashed) AS trashed,
            count(*) FILTER (WHERE f.folder_id IS NULL) AS root,
            count(*) FILTER (WHERE f.mime_type = 'audio/mpeg') AS audio,
            count(*) FILTER (WHERE f.mime_type = 'image/jpeg') AS image,
            COALESCE(sum(f.size), 0) AS bytes
       FROM storage.files f JOIN ds_drives d ON d.id = f.drive_id`,
  );
  const [folders] = await rows<Record<string, string>>(
    client,
    'SELECT count(*) AS folders, count(*) FILTER (WHERE trashed_ago IS NOT NULL) AS trashed FROM ds_folders',
  );
  const [grants] = await rows<Record<string, string>>(
    client,
    `SELECT count(*) AS grants FROM storage.role_grants g JOIN ds_users u ON u.id = g.subject_id`,
  );
  return {
    users: options.users,
    drives: plan.drives.length,
    folders: toInt(folders?.['folders']),
    trashedFolders: toInt(folders?.['trashed']),
    files: toInt(files?.['files']),
    trashedFiles: toInt(files?.['trashed']),
    rootFiles: toInt(files?.['root']),
    audioFiles: toInt(files?.['audio']),
    imageFiles: toInt(files?.['image']),
    blobs: plan.blobs.length,
    blobBytes: plan.blobs.reduce((sum, b) => sum + b.size, 0),
    fileBytes: toInt(files?.['bytes']),
    grants: toInt(grants?.['grants']),
    maxFolderDepth: plan.maxDepth,
  };
}
