/**
 * @oxicloud/server: the composed OxiCloud jobs server and the oxijobs
 * command line. The programmatic surface is for tests and embedding; the
 * operator's surface is `oxijobs` (see `oxijobs --help`).
 *
 * @packageDocumentation
 */

export type { JwtSecret } from './auth/jwt-secret.js';
export { JWT_SECRET_FILE, resolveJwtSecret } from './auth/jwt-secret.js';
export type { ComposedServer, ComposeInput } from './compose.js';
export {
  composeServer,
  createAlerts,
  createBlobBackends,
  createBlobStorage,
  createRecoverableJobs,
  registerPeriodicJobs,
} from './compose.js';
export type { EnvVarDoc } from './config/env-vars.js';
export { CONFIG_DEFAULTS, ENV_VARS, envVarsHelp } from './config/env-vars.js';
export type { BlobStorageConfig, LogLevel, ServerConfig } from './config/server-config.js';
export { LOG_LEVELS, loadConfig } from './config/server-config.js';
export type { TenantConfigs } from './config/tenant-configs.js';
export { tenantConfigsFromEnv } from './config/tenant-configs.js';
export type { EmbeddedPostgresHandle } from './database/embedded-postgres.js';
export { runningEmbeddedPostgres, startOrReuseEmbeddedPostgres } from './database/embedded-postgres.js';
export { pgHealthProbe } from './database/health-probe.js';
export type { DatabaseSource, OpenDatabase } from './database/open-database.js';
export { openDatabase } from './database/open-database.js';
export type { DatabaseMode } from './database/prepare-database.js';
export { applyMigrations, ensureFirstAdmin, FIRST_ADMIN_USERNAME } from './database/prepare-database.js';
export type { DomainUsers, StorageDomainAdapters, UnwiredJob } from './domain/storage-domain-wiring.js';
export {
  domainAdminRecipients,
  domainUsers,
  storageDomainAdapters,
  UNWIRED_ON_OXICLOUD,
} from './domain/storage-domain-wiring.js';
export { createLogger, SERVER_TARGET } from './logger.js';
export { createProgram, runCli } from './program.js';
export type { ServerErrorCode } from './server-error.js';
export { ServerError } from './server-error.js';
