import { mkdirSync } from 'node:fs';
import { createAdminApp } from '@oxicloud/admin-api';
import {
  type AlertsStatus,
  alertsStatus,
  JobAlerts,
  SmtpEmailSender,
  smtpConfigFromEnv,
  validateAlertEnv,
} from '@oxicloud/alerts';
import { NodeMembership, PgOwnedRuns, PgPeriodicHistory, PgTickCoordinator } from '@oxicloud/cluster';
import {
  type ConsistencyCheck,
  ConsistencyRegistry,
  checkJob,
  FindingKindCatalog,
  isRefusedMessage,
  PgFindingLedger,
  PgFindingStore,
  PgRepairPlans,
  PgRunRetention,
} from '@oxicloud/consistency';
import type { StorageDomain } from '@oxicloud/migrations';
import {
  createNodeId,
  DEFAULT_ENGINE_SCHEMA,
  JobCatalog,
  RecoverableEngine,
  type RunFinishedEvent,
} from '@oxicloud/recoverable';
import { JobRegistry, type Logger, type MisfirePolicy } from '@oxicloud/scheduler';
import {
  Blake3WorkerPool,
  blobQuarantineOf,
  createBlobHasher,
  EncryptedBlobStorage,
  LocalFsBlobStorage,
  LocalThumbnailStore,
  readsMediaAtRawPath,
  S3BlobStorage,
} from '@oxicloud/storage';
import type { OxiCloudDatabase } from '@oxicloud/storage/oxicloud';
import {
  type BlobHasher,
  type BlobSequenceHasher,
  type BlobStorage,
  createConsistencyBatchJob,
  createContentGcJob,
  createGrantCleanupJob,
  createMediaMetadataProbe,
  createReextractAudioJob,
  createReextractImageJob,
  createRepairActions,
  createRepairJob,
  createRepairPlanner,
  createRepairService,
  createRunRetentionJob,
  createStorageConsistencyCheck,
  createStorageMigrationJob,
  createStorageReconcileJob,
  createTrashCleanupJob,
  type RepairService,
  type RepairStore,
  runRetentionConfigFromEnv,
  type ThumbnailActionsOptions,
  type ThumbnailStore,
} from '@oxicloud/tenants';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { usersThroughOutage } from './auth/users-through-outage.js';
import { clusterView } from './cluster/cluster-view.js';
import { clusterConfigFromEnv } from './config/cluster-config.js';
import { queueMonitorConfigFromEnv } from './config/queue-config.js';
import type { ServerConfig, StorageEncryptionConfig } from './config/server-config.js';
import type { TenantConfigs } from './config/tenant-configs.js';
import { pgHealthProbe } from './database/health-probe.js';
import { type DatabaseMode, KNOWN_OXICLOUD_MIGRATION } from './database/prepare-database.js';
import { pgReadinessProbe } from './database/readiness-probe.js';
import { schemaPreflight } from './database/schema-preflight.js';
import {
  domainAdminRecipients,
  domainUsers,
  type StorageDomainAdapters,
  storageDomainAdapters,
} from './domain/storage-domain-wiring.js';
import { WRITE_JOBS_VAR, writeJobsSwitch } from './domain/write-jobs.js';
import { mailFindingChanges } from './findings/mail-finding-changes.js';
import { FreshnessMonitor } from './freshness/freshness-monitor.js';
import { freshnessCheckIntervalMsFromEnv, freshnessTargets } from './freshness/freshness-policy.js';
import { PgJobFreshnessStore } from './freshness/job-freshness-store.js';
import { SERVER_TARGET } from './logger.js';
import { ServerMetrics } from './metrics/server-metrics.js';
import { tickSkipTap } from './metrics/tick-skip-tap.js';
import { QUEUES_TARGET, QueueMonitor } from './queues/queue-monitor.js';
import { SERVER_VERSION } from './server-version.js';

/** What the composition root is given: everything that touches the outside world is made by the caller. */
export interface ComposeInput {
  readonly config: ServerConfig;
  readonly tenants: TenantConfigs;
  readonly logger: Logger;
  readonly pool: pg.Pool;
  readonly jwtSecret: string;
  /** The process environment: alerts and per-job switches read their own variables from it. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** How long a graceful stop waits for running runs to land Paused. @defaultValue 10 s */
  readonly shutdownTimeoutMs?: number;
  /** This process's node id (the owner of the runs it executes). @defaultValue `createNodeId()` of `@oxicloud/recoverable` */
  readonly nodeId?: string;
  /** How the database is used (`applyMigrations`' answer). @defaultValue a database of the engine's own, schema `jobs` */
  readonly database?: DatabaseMode;
}

