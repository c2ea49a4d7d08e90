/**
 * @oxicloud/cluster: several server processes on one Postgres. A node
 * identity with a heartbeat, one firing per tick cluster-wide (the Postgres
 * side of the scheduler's `TickCoordinator`), run exclusivity of periodic jobs
 * held in a row with a lease, and the history of every periodic run.
 *
 * @packageDocumentation
 */

export type { ClusterErrorCode } from './cluster-error.js';
export { ClusterError } from './cluster-error.js';
export {
  CLUSTER_SCHEMA,
  CLUSTER_SCHEMA_VERSION,
  checkClusterSchema,
  clusterSchemaStatus,
  clusterSqlFolder,
  migrate,
} from './cluster-schema.js';
export type { ClusterNodeRow, NodeMembershipOptions } from './node-membership.js';
export { NODE_MEMBERSHIP_DEFAULTS, NodeMembership } from './node-membership.js';
export type { OwnedRun, PgOwnedRunsOptions } from './pg-owned-runs.js';
export { PgOwnedRuns } from './pg-owned-runs.js';
export type { PeriodicJobState, PeriodicRun, PgPeriodicHistoryOptions } from './pg-periodic-history.js';
export { MAX_PERIODIC_RUNS_PAGE, PgPeriodicHistory } from './pg-periodic-history.js';
export type { PgTickCoordinatorOptions } from './pg-tick-coordinator.js';
export { PgTickCoordinator, TICK_COORDINATOR_DEFAULTS } from './pg-tick-coordinator.js';
export type { Queryable, QueryResult } from './queryable.js';
