import type { JobHandler } from './job-handler.js';
import { SchedulerError } from './scheduler-error.js';
import type { MisfirePolicy } from './tick-coordinator.js';

/** Per-job options of `JobRegistry.register`. */
export interface RegisterOptions {
  /** What to do about slots missed while no process was up (with a coordinator). @defaultValue 'skip' */
  readonly misfire?: MisfirePolicy;
  /**
   * Whether this process can run the job now (it reaches the blob store the
   * job needs): `null` when it can, otherwise why not. Asked before each
   * tick: a process that cannot does not claim the slot (in a cluster
   * another node takes it) and logs `job.tick_declined`; a trigger is
   * answered `err` with the reason, nothing run.
   * @defaultValue always ready
   */
  readonly ready?: () => Promise<string | null>;
}

const JOB_NAME = /^[a-z][a-z0-9_]*$/;

/**
 * What `JobRegistry.register` accepts, checked once: a snake_case name not
 * registered yet, an interval and a timeout that are finite milliseconds > 0
 * or `null`, a known misfire policy. Returns the name and the misfire policy
 * (default `skip`).
 *
 * @throws SchedulerError `INVALID_JOB_NAME`, `DUPLICATE_JOB`, `INVALID_INTERVAL`,
 *   `INVALID_TIMEOUT`, `INVALID_MISFIRE`, each saying what is allowed.
 */
export function validateRegistration(
  handler: JobHandler,
  intervalMs: number | null,
  timeoutMs: number | null,
  options: RegisterOptions,
  isRegistered: (name: string) => boolean,
): {
  readonly name: string;
  readonly misfire: MisfirePolicy;
  readonly ready: (() => Promise<string | null>) | undefined;
} {
  const name = handler.name;
  if (typeof name !== 'string' || !JOB_NAME.test(name)) {
    throw new SchedulerError(
      'INVALID_JOB_NAME',
      `job name ${JSON.stringify(name)} is not allowed: use snake_case (a-z, 0-9, _; starting with a letter)`,
    );
  }
  if (isRegistered(name)) {
    throw new SchedulerError(
      'DUPLICATE_JOB',
      `a job named '${name}' is already registered: names must be unique`,
    );
  }
  if (intervalMs !== null && !isPositiveMs(intervalMs)) {
    throw new SchedulerError(
      'INVALID_INTERVAL',
      `interval of job '${name}' must be a finite number of milliseconds > 0 or null (on demand), got ${String(intervalMs)}`,
    );
  }
  if (timeoutMs !== null && !isPositiveMs(timeoutMs)) {
    throw new SchedulerError(
      'INVALID_TIMEOUT',
      `timeout of job '${name}' must be a finite number of milliseconds > 0 or null (none), got ${String(timeoutMs)}`,
    );
  }
  const misfire = options.misfire ?? 'skip';
  if (misfire !== 'skip' && misfire !== 'once') {
    throw new SchedulerError(
      'INVALID_MISFIRE',
      `misfire policy of job '${name}' must be 'skip' or 'once', got ${JSON.stringify(misfire)}`,
    );
  }
  if (options.ready !== undefined && typeof options.ready !== 'function') {
    throw new SchedulerError(
      'INVALID_READY',
      `ready of job '${name}' must be a function returning a promise of null (ready) or the reason it is not, got ${typeof options.ready}`,
    );
  }
  return { name, misfire, ready: options.ready };
}

function isPositiveMs(value: number): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}
