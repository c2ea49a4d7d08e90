/**
 * @oxicloud/scheduler: Part 1 of the job plan, the periodic scheduler.
 * Named jobs on fixed intervals or on demand, one in-flight run per job,
 * timeouts, containment of anything a handler throws, last outcome.
 *
 * @packageDocumentation
 */

export type { CheckCapability, JobCapabilities } from './job-capabilities.js';
export { capabilitiesOf, NO_CAPABILITIES } from './job-capabilities.js';
export type { JobHandler, JobOutcome, JobOutcomeErr, JobOutcomeOk, JobRunArgs } from './job-handler.js';
export { defaultRunArgs, err, ok } from './job-handler.js';
export type { RegisterOptions } from './job-registration.js';
export type { JobRegistryOptions } from './job-registry.js';
export { ALREADY_RUNNING_SKIP, JobRegistry } from './job-registry.js';
export type { JobRunLine } from './job-run-line.js';
export { logJobRun, SCHEDULER_TARGET } from './job-run-line.js';
export type { JobOutcomeEvent, JobSummary, LastOutcome, RunCause, RunSource } from './job-summary.js';
export type { Logger } from './logger.js';
export { silentLogger } from './logger.js';
export type { SchedulerErrorCode } from './scheduler-error.js';
export { SchedulerError } from './scheduler-error.js';
export type {
  CoordinatedJob,
  MisfirePolicy,
  PeriodicRunRecord,
  RunPermit,
  SlotClaim,
  TickCoordinator,
} from './tick-coordinator.js';
export { MISFIRE_POLICIES } from './tick-coordinator.js';
