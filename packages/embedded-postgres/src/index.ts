export { DEFAULT_BINARIES_CACHE, type PostgresBinaries, postgresBinaries } from './binaries.js';
export {
  EMBEDDED_POSTGRES_ERROR_CODES,
  EmbeddedPostgresError,
  type EmbeddedPostgresErrorCode,
} from './embedded-postgres-error.js';
export { type InitClusterOptions, initCluster } from './init-cluster.js';
export { PostgresProcess, type PostgresProcessOptions } from './postgres-process.js';
export { assertReachable, type BlockedFolder, firstBlockedFolder } from './reachable.js';
export { isRoot, POSTGRES_SYSTEM_USER, postgresSystemUser, type SystemUser } from './system-user.js';
