/**
 * @oxicloud/recoverable: Part 2 of the job plan, the recoverable-run engine.
 * Runs live in `jobs.recoverable_runs`: one active run per job, cursor
 * checkpoints, cooperative cancel to Paused, resume, progress with an ETA,
 * leases and fencing (several processes on one database), a boot sweep, a
 * janitor and graceful shutdown.
 *
 * @packageDocumentation
 */

export type { RunArgs } from './acquire-run.js';
export type { AsJobHandlerOptions } from './as-job-handler.js';
export { asJobHandler } from './as-job-handler.js';
export type { BatchParams } from './batch/batch-params.js';
export {
  BATCH_LIMITS,
  batchParamsFromQueryShape,
  batchParamsSchema,
  batchParamsShape,
  batchSizeField,
  concurrencyField,
  digitStringAsNumber,
  integerField,
  parseParams,
  strictParamsObject,
  throttleMsField,
} from './batch/batch-params.js';
export type { CursorCodec } from './batch/cursor-codecs.js';
export { cursorHex, hashCursor, serialCursor, uuidCursor } from './batch/cursor-codecs.js';
export type { ItemWalk } from './batch/item-batch.js';
export { BatchTally, itemBatch } from './batch/item-batch.js';
export type { PhaseCursor } from './batch/phase-cursor.js';
export { decodePhaseCursor, encodePhaseCursor } from './batch/phase-cursor.js';
export { processPrefix } from './batch/process-prefix.js';
export type { BatchContext, BatchLoop, BatchResult } from './batch/run-batches.js';
export { MAX_BATCH_MS, runBatches } from './batch/run-batches.js';
export type { ScanBatch } from './batch/scan-batch.js';
export { scanBatch } from './batch/scan-batch.js';
export type { ConnectionRetryOptions } from './connection-retry.js';
export {
  DATABASE_UNREACHABLE,
  DEFAULT_CONNECTION_RETRY_MS,
  isConnectionLoss,
  withConnectionRetry,
} from './connection-retry.js';
export type { RecoverableRunsTable, RecoverableTables } from './db/recoverable-runs-table.js';
export type { RunFinishedEvent, RunFinishedListener } from './execute-run.js';
export type { CatalogEntry, JobKind, PeriodicJobList, RecoverableJobList } from './job-catalog.js';
export { JobCatalog } from './job-catalog.js';
export { outcomeOfRun } from './job-outcome-bridge.js';
export type {
  BatchWrites,
  BatchWritesResult,
  CheckpointProgress,
  JobStore,
  RunFacts,
  RunTransaction,
} from './job-store.js';
export type { JobStoreFactory, RunFence } from './job-store-factory.js';
export type { LeaseSettings } from './lease/lease-settings.js';
export {
  DEFAULT_HEARTBEAT_MS,
  DEFAULT_JANITOR_INTERVAL_MS,
  DEFAULT_LEASE_MS,
  leaseExpiredReason,
  leaseSettings,
  nodeLostReason,
} from './lease/lease-settings.js';
export type { NodeIdParts } from './lease/node-id.js';
export { createNodeId, isDeadLocalOwner, isProcessAlive, parseNodeId } from './lease/node-id.js';
export type { LeaseGuard, LeaseState } from './lease/run-leases.js';
export type { ActiveRun, ShutdownResult } from './own-runs.js';
export { PgJobStore, RESERVED_STATS_KEYS } from './pg-job-store.js';
export { PgJobStoreFactory, RESTART_PAUSE_REASON } from './pg-job-store-factory.js';
export type { RunProgress } from './progress.js';
export type {
  CancelResult,
  EngineRunArgs,
  ListRunsOptions,
  RecoverableEngineOptions,
  TriggerResult,
} from './recoverable-engine.js';
export { RecoverableEngine } from './recoverable-engine.js';
export type { RecoverableErrorCode } from './recoverable-error.js';
export { isLeaseLost, RecoverableError } from './recoverable-error.js';
export type { ParamsValidation, RecoverableJobHandler, TerminalRun } from './recoverable-job-handler.js';
export { RECOVERABLE_TARGET } from './run-log.js';
export type { RunOptions, TriggerOptionsResult } from './run-options.js';
export { NO_RUN_OPTIONS, RUN_OPTION_KEYS, triggerOptions } from './run-options.js';
export type { RunOrResumeOptions } from './run-or-resume.js';
export { runOrResume } from './run-or-resume.js';
export type { RunOutcome } from './run-outcome.js';
export { completed, failed, paused } from './run-outcome.js';
export type { RunPause, RunRecord } from './run-record.js';
export type { RunRepository } from './run-repository.js';
export type { RunStatus } from './run-status.js';
export { ACTIVE_STATUSES, isRunStatus, RUN_STATUSES, TERMINAL_STATUSES } from './run-status.js';
export type { RunSummary } from './run-summary.js';
export type {
  ApplySchemaOptions,
  PackageSchema,
  SchemaClient,
  SchemaDatabase,
  SchemaErrorCode,
  SchemaMigrationResult,
  SchemaOptions,
  SchemaPool,
  SchemaStatus,
  SchemaStep,
} from './schema/index.js';
export {
  applySchema,
  assertSchema,
  checkRecoverableSchema,
  DEFAULT_ENGINE_SCHEMA,
  engineSchema,
  engineSchemaProblem,
  engineTable,
  FOREIGN_SCHEMAS,
  inEngineSchema,
  migrate,
  packageRoot,
  RECOVERABLE_SCHEMA,
  RECOVERABLE_SCHEMA_VERSION,
  readSchemaSteps,
  recoverableSchemaStatus,
  recoverableSqlFolder,
  SIDECAR_ENGINE_SCHEMA,
  schemaProblem,
  schemaStatus,
  schemaTable,
  VERSION_TABLE,
  versionTable,
} from './schema/index.js';