/** The composed server: the HTTP app, its parts, and their lifecycle. */
export interface ComposedServer {
  readonly app: { fetch(request: Request, env?: unknown): Response | Promise<Response> };
  readonly registry: JobRegistry;
  readonly engine: RecoverableEngine;
  readonly blobs: BlobStorage;
  /** The Prometheus metrics (served by `oxijobs serve` on its own listener). */
  readonly metrics: ServerMetrics;
  /** Job freshness: overdue jobs and the `job_overdue` mails. */
  readonly freshness: FreshnessMonitor;
  /** This process's row in `jobs.nodes` (its id, heartbeat, deregistration). */
  readonly node: NodeMembership;
  /** Whether this process mails alerts (its `OXICLOUD_SMTP_*`) and to how many admins now: the boot line and `GET /api/admin/alerts`. */
  alertsStatus(): Promise<AlertsStatus>;
  /** Registers the node, runs the engine's start (boot sweep of dead processes of this host, then the run janitor), then the scheduler loop. */
  start(): Promise<void>;
  /**
   * Graceful stop: asks this process's running runs to pause (they land
   * Paused with their cursor, bounded wait), stops the scheduler, deregisters
   * the node, closes the hashing workers and SMTP; leaves the pool to the caller.
   */
  stop(): Promise<void>;
}

type ChecksOf = (self: BlobStorage) => readonly ConsistencyCheck[];

/**
 * A backend as the server uses it: `make` builds the base store (local or
 * S3), wrapped in `EncryptedBlobStorage` when encryption at rest is on. The
 * consistency checks go on the outer store, so they see plaintext.
 */
function blobBackend<T extends BlobStorage>(
  make: (checks: ChecksOf | undefined) => T,
  encryption: StorageEncryptionConfig | null,
  checks?: ChecksOf,
): { readonly store: BlobStorage; readonly base: T } {
  if (encryption === null) {
    const base = make(checks);
    return { store: base, base };
  }
  const base = make(undefined);
  const store = new EncryptedBlobStorage({
    inner: base,
    key: encryption.key,
    ...(checks === undefined ? {} : { consistencyChecks: checks }),
  });
  return { store, base };
}

/**
 * The blob backend `OXICLOUD_STORAGE_BACKEND` chose, with no checks, encrypted
 * when `encryption` is given (`OXICLOUD_STORAGE_ENCRYPTION_*`): for `oxijobs seed`.
 */
export function createBlobStorage(
  storage: ServerConfig['storage'],
  encryption: StorageEncryptionConfig | null = null,
): BlobStorage {
  if (storage.backend === 's3') return blobBackend(() => new S3BlobStorage(storage.s3), encryption).store;
  mkdirSync(storage.root, { recursive: true });
  return blobBackend(() => new LocalFsBlobStorage({ root: storage.root }), encryption).store;
}

/** The blob backends the server can reach, and the hashing pool their deep checks share. */
export interface BlobBackends {
  /** The backend `OXICLOUD_STORAGE_BACKEND` chose: the one the server serves from. */
  readonly source: BlobStorage;
  /** A backend by name (`local`, `s3`), or `null` when it is not configured (`storage_migration` targets). */
  resolve(name: string): BlobStorage | null;
  /**
   * Re-hashes the source's stored bytes (the repair of a missing blob row
   * confirms them first), one blob or a manifest's chunks in order
   * (`manifests_consistency`'s deep whole-file pass).
   */
  readonly sourceHasher: BlobSequenceHasher;
  /** OxiCloud's thumbnails and transcoded images, on its local disk under the storage root (whatever the backend). */
  readonly thumbnails: LocalThumbnailStore;
  close(): Promise<void>;
  /** A hasher of the backend of that name (on the shared hashing pool), or `null` when it is not configured. */
  hasherOf(name: string): BlobHasher | null;
}

/**
 * Builds the source backend (which contributes `storage_consistency` through
 * its `consistencyChecks`) and the other configured backend as a migration
 * target. Only the source is checked: `storage.blobs` describes what the server
 * serves from; a migration target is checked once the server switches to it.
 */
