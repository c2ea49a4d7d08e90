/**
 * @oxicloud/storage: Adapters for the tenants' ports: Postgres repositories for the storage domain and the local-disk and S3 blob backends.
 *
 * @packageDocumentation
 */
export {};
export type { PgQueryable, UserRow } from './postgres/users-repository.js';
export { PgUsersRepository } from './postgres/users-repository.js';
export { PgAdminRecipients } from './postgres/admin-recipients.js';
