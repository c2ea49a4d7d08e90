/**
 * The `dedup_gc` tenant: collects unreferenced content after a grace window.
 * `createDedupGcJob` on the engine's own model (bytes, then row, under its
 * marking protocol); `createContentGcJob` on OxiCloud's storage domain
 * (manifests, then blob rows, bytes moved to a quarantine).
 *
 * @packageDocumentation
 */
export type { DedupGcConfig } from './config.js';
export {
  assertDedupGcConfig,
  DEDUP_GC_DEFAULTS,
  DEDUP_GC_ENV,
  dedupGcConfigFromEnv,
  quarantineGraceMsOf,
} from './config.js';
export type { ContentGcJobOptions } from './content-gc-job.js';
export { createContentGcJob } from './content-gc-job.js';
export type { DedupGcJob, DedupGcJobOptions } from './dedup-gc-job.js';
export { createDedupGcJob, DEDUP_GC_JOB_NAME } from './dedup-gc-job.js';
