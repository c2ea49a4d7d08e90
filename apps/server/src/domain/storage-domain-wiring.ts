import type { AdminRecipients } from '@oxicloud/alerts';
import type { StatefulAdapter } from '@oxicloud/consistency';
import type { StorageDomain } from '@oxicloud/migrations';
import type { Logger } from '@oxicloud/scheduler';
import type { PgQueryable } from '@oxicloud/storage';
import {
  OxiAdminRecipients,
  OxiBlobIndexScan,
  OxiBlobWalkRepository,
  type OxiCloudDatabase,
  type OxiCloudScansOptions,
  OxiContentGcRepository,
  OxiGrantRepository,
  OxiMediaFileRepository,
  OxiQueueBacklogReader,
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
  RepairStore,
  TrashRepository,
  UsageRepository,
} from '@oxicloud/tenants';
import type { Kysely } from 'kysely';
import type { QueueBacklogReader } from '../queues/queue-stall.js';

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
export type DomainUsers = OxiUsersRepository;

/**
 * The storage adapters of the storage domain (`OXICLOUD_STORAGE_DOMAIN`,
 * `oxicloud` only since the old model went in issue 30): the one place the
 * server takes `@oxicloud/storage/oxicloud`'s `Oxi*` adapters (OxiCloud's
 * drive-era schema) from. A job in {@link unwired} is not registered.
 */
export interface StorageDomainAdapters {
  readonly domain: StorageDomain;
  /** The database scans, each contributing its check(s), each handed only its check's options. */
  scans(options: OxiCloudScansOptions): StatefulAdapter[];
  /** The blob index `storage_consistency` compares the backend's listing with. */
  readonly blobIndex: BlobIndexScan;
  /** `storage_migration`'s walk of the blob rows. */
  readonly blobWalk: BlobWalkRepository;
  /** The re-extract jobs' files. */
  readonly media: MediaFileRepository;
  /**
   * What the re-extract jobs read a file's bytes with, by its `blob_hash`:
   * the whole content (its manifest's chunks in order, or the legacy blob).
   */
  mediaBytes(blobs: BlobStorage): Pick<BlobStorage, 'get'>;
  readonly trash: TrashRepository;
  readonly usage: UsageRepository;
  readonly grants: GrantRepository;
  /** `dedup_gc`'s content tables (`createContentGcJob`). */
  readonly contentGc: ContentGcRepository;
  /** `repair`'s store. */
  readonly repairStore: RepairStore;
  /** OxiCloud's queues (tree ETags, search index), read for the metrics and the stall alert. */
  readonly queues: QueueBacklogReader;
  /** The jobs this domain does not register, in a fixed order. */
  readonly unwired: readonly UnwiredJob[];
}

/**
 * The adapter set of `domain` on `db` (any Kysely over the server's pool:
 * the adapters type their own tables). `logger` is told what an adapter logs
 * itself (the trash floor of OxiCloud's 30 days).
 */
export function storageDomainAdapters(
  domain: StorageDomain,
  // biome-ignore lint/suspicious/noExplicitAny: one pool; the adapters narrow it to OxiCloud's tables
  db: Kysely<any>,
  logger?: Logger,
): StorageDomainAdapters {
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
    contentGc: new OxiContentGcRepository(oxi),
    repairStore: new OxiRepairStore(oxi),
    queues: new OxiQueueBacklogReader(oxi),
    unwired: UNWIRED_ON_OXICLOUD,
  };
}

/** `auth.users` of `domain`: tokens (`--user` takes a username or an e-mail address), the first admin, the admin API's lookups. */
export function domainUsers(_domain: StorageDomain, db: PgQueryable): DomainUsers {
  return new OxiUsersRepository(db);
}

/** The alerts' recipients (every active admin with a real address) on `domain`'s `auth.users`. */
export function domainAdminRecipients(_domain: StorageDomain, db: PgQueryable): AdminRecipients {
  return new OxiAdminRecipients(db);
}
