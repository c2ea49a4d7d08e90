/**
 * @oxicloud/scheduler: Part 1 of the job plan, the periodic scheduler.
 * Named jobs on fixed intervals or on demand, one in-flight run per job,
 * timeouts, containment of anything a handler throws, last outcome.
 *
 * @packageDocumentation
 */

export type { JobHandler, JobOutcome, JobOutcomeErr, JobOutcomeOk, JobRunArgs } from './job-handler.js';
export { defaultRunArgs, err, ok } from './job-handler.js';
export type { Logger } from './logger.js';
export { silentLogger } from './logger.js';
