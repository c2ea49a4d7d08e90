/**
 * @oxicloud/consistency: the consistency layer. Checks that find drift
 * between the database and blob storage, with severities, idempotent
 * findings, grace windows, two-pass re-verification, and the
 * `StatefulAdapter` contract the compiler enforces.
 *
 * @packageDocumentation
 */
export type { CheckJobHandler, CheckJobOptions } from './check-job.js';
export { checkJob, isRefusedMessage, refusedMessage } from './check-job.js';
export type { CheckParamsOptions, CheckParamsValidation } from './check-params.js';
export {
  checkParamsSchema,
  checkTriggerParamsSchema,
  DEFAULT_BATCH_SIZE,
  validateCheckParams,
  validateCheckTriggerParams,
} from './check-params.js';
export { checkStore } from './check-store.js';
export type { RunCloseResult } from './close-run.js';
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
export type { FindingBatchOptions } from './finding-batch.js';
export {
  CONSISTENCY_FINDINGS_ALERT,
  CONSISTENCY_LOG_TARGET,
  FindingBatch,
  findingCount,
} from './finding-batch.js';
export type { DeclaresFindingKinds, FindingKind, MagnitudeUnit } from './finding-kind.js';
export {
  assertDeclaredFinding,
  assertFindingKinds,
  FindingKindCatalog,
  MAGNITUDE_UNITS,
} from './finding-kind.js';
export type {
  CheckRunFacts,
  FindingKey,
  FindingSink,
  FindingWriteContext,
  FindingWriteResult,
  FindingWriter,
} from './finding-sink.js';
export type { FindingBefore, FindingChange, FindingState, FindingTransition } from './finding-state.js';
export {
  FINDING_STATES,
  isFindingState,
  isWorse,
  MAILED_CHANGES,
  transitionOnReport,
} from './finding-state.js';
export type { PgConsistencyOptions } from './finding-tables.js';
export { DEEP_GRACE_WINDOW_MS, DEFAULT_GRACE_WINDOW_MS, effectiveGraceMs, graceBoundary } from './grace.js';
export type { Inconsistency } from './inconsistency.js';
export type {
  CheckHealth,
  DecisionInput,
  FindingDecision,
  FindingDetailView,
  FindingEventView,
  FindingSightingView,
  LedgerListOptions,
  LedgerPage,
  OpenFindingCount,
  RunChanges,
  TrackedFindingView,
} from './pg-finding-ledger.js';
export { PgFindingLedger } from './pg-finding-ledger.js';
export type { FindingCount, ListFindingsOptions, StoredFinding } from './pg-finding-store.js';
export { PgFindingStore } from './pg-finding-store.js';
export type {
  NewRepairPlan,
  PlanItemRecord,
  RepairFindingRow,
  RepairSelection,
  StoredPlanItem,
  StoredRepairPlan,
} from './pg-repair-plans.js';
export { lockPendingPlanItem, MAX_PLAN_FINDINGS, PgRepairPlans, recordPlanItem } from './pg-repair-plans.js';
export type { PrunedRuns } from './pg-run-retention.js';
export { PgRunRetention } from './pg-run-retention.js';
export type {
  FindingEventsTable,
  FindingRunsTable,
  FindingsDatabase,
  FindingsTable,
  RunFindingsTable,
  RunUnexaminedTable,
} from './run-findings-table.js';
export type { Severity } from './severity.js';
export { isSeverity, SEVERITIES, severityRank } from './severity.js';
export type { AnomalyPage, SinglePhaseScanOptions } from './single-phase-scan.js';
export { singlePhaseScan } from './single-phase-scan.js';
export type { StatefulAdapter } from './stateful-adapter.js';
export type { Candidate } from './two-pass.js';
export { twoPass } from './two-pass.js';
