import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ConsistencyCheck, checkJob } from '@oxicloud/consistency';
import {
  backdateLocalBlob,
  generateOxiCloudDataset,
  type OxiCloudDatasetOptions,
  type OxiCloudDatasetReport,
} from '@oxicloud/dataset';
import {
  Blake3WorkerPool,
  createBlobHasher,
  EncryptedBlobStorage,
  LocalFsBlobStorage,
  LocalThumbnailStore,
  readsMediaAtRawPath,
  S3BlobStorage,
} from '@oxicloud/storage';
import { OxiBlobIndexScan, type OxiCloudDatabase, oxiCloudScans } from '@oxicloud/storage/oxicloud';
import {
  type BlobStorage,
  createConsistencyBatchJob,
  createMediaMetadataProbe,
  createStorageConsistencyCheck,
} from '@oxicloud/tenants';
import { createTestDatabase, type S3rverProcess, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { type ConsistencyHarness, consistencyHarness } from './consistency-fixtures.js';

const MiB = 1024 * 1024;

/** The four blob stores OxiCloud can run on: local disk and S3, each plain or encrypted (AES-256-GCM). */
export const OXI_STORES = ['local', 's3', 'encrypted-local', 'encrypted-s3'] as const;
export type OxiStoreKind = (typeof OXI_STORES)[number];

/**
 * A small dataset with every content and tree shape OxiCloud writes:
 * multi-chunk (FastCDC-sized chunks, some shared between contents), one-chunk,
 * empty, legacy whole-file blobs, dedup across files, trashed subtrees and
 * files (some older than 30 days), shared drives owned by a user and a group,
 * images with thumbnails. 11 drives × 20 files.
 */
export const OXI_SMALL: OxiCloudDatasetOptions = {
  users: 8,
  admins: 2,
  externalUsers: 3,
  sharedDrives: 3,
  groups: 1,
  membersPerGroup: 3,
  filesPerDrive: 20,
  multiChunkFileShare: 0.06,
  legacyFileShare: 0.12,
  emptyFileShare: 0.04,
  dedupShare: 0.2,
  sharedChunkShare: 0.4,
  multiChunkSize: { min: MiB + 1, max: MiB + 300_000 },
  trashedFolderShare: 0.2,
  trashedFileShare: 0.08,
  oldTrashShare: 0.4,
  seed: 7,
};

/** One blob store in a scratch folder (and, for S3, under a prefix of its own on the shared s3rver). */
export interface OxiStore {
  readonly kind: OxiStoreKind;
  /** OxiCloud's storage root (`.thumbnails/` lives here; the local store is `<root>/.blobs`). */
  readonly storageRoot: string;
  readonly blobs: BlobStorage;
  readonly backdateBlob?: (hash: string, modifiedAt: Date) => Promise<void>;
  /** Deletes every object of the store (S3: its prefix) and the scratch folder. */
  close(): Promise<void>;
}

export async function openOxiStore(kind: OxiStoreKind, s3?: S3rverProcess): Promise<OxiStore> {
  const storageRoot = await mkdtemp(join(tmpdir(), `oxicloud-domain-${kind}-`));
  let base: BlobStorage;
  let local: LocalFsBlobStorage | undefined;
  let s3Store: S3BlobStorage | undefined;
  if (kind === 'local' || kind === 'encrypted-local') {
    local = new LocalFsBlobStorage({ root: storageRoot });
    base = local;
  } else {
    if (s3 === undefined) throw new Error(`the ${kind} store needs the s3rver`);
    s3Store = new S3BlobStorage({
      bucket: s3.bucket,
      region: 'us-east-1',
      endpoint: s3.endpoint,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
      prefix: `oxicloud-domain/${kind}-${randomBytes(4).toString('hex')}/`,
    });
    base = s3Store;
  }
  const blobs = kind.startsWith('encrypted-')
    ? new EncryptedBlobStorage({ inner: base, key: randomBytes(32) })
    : base;
  const localStore = local;
  return {
    kind,
    storageRoot,
    blobs,
    ...(localStore === undefined ? {} : { backdateBlob: backdateLocalBlob((h) => localStore.pathOf(h)) }),
    async close() {
      if (s3Store !== undefined) {
        // Empty the prefix: page through the listing, deleting as we go.
        for (;;) {
          const page = await s3Store.list({ limit: 1000 });
          if (page.length === 0) break;
          for (const entry of page) await s3Store.delete(entry.hash);
        }
        s3Store.close();
      }
      await rm(storageRoot, { recursive: true, force: true });
    },
  };
}

/** One finding as a test compares it: `check kind severity resource_id`. */
export type FindingLine = string;

/** An OxiCloud-domain database with a generated dataset, the checks on its adapters, and the batch. */
export interface OxiDomainWorld {
  readonly db: TestDatabase;
  readonly kysely: Kysely<OxiCloudDatabase>;
  readonly store: OxiStore;
  readonly report: OxiCloudDatasetReport;
  readonly h: ConsistencyHarness;
  /** Every check, wired to the OxiCloud adapters (`storage_consistency` and `manifests_consistency`'s deep pass over the store). */
  readonly checks: readonly ConsistencyCheck[];
  /** Runs `consistency_batch` (`force`, `deep`) and returns its outcome and every child's findings. */
  runBatch(): Promise<{ outcome: unknown; completed: number; failed: number; findings: FindingLine[] }>;
  close(): Promise<void>;
}

/**
 * Creates the database (`createTestDatabase({ domain: 'oxicloud' })`), the
 * store, generates the dataset into both, and registers the checks on the
 * OxiCloud adapters with the engine, each check once.
 */
export async function oxiDomainWorld(input: {
  readonly store: OxiStoreKind;
  readonly s3?: S3rverProcess;
  readonly options: OxiCloudDatasetOptions;
}): Promise<OxiDomainWorld> {
  const db = await createTestDatabase({ domain: 'oxicloud' });
  const store = await openOxiStore(input.store, input.s3);
  const workers = new Blake3WorkerPool({ size: 2 });
  const kysely = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool: db.pool }) });
  const h = consistencyHarness(db.pool);
  const close = async () => {
    await h.engine.shutdown({ timeoutMs: 1000 }).catch(() => undefined);
    await workers.close();
    await kysely.destroy().catch(() => undefined);
    await store.close();
    await db.drop();
  };
  try {
    const report = await generateOxiCloudDataset({
      pool: db.pool,
      blobs: store.blobs,
      storageRoot: store.storageRoot,
      ...(store.backdateBlob === undefined ? {} : { backdateBlob: store.backdateBlob }),
      options: input.options,
    });
    // One hasher of the store, as the server wires it: storage_consistency's and manifests_consistency's deep passes.
    const hasher = createBlobHasher(store.blobs, workers);
    const checks: ConsistencyCheck[] = [
      createStorageConsistencyCheck({
        blobs: store.blobs,
        index: new OxiBlobIndexScan(kysely),
        hasher,
        thumbnails: new LocalThumbnailStore(store.storageRoot),
      }),
      ...oxiCloudScans(kysely, {
        checks: {
          manifests_consistency: { hasher },
          // Missing media metadata where OxiCloud reads the bytes at their raw path: a local unencrypted store.
          files_consistency: readsMediaAtRawPath(store.blobs)
            ? { media: { probe: createMediaMetadataProbe({ blobs: store.blobs }) } }
            : {},
        },
      }).flatMap((a) => a.consistencyChecks()),
    ];
    for (const check of checks)
      h.engine.register(checkJob(check, { findings: h.findings, logger: h.logger }));
    const names = checks.map((c) => c.name);
    return {
      db,
      kysely,
      store,
      report,
      h,
      checks,
      async runBatch() {
        const batch = createConsistencyBatchJob({
          checks: () => names,
          runOrResume: (name, args) => h.engine.runOrResume(name, args),
          logger: h.logger,
        });
        const outcome = await batch.run({ force: true, deep: true }, new AbortController().signal);
        const extra = outcome.kind === 'ok' ? outcome.extra : {};
        const perCheck = (extra['per_check'] ?? {}) as Record<string, { run_id?: string }>;
        const findings: FindingLine[] = [];
        for (const [check, entry] of Object.entries(perCheck)) {
          if (entry.run_id === undefined) continue;
          for (const f of await h.findings.list(entry.run_id, { limit: 10_000 })) {
            findings.push(`${check} ${f.kind} ${f.severity} ${f.resourceId}`);
          }
        }
        return {
          outcome,
          completed: Number(extra['completed']),
          failed: Number(extra['failed']),
          findings: findings.sort(),
        };
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** A `Kysely` on OxiCloud's tables over `pool` (what `OxiRepairStore` and the `Oxi*` adapters take). */
export function oxiKysely(pool: pg.Pool): Kysely<OxiCloudDatabase> {
  return new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool }) });
}