export function createBlobBackends(deps: {
  readonly config: ServerConfig;
  readonly db: Kysely<OxiCloudDatabase>;
  readonly logger: Logger;
  /** Told the size of every blob a deep check re-hashes (the bytes-hashed metric). */
  readonly onBytesHashed?: (bytes: number) => void;
  /** The storage domain's adapters (the blob index). @defaultValue OxiCloud's on `db` */
  readonly adapters?: StorageDomainAdapters;
}): BlobBackends {
  const { config, db, logger, onBytesHashed } = deps;
  const hashPool = new Blake3WorkerPool();
  const index = (deps.adapters ?? storageDomainAdapters('oxicloud', db)).blobIndex;
  const hasherOf = (self: BlobStorage): BlobSequenceHasher => {
    const hasher = createBlobHasher(self, hashPool);
    if (onBytesHashed === undefined) return hasher;
    return {
      async hashStoredBlob(hash: string, signal?: AbortSignal) {
        const digest = await hasher.hashStoredBlob(hash, signal);
        onBytesHashed(digest.size);
        return digest;
      },
      async hashStoredSequence(hashes: readonly string[], signal?: AbortSignal) {
        const digest = await hasher.hashStoredSequence(hashes, signal);
        onBytesHashed(digest.size);
        return digest;
      },
    };
  };
  // OxiCloud's thumbnails live on its local disk under the storage root, whatever the blob backend.
  const thumbnails = new LocalThumbnailStore(config.backends.localRoot);
  const storageCheck = (self: BlobStorage) => [
    createStorageConsistencyCheck({ blobs: self, index, hasher: hasherOf(self), thumbnails, logger }),
  ];
  const sourceName = config.storage.backend;
  const encryption = config.storageEncryption;
  // The default root under the data folder is this server's own; an OXICLOUD_STORAGE_PATH is OxiCloud's.
  if (config.backends.createLocalRoot) mkdirSync(config.backends.localRoot, { recursive: true });
  const local = blobBackend(
    (checks) =>
      new LocalFsBlobStorage({
        root: config.backends.localRoot,
        ...(checks === undefined ? {} : { consistencyChecks: checks }),
      }),
    encryption,
    sourceName === 'local' ? storageCheck : undefined,
  ).store;
  const s3Options = config.backends.s3;
  const s3Backend =
    s3Options === null
      ? null
      : blobBackend(
          (checks) =>
            new S3BlobStorage({
              ...s3Options,
              ...(checks === undefined ? {} : { consistencyChecks: checks }),
            }),
          encryption,
          sourceName === 's3' ? storageCheck : undefined,
        );
  const s3 = s3Backend?.store ?? null;
  const source = sourceName === 's3' && s3 !== null ? s3 : local;
  return {
    source,
    resolve: (name) => (name === 'local' ? local : name === 's3' ? s3 : null),
    sourceHasher: hasherOf(source),
    thumbnails,
    async close() {
      await hashPool.close();
      s3Backend?.base.close();
    },
    hasherOf(name) {
      const backend = name === 'local' ? local : name === 's3' ? s3 : null;
      return backend === null ? null : hasherOf(backend);
    },
  };
}

/**
 * Registers the Part 1 tenants on the registry, each with its storage
 * domain's adapter and own config: `dedup_gc` is the engine's GC on
 * `engine` and the quarantining content GC on `oxicloud` (given a blob store
 * with a quarantine, which every store the server builds has).
 */
