import type { JobStore } from './job-store.js';
import type { RunOutcome } from './run-outcome.js';

/**
 * A long-running, cooperative, resumable scan. Sibling to the scheduler's
 * `JobHandler`, not a subtype.
 *
 * Between batches the handler MUST poll `store.status()`: `CancelRequested`
 * means return `paused` with the cursor at the next safe boundary. The
 * engine never aborts a run mid-batch and applies no timeout; `signal` fires
 * only on server shutdown and means the same as a cancel request.
 */
export interface RecoverableJobHandler {
  /** Stable snake_case identifier; the `job_name` column. */
  readonly name: string;
  runResumable(store: JobStore, signal: AbortSignal): Promise<RunOutcome>;
}
