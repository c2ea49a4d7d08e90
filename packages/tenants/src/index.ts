/**
 * @oxicloud/tenants: every job tenant and the ports each needs. Adapters
 * (Postgres repositories, blob backends) implement the ports in
 * `@oxicloud/storage`.
 *
 * @packageDocumentation
 */
export type { BlobEntry, BlobStorage, BlobStorageHealth } from './ports/blob-storage.js';
