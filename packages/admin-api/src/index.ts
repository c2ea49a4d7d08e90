/**
 * @oxicloud/admin-api: the hono admin API under /api/admin/jobs, its OpenAPI
 * document, admin auth, audit log and (later) the /admin/jobs page.
 *
 * @packageDocumentation
 */

export type { AdminAppDeps } from './app.js';
export { createAdminApp, OPENAPI_PATH } from './app.js';
export type { AuditDecision } from './audit/audit-log.js';
export { AUDIT_TARGET } from './audit/audit-log.js';
export { adminAuth } from './auth/admin-auth.js';
export type { AdminTokenClaims } from './auth/admin-token.js';
export {
  MIN_SECRET_BYTES,
  signAdminToken,
  TOKEN_AUDIENCE,
  TOKEN_ISSUER,
  verifyAdminToken,
} from './auth/admin-token.js';
export type { AdminApiErrorBody, AdminApiErrorCode } from './errors.js';
export { ADMIN_API_ERROR_STATUS, AdminApiError } from './errors.js';
export { HEALTH_SERVICE } from './health-service.js';
export type { AdminEnv, Principal } from './http/admin-env.js';
export { MAX_JSON_DEPTH } from './http/json-input.js';
export { DEFAULT_MAX_BODY_BYTES, MAX_BODY_BYTES_RANGE } from './http/request-body-limit.js';
export { ADMIN_PAGE_PATH, adminPageSize, registerAdminPageRoutes } from './page/index.js';
export type { AdminUserLookup, AdminUserRecord, UserRole } from './ports/admin-user-lookup.js';
export { USER_ROLES } from './ports/admin-user-lookup.js';
export type { AlertsView } from './ports/alerts-view.js';
export type {
  ClusterNodeView,
  ClusterView,
  OwnedRunView,
  PeriodicRunView,
  PeriodicStateView,
} from './ports/cluster-view.js';
export type { FindingKindsView } from './ports/finding-kinds.js';
export type { FindingsLedger } from './ports/findings-ledger.js';
export type { FindingsReader } from './ports/findings-reader.js';
export type { DatabaseHealth, HealthProbe } from './ports/health-probe.js';
export type {
  JobCatalogView,
  JobLastOutcome,
  JobSummary,
  PeriodicJobs,
} from './ports/job-catalog.js';
export type { JobFreshness, OverdueJob } from './ports/job-freshness.js';
export type { ReadinessPart, ReadinessProbe, ReadinessReport } from './ports/readiness-probe.js';
export type { RepairPlanDocument, RepairSelectionInput, RepairService } from './ports/repair-service.js';
export type { RunService } from './ports/run-service.js';
export { MAX_TRACKED_FINDINGS_LIMIT, trackedFindingJson } from './routes/findings.js';
export type { JobEntryJson, JobKind } from './routes/job-directory.js';
export { findingKindJson, jobSummaryJson } from './routes/job-directory.js';
export type { RunListEntryJson } from './routes/run-list-entry.js';
export { RUN_LIST_ENTRY_BUDGET, runListEntry } from './routes/run-list-entry.js';
export { MAX_FINDINGS_LIMIT, MAX_RUNS_LIMIT } from './routes/runs.js';
export type {
  AlertsStateJson,
  CancelResultJson,
  ClusterNodeJson,
  ErrorBodyJson,
  FindingDecisionJson,
  FindingDetailJson,
  FindingJson,
  FindingKindJson,
  FindingStateJson,
  FindingsHealthJson,
  FindingsPageJson,
  JobCheckJson,
  JobKindJson,
  JobOutcomeJson,
  JobSummaryJson,
  OutcomeEnvelopeJson,
  PeriodicRunJson,
  RepairAppliedJson,
  RepairDerivedRowJson,
  RepairLineJson,
  RepairPlanJson,
  RunFindingChangesJson,
  RunProgressJson,
  RunStatusJson,
  RunSummaryJson,
  RunTriggeredJson,
  SeverityJson,
  TrackedFindingJson,
  TrackedFindingsPageJson,
  TriggerAcceptedJson,
} from './routes/wire-types.js';
