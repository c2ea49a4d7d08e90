import type { JobStoreFactory, RunFence } from './job-store-factory.js';

export type { RunFence } from './job-store-factory.js';

import type { RunRecord } from './run-record.js';

/**
 * Every method the {@link RecoverableEngine} calls on its run storage: the
 * {@link JobStoreFactory} a run needs (start, resume, checkpoint store,
 * terminal write) plus the admin operations (cancel, listings, the boot and
 * reconnect sweeps, the lease heartbeat and the janitor). `PgJobStoreFactory`
 * implements it on `jobs.recoverable_runs`.
 */
export interface RunRepository extends JobStoreFactory {
  /** The node id written as the owner of the runs this repository starts or resumes. */
  readonly nodeId: string;
  /** The job's active run (Running, Paused or CancelRequested), or `null`. */
  activeRun(jobName: string): Promise<RunRecord | null>;
  /** `Running` → `CancelRequested` for the job's running run; its id, or `null` when none was Running. */
  requestCancel(jobName: string): Promise<string | null>;
  /** `Running` → `CancelRequested` for one run by id; `true` when it was Running. */
  requestCancelById(runId: string): Promise<boolean>;
  /** The job's runs, newest first. */
  listRuns(jobName: string, limit: number, offset: number): Promise<RunRecord[]>;
  /** One run of the job, or `null`. */
  getRun(jobName: string, runId: string): Promise<RunRecord | null>;
  /** The boot sweep: Running or CancelRequested runs whose owner `isDead` judges gone → Paused. Returns the swept rows. */
  sweep(isDead: (ownerNode: string | null) => boolean): Promise<Array<{ runId: string; jobName: string }>>;
  /** The given own runs → Paused with `reason`, where their fence still matches. Returns the ids paused. */
  pauseRuns(runs: readonly RunFence[], reason: string): Promise<string[]>;
  /** The janitor: other nodes' active runs whose lease expired → Paused ("node <id> lost mid-run"). */
  pauseExpired(
    exceptOwner: string,
  ): Promise<Array<{ runId: string; jobName: string; ownerNode: string | null }>>;
  /** The heartbeat: renews the leases this node still holds; returns those renewed with their status. */
  renewLeases(runs: readonly RunFence[]): Promise<Array<{ runId: string; status: string }>>;
}