export function registerPeriodicJobs(
  registry: JobRegistry,
  deps: {
    readonly db: Kysely<OxiCloudDatabase>;
    readonly blobs: BlobStorage;
    /** OxiCloud's thumbnails: `dedup_gc` removes those of the contents it collected. */
    readonly thumbnails?: ThumbnailStore;
    readonly tenants: TenantConfigs;
    readonly logger: Logger;
    /** Each job's misfire policy (`OXICLOUD_JOB_<NAME>_MISFIRE`). @defaultValue `skip` for all */
    readonly misfire?: (job: string) => MisfirePolicy;
    /** The storage domain's adapters. @defaultValue OxiCloud's on `db` */
    readonly adapters?: StorageDomainAdapters;
    /** Whether a write job is switched on (beside OxiCloud only those named). @defaultValue all */
    readonly enabled?: (job: string) => boolean;
    /** The engine's own schema. @defaultValue `jobs` */
    readonly schema?: string;
  },
): void {
  const { db, blobs, tenants, logger } = deps;
  const enabled = deps.enabled ?? (() => true);
  const adapters = deps.adapters ?? storageDomainAdapters('oxicloud', db, logger);
  const options = (job: string) => ({ misfire: deps.misfire?.(job) ?? 'skip' });
  const trash = createTrashCleanupJob({
    repository: adapters.trash,
    config: tenants.trashCleanup,
    logger,
  });
  if (enabled(trash.name)) registry.register(trash, trash.intervalMs, null, options(trash.name));
  const reconcile = createStorageReconcileJob({
    repository: adapters.usage,
    config: tenants.storageReconcile,
    logger,
  });
  if (enabled(reconcile.name))
    registry.register(reconcile, reconcile.intervalMs, null, options(reconcile.name));
  const quarantine = blobQuarantineOf(blobs);
  if (quarantine !== null) {
    const dedup = createContentGcJob({
      repository: adapters.contentGc,
      quarantine,
      config: tenants.dedupGc,
      logger,
      ...(deps.thumbnails === undefined ? {} : { thumbnails: deps.thumbnails }),
    });
    // It moves bytes: a node that cannot reach the store leaves its slots to one that can.
    if (enabled(dedup.name)) {
      registry.register(dedup, dedup.intervalMs, null, { ...options(dedup.name), ready: storeReady(blobs) });
    }
  }
  const grants = createGrantCleanupJob({
    repository: adapters.grants,
    config: tenants.grantCleanup,
    logger,
  });
  if (enabled(grants.name)) registry.register(grants, grants.intervalMs, null, options(grants.name));
  const retention = createRunRetentionJob({
    repository: new PgRunRetention({ db, ...(deps.schema === undefined ? {} : { schema: deps.schema }) }),
    config: tenants.runRetention ?? runRetentionConfigFromEnv({}),
    logger,
  });
  registry.register(retention, retention.intervalMs, null, options(retention.name));
}

/** `RegisterOptions.ready` of a job that needs the blob store: `null` while this node reaches it. */
export function storeReady(blobs: BlobStorage): () => Promise<string | null> {
  return async () => {
    const health = await blobs.health();
    return health.ok
      ? null
      : `this node cannot reach the ${health.backend} store: ${health.message ?? 'unhealthy'}`;
  };
}

/**
 * Part 2: the recoverable engine on `jobs.recoverable_runs`. Every stateful
 * adapter is registered in the consistency registry and each check it
 * contributes becomes a recoverable job (`checkJob`); `storage_migration` and
 * the media re-extract jobs join them; `consistency_batch` (a Part 1 job) runs
 * the catalog's checks (every job declaring a `check`) in turn through the engine.
 */
