import { createAdminApp, type JobCatalog } from '@oxicloud/admin-api';
import { checkJob, PgFindingStore } from '@oxicloud/consistency';
import { asJobHandler, RecoverableEngine } from '@oxicloud/recoverable';
import { JobRegistry, type Logger } from '@oxicloud/scheduler';
import {
  LocalFsBlobStorage,
  PgDriveUsageScan,
  PgFileBlobScan,
  PgFolderTreeScan,
  PgGrantRepository,
  PgMediaFileRepository,
  PgOrphanBlobRepository,
  PgTrashRepository,
  PgUsageRepository,
  PgUsersRepository,
  S3BlobStorage,
  type StorageDatabase,
} from '@oxicloud/storage';
import {
  type BlobStorage,
  createConsistencyBatchJob,
  createDedupGcJob,
  createGrantCleanupJob,
  createReextractAudioJob,
  createReextractImageJob,
  createStorageReconcileJob,
  createTrashCleanupJob,
  orderConsistencyChecks,
} from '@oxicloud/tenants';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import type { BlobStorageConfig, ServerConfig } from './config/server-config.js';
import type { TenantConfigs } from './config/tenant-configs.js';
import { pgHealthProbe } from './database/health-probe.js';

/** What the composition root is given: everything that touches the outside world is made by the caller. */
export interface ComposeInput {
  readonly config: ServerConfig;
  readonly tenants: TenantConfigs;
  readonly logger: Logger;
  readonly pool: pg.Pool;
  readonly jwtSecret: string;
}

/** The composed server: the HTTP app, its parts, and their lifecycle. */
export interface ComposedServer {
  readonly app: { fetch(request: Request, env?: unknown): Response | Promise<Response> };
  readonly registry: JobRegistry;
  readonly blobs: BlobStorage;
  /** Starts the scheduler loop (and, once wired, the recoverable engine's boot sweep). */
  start(): void;
  /** Stops the scheduler (aborting running handlers) and the seams' parts; leaves the pool to the caller. */
  stop(): Promise<void>;
}

/** The blob backend `OXICLOUD_STORAGE_BACKEND` chose. */
export function createBlobStorage(storage: BlobStorageConfig): BlobStorage {
  return storage.backend === 's3'
    ? new S3BlobStorage(storage.s3)
    : new LocalFsBlobStorage({ root: storage.root });
}

/** Registers the Part 1 tenants on the registry, each with its Postgres adapter and own config. */
export function registerPeriodicJobs(
  registry: JobRegistry,
  deps: {
    readonly db: Kysely<StorageDatabase>;
    readonly blobs: BlobStorage;
    readonly tenants: TenantConfigs;
    readonly logger: Logger;
  },
): void {
  const { db, blobs, tenants, logger } = deps;
  const trash = createTrashCleanupJob({
    repository: new PgTrashRepository(db),
    config: tenants.trashCleanup,
    logger,
  });
  registry.register(trash, trash.intervalMs, null);
  const reconcile = createStorageReconcileJob({
    repository: new PgUsageRepository(db),
    config: tenants.storageReconcile,
    logger,
  });
  registry.register(reconcile, reconcile.intervalMs, null);
  const dedup = createDedupGcJob({
    repository: new PgOrphanBlobRepository(db),
    blobs,
    config: tenants.dedupGc,
    logger,
  });
  registry.register(dedup, dedup.intervalMs, null);
  const grants = createGrantCleanupJob({
    repository: new PgGrantRepository(db),
    config: tenants.grantCleanup,
    logger,
  });
  registry.register(grants, grants.intervalMs, null);
}

/**
 * Part 2: the recoverable engine on `jobs.recoverable_runs`, with the
 * consistency checks over Postgres (drives, folders, files), the media
 * re-extract jobs and `consistency_batch`; each recoverable job is also put
 * on the registry (on demand) so the admin API lists and triggers it.
 * Start runs the boot sweep; stop asks running runs to pause.
 *
 * SEAMS left: `storage_consistency` (needs the backend's hasher pool and
 * `PgBlobIndexScan`, through `LocalFsBlobStorage`'s `consistencyChecks`
 * option) and `storage_migration` (needs a second backend's config).
 */
