/**
 * The `dedup_gc` tenant: collects unreferenced content after a grace window,
 * on OxiCloud's storage domain (`createContentGcJob`: manifests, then blob
 * rows, bytes moved to a quarantine).
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
export type { ContentGcJobOptions, DedupGcJob } from './content-gc-job.js';
export { createContentGcJob, DEDUP_GC_JOB_NAME } from './content-gc-job.js';
