/**
 * @oxicloud/test-support: the shared test harness. One Postgres server per
 * test run (TEST_DATABASE_URL, else Testcontainers, else embedded Postgres;
 * `OXICLOUD_TEST_POSTGRES` picks one of the last two),
 * and a fresh migrated database per test file.
 *
 * @packageDocumentation
 */

export type { LogLine } from './capturing-logger.js';
export { CapturingLogger } from './capturing-logger.js';
export type { DumpOptions } from './database-dump.js';
export { dumpDatabase } from './database-dump.js';
export type { TestSupportErrorCode } from './errors.js';
export { TestSupportError } from './errors.js';
export {
  createOxiCloudDatabase,
  OXICLOUD_LATEST_MIGRATION,
  OXICLOUD_SQLX_VERSIONS,
  OXICLOUD_TEMPLATE_DATABASE,
  readOnlyOxiCloudRole,
  sqlxMigrationsSql,
  type TestRole,
} from './oxicloud-database.js';
export type { TestPostgresServer } from './postgres-server.js';
export {
  DEFAULT_POSTGRES_IMAGE,
  DEFAULT_STARTUP_MS,
  freePort,
  startTestPostgres,
} from './postgres-server.js';
export type { S3rverProcess } from './s3rver.js';
export { startS3rver } from './s3rver.js';
export type { TestDatabase } from './test-database.js';
export {
  ADMIN_URL_ENV,
  createTestDatabase,
  OXICLOUD_DOMAIN_TEMPLATE,
  prepareTemplate,
  TEMPLATE_DATABASE,
} from './test-database.js';
