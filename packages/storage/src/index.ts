/**
 * @oxicloud/storage: Adapters for the tenants' ports: Postgres repositories for the storage domain and the local-disk and S3 blob backends.
 *
 * @packageDocumentation
 */
export {};
export type { PgQueryable, UserRow } from './postgres/users-repository.js';
export { PgUsersRepository } from './postgres/users-repository.js';
export { PgAdminRecipients } from './postgres/admin-recipients.js';
export type { StorageDatabase } from './postgres/database.js';
export { bigintToNumber } from './postgres/database.js';
export { PgTrashRepository } from './postgres/pg-trash-repository.js';
export { PgUsageRepository } from './postgres/pg-usage-repository.js';
export { PgOrphanBlobRepository } from './postgres/pg-orphan-blob-repository.js';
export { PgGrantRepository } from './postgres/pg-grant-repository.js';