export function createRecoverableJobs(deps: {
  readonly registry: JobRegistry;
  readonly pool: pg.Pool;
  readonly db: Kysely<OxiCloudDatabase>;
  readonly backends: BlobBackends;
  readonly sourceBackend: 'local' | 's3';
  readonly findings: PgFindingStore;
  /** Findings across runs: what a Completed run changed, for the findings mail. @defaultValue one on `pool` */
  readonly ledger?: PgFindingLedger;
  readonly alerts: JobAlerts;
  readonly tenants: TenantConfigs;
  readonly logger: Logger;
  /** Also called at each terminal write (metrics, freshness); contained like the alerts. */
  readonly onRunFinished?: (event: RunFinishedEvent) => void;
  /** `OXICLOUD_DATABASE_RETRY_SECONDS` in ms. @defaultValue the engine's (60 s) */
  readonly databaseRetryMs?: number;
  /** This process's node id and the run leases (`OXICLOUD_RUN_*_SECONDS`). */
  readonly nodeId: string;
  readonly runLeases?: {
    readonly leaseMs: number;
    readonly heartbeatMs: number;
    readonly janitorIntervalMs: number;
  };
  /** The storage domain's adapters; `repair` is registered only with a repair store. @defaultValue OxiCloud's on `db` */
  readonly adapters?: StorageDomainAdapters;
  /** Whether a write job is switched on (beside OxiCloud only those named). @defaultValue all */
  readonly enabled?: (job: string) => boolean;
  /** The engine's own schema. @defaultValue `jobs` */
  readonly schema?: string;
  /** Asked before each check run (`checkJob`'s `preflight`): beside a newer OxiCloud, its schema against what the check reads. */
  readonly preflight?: (check: ConsistencyCheck, signal: AbortSignal) => Promise<string | null>;
}): {
  readonly engine: RecoverableEngine;
  readonly consistency: ConsistencyRegistry;
  readonly catalog: JobCatalog;
  /** `null` when the storage domain has no repair adapter (the admin API answers that repair is not available). */
  readonly repairs: RepairService | null;
  /** The finding kinds each job declares (the admin API's `finding_kinds`). */
  readonly findingKinds: FindingKindCatalog;
} {
  const { registry, pool, db, backends, findings, alerts, tenants, logger } = deps;
  const adapters = deps.adapters ?? storageDomainAdapters('oxicloud', db, logger);
  const enabled = deps.enabled ?? (() => true);
  const schema = deps.schema ?? DEFAULT_ENGINE_SCHEMA;
  const ledger = deps.ledger ?? new PgFindingLedger({ pool, schema });
  const engine = new RecoverableEngine({
    pool,
    schema,
    logger,
    ...(deps.databaseRetryMs === undefined ? {} : { connectionRetryMs: deps.databaseRetryMs }),
    nodeId: deps.nodeId,
    ...deps.runLeases,
    onRunFinished: (event) => {
      deps.onRunFinished?.(event);
      alertOnRunFinished(event, { alerts, ledger, raises: engine.capabilities(event.job).alerts, logger });
    },
  });
  const catalog = new JobCatalog(registry, engine);
  const consistency = new ConsistencyRegistry();
  // The checks' batch loops log their retries, lost checkpoints and failures through the server's logger.
  const checks = {
    grants_consistency: { cleanupGraceMs: tenants.grantCleanup.graceMs, ...tenants.grantsConsistency },
    // Deep runs hash each multi-chunk file's chunks, in order, from the store the server serves from.
    manifests_consistency: { hasher: backends.sourceHasher },
    // Deep runs look for missing media metadata where OxiCloud's extractor reads the bytes: a local,
    // unencrypted store only (it opens the raw path; elsewhere it never writes a row).
    files_consistency: readsMediaAtRawPath(backends.source)
      ? {
          media: {
            probe: createMediaMetadataProbe({ blobs: backends.source }),
            audio: tenants.filesConsistency?.audio ?? true,
          },
        }
      : {},
  };
  for (const adapter of adapters.scans({ logger, checks })) consistency.register(adapter);
  consistency.register(backends.source);
  const findingKinds = new FindingKindCatalog();
  for (const check of consistency.allChecks()) {
    engine.register(
      findingKinds.add(
        checkJob(check, { findings, logger, ...(deps.preflight ? { preflight: deps.preflight } : {}) }),
      ),
    );
  }
  logger.info({ target: 'oxicloud::consistency', event: 'consistency.registered' }, consistency.describe());
  const migration = createStorageMigrationJob({
    blobs: adapters.blobWalk,
    sourceBackend: deps.sourceBackend,
    resolveBackend: (name) => backends.resolve(name),
    findings,
    logger,
  });
  if (enabled(migration.name)) engine.register(findingKinds.add(migration));
  // Beside OxiCloud with a read-only role there is no repair: the admin API says why at plan time.
  const repairs = enabled('repair')
    ? registerRepair({
        engine,
        pool,
        repairStore: adapters.repairStore,
        index: adapters.blobIndex,
        backends,
        sourceBackend: deps.sourceBackend,
        logger,
        schema,
      })
    : null;
  const media = adapters.media;
  const mediaBytes = adapters.mediaBytes(backends.source);
  for (const job of [
    createReextractAudioJob({ files: media, blobs: mediaBytes, logger }),
    createReextractImageJob({ files: media, blobs: mediaBytes, logger }),
  ]) {
    if (enabled(job.name)) engine.register(job);
  }
  registry.register(
    createConsistencyBatchJob({
      checks: () => catalog.checks().map((check) => check.name),
      runOrResume: (name, args) => engine.runOrResume(name, args),
      logger,
    }),
    null,
    null,
  );
  return { engine, consistency, catalog, repairs, findingKinds };
}

