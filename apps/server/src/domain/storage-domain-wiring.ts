import type { AdminRecipients } from '@oxicloud/alerts';
import type { StatefulAdapter } from '@oxicloud/consistency';
import type { StorageDomain } from '@oxicloud/migrations';
import type { Logger } from '@oxicloud/scheduler';
import {
  PgAdminRecipients,
  PgBlobIndexScan,
  PgBlobWalkRepository,
  PgGrantRepository,
  PgMediaFileRepository,
  PgOrphanBlobRepository,
  type PgQueryable,
  PgRepairStore,
  PgTrashRepository,
  PgUsageRepository,
  PgUsersRepository,
  type PostgresScansOptions,
  postgresScans,
  type StorageDatabase,
} from '@oxicloud/storage';
import {
  OxiAdminRecipients,
  OxiBlobIndexScan,
  OxiBlobWalkRepository,
  type OxiCloudDatabase,
  OxiContentGcRepository,
  OxiGrantRepository,
  OxiMediaFileRepository,
  OxiRepairStore,
  OxiTrashRepository,
  OxiUsageRepository,
  OxiUsersRepository,
  oxiCloudScans,
} from '@oxicloud/storage/oxicloud';
import type {
  BlobIndexScan,
  BlobStorage,
  BlobWalkRepository,
  ContentGcRepository,
  GrantRepository,
  MediaFileRepository,
  OrphanBlobRepository,
  RepairStore,
  TrashRepository,
  UsageRepository,
} from '@oxicloud/tenants';
import type { Kysely } from 'kysely';

/** A job the domain does not register, and why (the boot line, the admin API's and CLI's answer). */
export interface UnwiredJob {
  readonly job: string;
  readonly reason: string;
}

/**
 * The jobs with no adapter on OxiCloud's storage domain yet: not registered
 * there. None today (`repair` runs on `OxiRepairStore`); the list stays for
 * the boot line, the admin API's and the CLI's answer about a future one.
 */
export const UNWIRED_ON_OXICLOUD: readonly UnwiredJob[] = [];

/** The users lookups the server needs on a domain's `auth.users`: tokens, the first admin, `users set-email`. */
export type DomainUsers = PgUsersRepository | OxiUsersRepository;

/**
 * The storage adapters of one storage domain (`OXICLOUD_STORAGE_DOMAIN`):
 * the one place that chooses between the root export's `Pg*` adapters (the
 * engine's own model) and `@oxicloud/storage/oxicloud`'s `Oxi*` adapters
 * (OxiCloud's drive-era schema). `null` = that job has no adapter on this
 * domain and is not registered ({@link unwired} says why).
 */
export interface StorageDomainAdapters {
  readonly domain: StorageDomain;
  /** The database scans, each contributing its check(s), each handed only its check's options. */
  scans(options: PostgresScansOptions): StatefulAdapter[];
  /** The blob index `storage_consistency` compares the backend's listing with. */
  readonly blobIndex: BlobIndexScan;
  /** `storage_migration`'s walk of the blob rows. */
  readonly blobWalk: BlobWalkRepository;
  /** The re-extract jobs' files. */
  readonly media: MediaFileRepository;
  /**
   * What the re-extract jobs read a file's bytes with, by its `blob_hash`:
   * on `oxicloud` the whole content (its manifest's chunks in order, or the
   * legacy blob); on `engine` the blob itself.
   */
  mediaBytes(blobs: BlobStorage): Pick<BlobStorage, 'get'>;
  readonly trash: TrashRepository;
  readonly usage: UsageRepository;
  readonly grants: GrantRepository;
  /** `dedup_gc`'s orphan blobs on the engine's model (`createDedupGcJob`); `null` on `oxicloud`. */
  readonly orphanBlobs: OrphanBlobRepository | null;
  /** `dedup_gc`'s content tables on OxiCloud's domain (`createContentGcJob`); `null` on `engine`. */
  readonly contentGc: ContentGcRepository | null;
  /** `repair`'s store; `null` on a domain without its adapter. */
  readonly repairStore: RepairStore | null;
  /** The jobs this domain does not register, in a fixed order. */
  readonly unwired: readonly UnwiredJob[];
}

/**
 * The adapter set of `domain` on `db` (any Kysely over the server's pool:
 * each set types its own tables). `logger` is told what an adapter logs
 * itself (the trash floor of OxiCloud's 30 days).
 */
export function storageDomainAdapters(
  domain: StorageDomain,
  // biome-ignore lint/suspicious/noExplicitAny: one pool, two table typings; each set narrows it to its own
  db: Kysely<any>,
  logger?: Logger,
): StorageDomainAdapters {
  if (domain === 'oxicloud') {
    const oxi = db as Kysely<OxiCloudDatabase>;
    const media = new OxiMediaFileRepository(oxi);
    return {
      domain,
      scans: (options) => oxiCloudScans(oxi, options),
      blobIndex: new OxiBlobIndexScan(oxi),
      blobWalk: new OxiBlobWalkRepository(oxi),
      media,
      mediaBytes: (blobs) => media.contentReader(blobs),
      trash: new OxiTrashRepository(oxi, logger ? { logger } : {}),
      usage: new OxiUsageRepository(oxi),
      grants: new OxiGrantRepository(oxi),
      orphanBlobs: null,
      contentGc: new OxiContentGcRepository(oxi),
      repairStore: new OxiRepairStore(oxi),
      unwired: UNWIRED_ON_OXICLOUD,
    };
  }
  const engine = db as Kysely<StorageDatabase>;
  return {
    domain,
    scans: (options) => postgresScans(engine, options),
    blobIndex: new PgBlobIndexScan(engine),
    blobWalk: new PgBlobWalkRepository(engine),
    media: new PgMediaFileRepository(engine),
    mediaBytes: (blobs) => blobs,
    trash: new PgTrashRepository(engine),
    usage: new PgUsageRepository(engine),
    grants: new PgGrantRepository(engine),
    orphanBlobs: new PgOrphanBlobRepository(engine),
    contentGc: null,
    repairStore: new PgRepairStore(engine),
    unwired: [],
  };
}

/** `auth.users` of `domain`: tokens (`--user` takes a username or, on `oxicloud`, an e-mail address), the first admin, the admin API's lookups. */
export function domainUsers(domain: StorageDomain, db: PgQueryable): DomainUsers {
  return domain === 'oxicloud' ? new OxiUsersRepository(db) : new PgUsersRepository(db);
}

/** The alerts' recipients (every admin with an address) on `domain`'s `auth.users`. */
export function domainAdminRecipients(domain: StorageDomain, db: PgQueryable): AdminRecipients {
  return domain === 'oxicloud' ? new OxiAdminRecipients(db) : new PgAdminRecipients(db);
}
