import type { JobOutcome } from '@oxicloud/scheduler';

/** A recoverable run a node owns (JSON-ready). */
export interface OwnedRunView {
  readonly run_id: string;
  readonly job_name: string;
  readonly status: string;
}

/** One node of the cluster, as `GET /api/admin/nodes` lists it (JSON-ready). */
export interface ClusterNodeView {
  /** `host:pid:6 hex`. */
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly version: string;
  /** ISO 8601, database clock. */
  readonly started_at: string;
  /** ISO 8601, database clock. */
  readonly last_heartbeat_at: string;
  /** Milliseconds since the last heartbeat, database clock. */
  readonly heartbeat_age_ms: number;
  /** Whether this is the node that answered. */
  readonly self: boolean;
  /** The recoverable runs it owns (empty until runs record their owner). */
  readonly runs: readonly OwnedRunView[];
  /** The periodic jobs it is running now. */
  readonly periodic_jobs: readonly string[];
}

/** One run of a periodic job, from any node (JSON-ready). */
export interface PeriodicRunView {
  readonly id: number;
  readonly job: string;
  /** ISO 8601 slot of a tick (database clock); `null` for a trigger. */
  readonly slot: string | null;
  readonly source: 'tick' | 'trigger';
  readonly node: string;
  readonly started_at: string;
  readonly finished_at: string;
  readonly elapsed_ms: number;
  readonly outcome: JobOutcome;
  /** `handler`, `timeout`, `panicked` for an `err` outcome. */
  readonly cause: string | null;
}

/** A periodic job's shared state (JSON-ready). */
export interface PeriodicStateView {
  readonly job: string;
  /** ISO 8601 of the last slot claimed; `null` before the first tick. */
  readonly last_slot_at: string | null;
  readonly missed_slots: number;
  /** The node running it now, else `null`. */
  readonly running_on: string | null;
  readonly last_run: PeriodicRunView | null;
}

/**
 * What the admin API reads about the cluster: its nodes, and the state and
 * history of periodic jobs that every node shares. The server implements it
 * on `@oxicloud/cluster`; without it `GET /api/admin/nodes` and
 * `GET /api/admin/jobs/{name}/periodic-runs` are absent and the listing's
 * last outcomes are this process's own.
 */
export interface ClusterView {
  nodes(): Promise<readonly ClusterNodeView[]>;
  periodicStates(): Promise<readonly PeriodicStateView[]>;
  /** Newest first, at most `limit`, `offset` skipped. */
  periodicRuns(
    job: string,
    page: { readonly limit: number; readonly offset: number },
  ): Promise<readonly PeriodicRunView[]>;
}