/** `repair` and its service (plans, choices, apply) on the engine's repair store. */
function registerRepair(deps: {
  readonly engine: RecoverableEngine;
  readonly pool: pg.Pool;
  readonly repairStore: RepairStore;
  /** What exists (content hashes, file ids): the thumbnail repairs re-check it. */
  readonly index: ThumbnailActionsOptions['index'];
  readonly backends: BlobBackends;
  readonly sourceBackend: 'local' | 's3';
  readonly logger: Logger;
  readonly schema: string;
}): RepairService {
  const { engine, pool, repairStore, backends, logger } = deps;
  const repairPlans = new PgRepairPlans({ pool, schema: deps.schema });
  // Bytes missing or corrupt on the source come back from the other configured backend.
  const otherBackend = deps.sourceBackend === 'local' ? 's3' : 'local';
  const otherBlobs = backends.resolve(otherBackend);
  const otherHasher = backends.hasherOf(otherBackend);
  const other =
    otherBlobs === null || otherHasher === null ? null : { blobs: otherBlobs, hasher: otherHasher };
  const repairActions = createRepairActions({
    store: repairStore,
    blobs: { blobs: backends.source, hasher: backends.sourceHasher, other },
    restore: { source: backends.source, sourceHasher: backends.sourceHasher, other },
    thumbnails: { thumbnails: backends.thumbnails, index: deps.index },
  });
  engine.register(
    createRepairJob({
      plans: repairPlans,
      actions: repairActions,
      store: repairStore,
      blobs: backends.source,
      logger,
      schema: deps.schema,
    }),
  );
  return createRepairService({
    planner: createRepairPlanner({ actions: repairActions, plans: repairPlans }),
    plans: repairPlans,
    engine,
  });
}

/**
 * Alerts when a recoverable run finished (its terminal write, and for a check
 * its closing, done): `job_failed` for a Failed run (with its run id); for a
 * Completed run of a job that declares `consistency_findings`, what it
 * changed is mailed (`mailFindingChanges`). Fire-and-forget: neither rejects.
 */
function alertOnRunFinished(
  event: RunFinishedEvent,
  deps: {
    readonly alerts: JobAlerts;
    readonly ledger: PgFindingLedger;
    /** The alerts the job declared (`capabilities.alerts`). */
    readonly raises: readonly string[];
    readonly logger: Logger;
  },
): void {
  if (event.status === 'Failed') {
    const message = event.outcome.kind === 'err' ? event.outcome.message : 'run failed';
    // A check refused by a precondition (a wrong storage root or key, a changed OxiCloud schema) examined
    // nothing: no mail, least of all one that reads as data loss; it is logged, shown, and turns the job overdue.
    if (isRefusedMessage(event.job, message)) return;
    void deps.alerts.jobFailed({
      job: event.job,
      cause: 'handler',
      message,
      runId: event.run_id,
      elapsedMs: event.elapsedMs,
      at: new Date(),
    });
    return;
  }
  void mailFindingChanges(event, deps);
}

/**
 * Email alerts (`@oxicloud/alerts`): SMTP from `OXICLOUD_SMTP_*` (unset → a
 * no mail; the boot line says alerts are off), recipients = every admin, read at send time.
 */
export function createAlerts(deps: {
  readonly pool: pg.Pool;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly publicBaseUrl: string;
  readonly logger: Logger;
  /** Whose `auth.users` the admins are read from. @defaultValue `oxicloud` */
  readonly domain?: StorageDomain;
}): { readonly alerts: JobAlerts; status(): Promise<AlertsStatus>; close(): void } {
  validateAlertEnv(deps.env);
  const smtp = smtpConfigFromEnv(deps.env);
  const sender = smtp === null ? null : new SmtpEmailSender(smtp);
  const recipients = domainAdminRecipients(deps.domain ?? 'oxicloud', deps.pool);
  const alerts = new JobAlerts({
    sender,
    recipients,
    logger: deps.logger,
    publicBaseUrl: deps.publicBaseUrl,
    env: deps.env,
  });
  return {
    alerts,
    status: async () => alertsStatus(smtp, (await recipients.adminEmails()).length),
    close: () => sender?.close(),
  };
}

/**
 * The composition root: storage adapters, the job registry with its tenants,
 * the recoverable engine with the consistency checks, alerts and the admin
 * app. Wiring only; no domain logic.
 */