export function createRecoverableJobs(deps: {
  readonly registry: JobRegistry;
  readonly pool: pg.Pool;
  readonly db: Kysely<StorageDatabase>;
  readonly blobs: BlobStorage;
  readonly logger: Logger;
}): { readonly engine: RecoverableEngine; start(): void; stop(): Promise<void> } {
  const { registry, pool, db, blobs, logger } = deps;
  const engine = new RecoverableEngine({ pool, logger });
  const findings = new PgFindingStore({ pool });
  const checks = [
    ...new PgDriveUsageScan(db).consistencyChecks(),
    ...new PgFolderTreeScan(db).consistencyChecks(),
    ...new PgFileBlobScan(db).consistencyChecks(),
  ];
  for (const check of checks) engine.register(checkJob(check, { sinkFactory: findings.sinkFactory, logger }));
  const media = new PgMediaFileRepository(db);
  engine.register(createReextractAudioJob({ files: media, blobs, logger }));
  engine.register(createReextractImageJob({ files: media, blobs, logger }));
  for (const name of engine.names()) registry.register(asJobHandler(engine, name), null, null);
  registry.register(
    createConsistencyBatchJob({
      checks: () => orderConsistencyChecks(engine.names()),
      runOrResume: (name, args) => engine.runOrResume(name, args),
      logger,
    }),
    null,
    null,
  );
  return {
    engine,
    start() {
      engine.sweep().catch((error: unknown) => {
        logger.error(
          { target: 'oxicloud::recoverable', event: 'sweep.failed', error: (error as Error).message },
          'the boot sweep of recoverable runs failed',
        );
      });
    },
    async stop() {
      await engine.shutdown({ timeoutMs: 10_000 });
    },
  };
}

/**
 * SEAM: alerts (`@oxicloud/alerts`: SMTP sender, `job_failed` /
 * `consistency_findings`, 6 h dedup) hook into the registry's `onOutcome`.
 * Returns `undefined` (no alerts) until that package is wired.
 */
export function createOutcomeAlerts(_deps: {
  readonly pool: pg.Pool;
  readonly logger: Logger;
}): ConstructorParameters<typeof JobRegistry>[0]['onOutcome'] {
  return undefined;
}

/**
 * SEAM: the catalog the admin API lists and triggers. Today the registry
 * itself (it satisfies `JobCatalog`); recoverable jobs join it through the
 * registry bridge.
 */
export function createJobCatalog(registry: JobRegistry): JobCatalog {
  return registry;
}

/**
 * The composition root: builds the storage adapters, the job registry with
 * its tenants, the recoverable engine (seam), alerts (seam) and the admin app.
 * Wiring only; no domain logic.
 */
export function composeServer(input: ComposeInput): ComposedServer {
  const { config, logger, pool } = input;
  const db = new Kysely<StorageDatabase>({ dialect: new PostgresDialect({ pool }) });
  const blobs = createBlobStorage(config.storage);
  const onOutcome = createOutcomeAlerts({ pool, logger });
  const registry = new JobRegistry({ logger, ...(onOutcome ? { onOutcome } : {}) });
  registerPeriodicJobs(registry, { db, blobs, tenants: input.tenants, logger });
  const recoverable = createRecoverableJobs({ registry, pool, db, blobs, logger });
  const app = createAdminApp({
    jobs: createJobCatalog(registry),
    users: new PgUsersRepository(pool),
    jwtSecret: input.jwtSecret,
    logger,
    health: pgHealthProbe(pool),
  });
  return {
    app,
    registry,
    blobs,
    start() {
      registry.start();
      recoverable.start();
    },
    async stop() {
      await recoverable.stop();
      await registry.stop();
    },
  };
}