/** An internal user of OxiCloud's `auth.users` (its e-mail address derived from the name). */
export async function insertOxiUser(pool: pg.Pool, username: string): Promise<string> {
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO auth.users (username, email, role) VALUES ($1, $1 || '@example.test', 'user') RETURNING id`,
    [username],
  );
  return rows[0]!.id;
}

/**
 * A shared drive (OxiCloud's four writes in one transaction: the drive, its
 * root folder named `name`, the link, `ownerId`'s owner grant) with
 * `used_bytes` set to `usedBytes` (it holds no file, so anything else drifts).
 */
export async function insertOxiDrive(
  pool: pg.Pool,
  ownerId: string,
  name: string,
  usedBytes = 0,
): Promise<string> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO storage.drives (kind, used_bytes) VALUES ('shared', $1) RETURNING id`,
      [usedBytes],
    );
    const id = rows[0]!.id;
    const root = await client.query<{ id: string }>(
      'INSERT INTO storage.folders (name, parent_id, drive_id) VALUES ($1, NULL, $2) RETURNING id',
      [name, id],
    );
    await client.query('UPDATE storage.drives SET root_folder_id = $1 WHERE id = $2', [root.rows[0]!.id, id]);
    await client.query(
      `INSERT INTO storage.role_grants (subject_type, subject_id, resource_type, resource_id, role, granted_by)
       VALUES ('user', $1, 'drive', $2, 'owner', $1)`,
      [ownerId, id],
    );
    await client.query('COMMIT');
    return id;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

/**
 * A folder of OxiCloud's tree (path and lpath from its trigger): under
 * `parentId`, or, with `null`, a top-level folder of the drive (under its
 * root folder: OxiCloud has one root per drive). `trashedAt` trashes the
 * folder alone (not its subtree), as a pre-2026-06-17 trash did.
 */
export async function insertOxiFolder(
  pool: pg.Pool,
  driveId: string,
  parentId: string | null,
  name: string,
  trashedAt: Date | null = null,
): Promise<string> {
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO storage.folders (drive_id, parent_id, name, is_trashed, trashed_at, original_parent_id)
     SELECT d.id, p.parent, $3, $4, $5, CASE WHEN $4 THEN p.parent END
       FROM storage.drives d CROSS JOIN LATERAL (SELECT COALESCE($2::uuid, d.root_folder_id) AS parent) p
      WHERE d.id = $1
     RETURNING id`,
    [driveId, parentId, name, trashedAt !== null, trashedAt],
  );
  return rows[0]!.id;
}