export function composeServer(input: ComposeInput): ComposedServer {
  const { config, logger, pool } = input;
  const db = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool }) });
  // The one set of adapters: OxiCloud's storage domain (OXICLOUD_STORAGE_DOMAIN).
  const domain = config.storageDomain;
  const adapters = storageDomainAdapters(domain, db, logger);
  const database: DatabaseMode = input.database ?? { kind: 'owned', engineSchema: DEFAULT_ENGINE_SCHEMA };
  // Every table of the engine's own is in this schema (`jobs` on its own database, `oxijobs` beside OxiCloud).
  const schema = database.engineSchema;
  const writeJobs = writeJobsSwitch(database, input.env);
  if (writeJobs.off.length > 0) {
    logger.info(
      {
        target: SERVER_TARGET,
        event: 'sidecar.write_jobs_off',
        jobs: writeJobs.off.map((u) => u.job),
      },
      `beside OxiCloud, write jobs off (switch one on with ${WRITE_JOBS_VAR}=<name>,…): ${writeJobs.off.map((u) => u.job).join(', ')}`,
    );
  }
  if (adapters.unwired.length > 0) {
    logger.info(
      {
        target: SERVER_TARGET,
        event: 'storage_domain.unwired_jobs',
        storage_domain: domain,
        jobs: adapters.unwired.map((u) => u.job),
      },
      `storage domain ${domain}: not registered: ${adapters.unwired.map((u) => `${u.job} (${u.reason})`).join('; ')}`,
    );
  }
  const metrics = new ServerMetrics(pool, { schema });
  const freshnessStore = new PgJobFreshnessStore(pool, { schema });
  const recordFailed = (error: unknown) =>
    logger.warn(
      { target: 'oxicloud::freshness', event: 'freshness.record_failed', error: (error as Error).message },
      'could not record a run for job freshness',
    );
  const backends = createBlobBackends({
    config,
    db,
    logger,
    onBytesHashed: (bytes) => metrics.jobs.onBytesHashed(bytes),
    adapters,
  });
  const {
    alerts,
    status: alertsStatusNow,
    close: closeAlerts,
  } = createAlerts({
    pool,
    env: input.env,
    publicBaseUrl: config.publicBaseUrl,
    logger,
    domain,
  });
  const cluster = clusterConfigFromEnv(input.env);
  // One id for this process: its row in jobs.nodes and the owner of the runs it executes.
  const nodeId = input.nodeId ?? createNodeId();
  const node = new NodeMembership({
    pool,
    schema,
    nodeId,
    version: SERVER_VERSION,
    heartbeatMs: cluster.heartbeatMs,
    pruneAfterMs: cluster.pruneAfterMs,
    logger,
  });
  // One firing per tick and one run per periodic job across every node on this database.
  const coordinator = new PgTickCoordinator({
    pool,
    schema,
    node,
    leaseMs: cluster.periodicLeaseMs,
    historyRetentionMs: cluster.historyRetentionMs,
  });
  const registry = new JobRegistry({
    coordinator,
    logger: tickSkipTap(logger, (job) => metrics.jobs.onTickSkipped(job)),
    onOutcome: (event) => {
      metrics.jobs.onJobOutcome(event);
      freshnessStore
        .recordRun({ job: event.job, at: event.at, success: event.outcome.kind === 'ok' })
        .catch(recordFailed);
      void alerts.onJobOutcome(event);
    },
  });
  registerPeriodicJobs(registry, {
    db,
    blobs: backends.source,
    thumbnails: backends.thumbnails,
    tenants: input.tenants,
    logger,
    misfire: (job) => cluster.misfireOf(job),
    adapters,
    enabled: writeJobs.enabled,
    schema,
  });
  const findings = new PgFindingStore({ pool, schema });
  const ledger = new PgFindingLedger({ pool, schema });
  const { engine, catalog, repairs, findingKinds } = createRecoverableJobs({
    registry,
    pool,
    db,
    backends,
    sourceBackend: config.storage.backend,
    findings,
    ledger,
    alerts,
    tenants: input.tenants,
    logger,
    databaseRetryMs: config.databaseRetryMs,
    nodeId,
    runLeases: config.runLeases,
    adapters,
    enabled: writeJobs.enabled,
    schema,
    ...(database.kind === 'sidecar' && database.newerOxiCloud
      ? {
          preflight: schemaPreflight(pool, {
            latest: database.oxicloudLatest,
            known: KNOWN_OXICLOUD_MIGRATION,
          }),
        }
      : {}),
    onRunFinished: (event) => {
      metrics.jobs.onRunFinished(event);
      // A Paused run counts as a run (it ran), not as a success.
      freshnessStore
        .recordRecoverableRun(event.run_id, event.status === 'Completed', event.options.deep)
        .catch(recordFailed);
    },
  });
  const jobs = catalog.entries();
  const jobNames = jobs.map((j) => j.name);
  const freshness = new FreshnessMonitor({
    store: freshnessStore,
    targets: freshnessTargets(
      jobs.map((j) => ({
        name: j.name,
        intervalMs: j.intervalMs,
        check: j.capabilities.check !== null,
        deep: j.capabilities.deep,
      })),
      input.env,
    ),
    jobs: jobNames,
    alerts,
    logger,
    checkIntervalMs: freshnessCheckIntervalMsFromEnv(input.env),
  });
  // OxiCloud's queues: gauges at each scrape, and a mail when a drainer stops (beside OxiCloud by default).
  const queueConfig = queueMonitorConfigFromEnv(input.env, { besideOxiCloud: database.kind === 'sidecar' });
  const queues = new QueueMonitor({
    reader: adapters.queues,
    alerts,
    logger,
    stallMs: queueConfig.stallMs,
    checkIntervalMs: queueConfig.checkIntervalMs,
  });
  metrics.attach({ registry, engine, freshness, findings: ledger, queues });
  const app = createAdminApp({
    catalog,
    findingKinds,
    jobs: registry,
    runs: engine,
    findings,
    ledger,
    ...(repairs === null ? {} : { repairs }),
    unavailableJobs: [...adapters.unwired, ...writeJobs.off],
    users: usersThroughOutage(domainUsers(domain, pool)),
    jwtSecret: input.jwtSecret,
    logger,
    health: pgHealthProbe(pool),
    readiness: pgReadinessProbe(pool, undefined, domain, {
      sidecar: database.kind === 'sidecar',
      engineSchema: schema,
    }),
    freshness: {
      overdue: async () =>
        (await freshness.states())
          .filter((s) => s.overdue)
          .map((s) => ({
            job: s.job,
            deep: s.deep,
            max_age_ms: s.maxAgeMs,
            last_success_at: s.lastSuccessAt?.toISOString() ?? null,
            overdue_since: s.dueBy.toISOString(),
          })),
    },
    maxBodyBytes: input.config.http.maxBodyBytes,
    cluster: clusterView({
      membership: node,
      history: new PgPeriodicHistory({ pool, schema }),
      ownedRuns: new PgOwnedRuns({ pool, schema }),
    }),
    alerts: {
      state: async () => {
        const status = await alertsStatusNow();
        return status.enabled
          ? { enabled: true, smtp: status.smtp, missing: null, admin_recipients: status.adminRecipients }
          : { enabled: false, smtp: null, missing: status.missing, admin_recipients: status.adminRecipients };
      },
    },
  });
  return {
    app,
    registry,
    engine,
    blobs: backends.source,
    metrics,
    freshness,
    node,
    alertsStatus: alertsStatusNow,
    async start() {
      // Registered first: the heartbeat measures the database clock the ticks align with.
      await node.start();
      // The boot sweep lands before anything can trigger: runs a dead process of
      // this host left Running become Paused (never resumed by themselves); runs
      // other live nodes execute are left alone. Then the janitor watches leases.
      await engine.start();
      // Completed check runs a crash left unclosed (terminal write landed, closing did not): closed
      // now rather than when their check next runs (checkJob closes them then too).
      await ledger.closePendingRuns().catch((error: unknown) =>
        logger.warn(
          {
            target: 'oxicloud::consistency',
            event: 'consistency.close_pending_failed',
            error: String(error),
          },
          'could not close the findings of completed runs left unclosed; the next run of each check closes them as it begins',
        ),
      );
      await freshness.start();
      logger.info(
        {
          target: QUEUES_TARGET,
          event: 'queues.watching',
          stall_ms: queueConfig.stallMs,
          check_interval_ms: queueConfig.checkIntervalMs,
        },
        queueConfig.summary,
      );
      queues.start();
      // The start line counts both kinds, as GET /api/admin/jobs lists them.
      registry.start({ alsoListed: { recoverable: engine.names().length } });
    },
    async stop() {
      await engine.shutdown({ timeoutMs: input.shutdownTimeoutMs ?? 10_000 });
      await registry.stop();
      await node
        .stop()
        .catch((error: unknown) =>
          logger.warn(
            { target: 'oxicloud::cluster', event: 'node.deregister_failed', error: (error as Error).message },
            `node ${node.nodeId} could not deregister (it is pruned once its heartbeat is old)`,
          ),
        );
      await freshness.stop();
      await queues.stop();
      await backends.close();
      closeAlerts();
    },
  };
}
