import {
  DEDUP_GC_JOB_NAME,
  GRANT_CLEANUP_JOB_NAME,
  REEXTRACT_AUDIO_JOB_NAME,
  REEXTRACT_IMAGE_JOB_NAME,
  REPAIR_JOB_NAME,
  STORAGE_MIGRATION_JOB_NAME,
  STORAGE_RECONCILE_JOB_NAME,
  TRASH_CLEANUP_JOB_NAME,
} from '@oxicloud/tenants/job-names';
import type { DatabaseMode } from '../database/prepare-database.js';
import { ServerError } from '../server-error.js';
import type { UnwiredJob } from './storage-domain-wiring.js';

/** The variable that switches write jobs on beside OxiCloud, by their engine names. */
export const WRITE_JOBS_VAR = 'OXIJOBS_WRITE_JOBS';

/**
 * The jobs that write to OxiCloud's schemas or blob store, each with what
 * OxiCloud itself already does about it (fact sheet §6). Beside OxiCloud
 * (sidecar mode) each is off until {@link WRITE_JOBS_VAR} names it: the
 * first four overlap with OxiCloud's own daemons, the others change its data.
 * `repair` is not here: it writes only what an operator approved, plan by plan.
 * The checks, `consistency_batch` and `run_retention` write only the engine's
 * own schema and always run.
 */
export const WRITE_JOBS: ReadonlyMap<string, string> = new Map([
  [TRASH_CLEANUP_JOB_NAME, "OxiCloud's own trash purge already runs (OXICLOUD_ENABLE_TRASH)"],
  [DEDUP_GC_JOB_NAME, "OxiCloud's own dedup GC already runs after each trash purge"],
  [
    STORAGE_RECONCILE_JOB_NAME,
    "OxiCloud's own usage sweep already runs (OXICLOUD_STORAGE_USAGE_RECONCILE_SECS)",
  ],
  [GRANT_CLEANUP_JOB_NAME, "OxiCloud's own grant cleanup already runs (OXICLOUD_GRANT_CLEANUP_ENABLED)"],
  [STORAGE_MIGRATION_JOB_NAME, "it copies OxiCloud's blobs to another backend"],
  [REEXTRACT_AUDIO_JOB_NAME, "it rewrites OxiCloud's audio metadata"],
  [REEXTRACT_IMAGE_JOB_NAME, "it rewrites OxiCloud's image metadata"],
]);

/**
 * The write jobs switched on: every one on a database the engine owns; beside
 * OxiCloud only those {@link WRITE_JOBS_VAR} names (comma-separated engine
 * names). The rest are listed with why, for the boot line and the admin API's
 * answer to a trigger.
 *
 * @throws ServerError `BAD_CONFIG` for a name that is not a write job.
 */
export function writeJobsSwitch(
  mode: DatabaseMode,
  env: Readonly<Record<string, string | undefined>>,
): { readonly enabled: (job: string) => boolean; readonly off: readonly UnwiredJob[] } {
  const raw = env[WRITE_JOBS_VAR]?.trim() ?? '';
  const named = raw === '' ? [] : raw.split(',').map((name) => name.trim());
  const unknown = named.filter((name) => !WRITE_JOBS.has(name));
  if (unknown.length > 0) {
    throw new ServerError(
      'BAD_CONFIG',
      `${WRITE_JOBS_VAR}: ${unknown.map((n) => `"${n}"`).join(', ')} ${unknown.length === 1 ? 'is not a write job' : 'are not write jobs'}; ` +
        `the write jobs are ${[...WRITE_JOBS.keys()].join(', ')} (comma-separated)`,
    );
  }
  if (mode.kind === 'owned') return { enabled: () => true, off: [] };
  const { missingWrites, role } = mode.privileges;
  if (missingWrites.length > 0) {
    // A read-only role: the checks run; nothing that writes OxiCloud's tables is offered.
    const lacks = `the database role ${role} may not write OxiCloud's tables (lacks ${missingWrites.join(', ')}); grant those to use it`;
    const off = [...WRITE_JOBS.keys(), REPAIR_JOB_NAME].map((job) => ({
      job,
      reason: `beside OxiCloud ${job === REPAIR_JOB_NAME ? 'repair' : 'this write job'} is off: ${lacks}`,
    }));
    return { enabled: (job) => !WRITE_JOBS.has(job) && job !== REPAIR_JOB_NAME, off };
  }
  const on = new Set(named);
  const off = [...WRITE_JOBS]
    .filter(([job]) => !on.has(job))
    .map(([job, why]) => ({
      job,
      reason: `beside OxiCloud this write job is off (${why}); switch it on with ${WRITE_JOBS_VAR}=${job}`,
    }));
  return { enabled: (job) => !WRITE_JOBS.has(job) || on.has(job), off };
}
