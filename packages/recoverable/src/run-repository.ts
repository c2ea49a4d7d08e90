import type { JobStoreFactory } from './job-store-factory.js';
import type { RunRecord } from './run-record.js';

/**
 * Every method the {@link RecoverableEngine} calls on its run storage: the
 * {@link JobStoreFactory} a run needs (start, resume, checkpoint store,
 * terminal write) plus the admin operations (cancel, listings, the boot and
 * reconnect sweeps). `PgJobStoreFactory` implements it on
 * `jobs.recoverable_runs`.
 */
export interface RunRepository extends JobStoreFactory {
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
  /** The boot sweep: every Running or CancelRequested run → Paused. Returns the swept rows. */
  sweep(): Promise<Array<{ runId: string; jobName: string }>>;
  /** The given runs → Paused with `reason`, when still active. Returns the ids paused. */
  pauseRuns(runIds: readonly string[], reason: string): Promise<string[]>;
}
