/**
 * @oxicloud/consistency: the consistency layer. Checks that find drift
 * between the database and blob storage, with severities, idempotent
 * findings, grace windows, two-pass re-verification, and the
 * `StatefulAdapter` contract the compiler enforces.
 *
 * @packageDocumentation
 */
export type { AuditedFindingSinkContext } from './audited-finding-sink.js';
export { auditedFindingSink, CONSISTENCY_LOG_TARGET } from './audited-finding-sink.js';
export type { CheckJobHandler, CheckJobOptions } from './check-job.js';
export { checkJob } from './check-job.js';
export type { CheckParamsOptions, CheckParamsValidation } from './check-params.js';
export {
  BATCH_SIZE_RANGE,
  CHECK_PARAM_KEYS,
  DEFAULT_BATCH_SIZE,
  THROTTLE_MS_RANGE,
  validateCheckParams,
  validateCheckTriggerParams,
} from './check-params.js';
export { checkStore } from './check-store.js';
export type { CheckOptions, CheckStore, ConsistencyCheck } from './consistency-check.js';
export type { ConsistencyErrorCode } from './consistency-error.js';
export { ConsistencyError } from './consistency-error.js';
export { ConsistencyRegistry } from './consistency-registry.js';
export {
  CONSISTENCY_SCHEMA,
  CONSISTENCY_SCHEMA_VERSION,
  checkConsistencySchema,
  consistencySchemaStatus,
  consistencySqlFolder,
  migrate,
} from './consistency-schema.js';
export type { FindingSink, FindingSinkFactory } from './finding-sink.js';
export type { FindingTally } from './finding-tally.js';
export { addTallies, EMPTY_TALLY, tallyCounters } from './finding-tally.js';
export { DEEP_GRACE_WINDOW_MS, DEFAULT_GRACE_WINDOW_MS, effectiveGraceMs, graceBoundary } from './grace.js';
export { bytesToHashHex, hashHexToBytes } from './hash-bytes.js';
export type { Inconsistency } from './inconsistency.js';
export type { FindingCount, ListFindingsOptions, StoredFinding } from './pg-finding-store.js';
export { PgFindingSink, PgFindingStore } from './pg-finding-store.js';
export type { PhaseCursor } from './phase-cursor.js';
export { cursorHex, decodePhaseCursor, encodePhaseCursor } from './phase-cursor.js';
export type { Batch, RunBatchesOptions } from './run-batches.js';
export { runBatches } from './run-batches.js';
export type { FindingsDatabase, RunFindingsTable } from './run-findings-table.js';
export type { Severity } from './severity.js';
export { SEVERITIES } from './severity.js';
export type { StatefulAdapter } from './stateful-adapter.js';
export type { Candidate } from './two-pass.js';
export { twoPass } from './two-pass.js';
export { bytesToUuid, uuidToBytes } from './uuid-bytes.js';
