/**
 * The `dedup_gc` tenant: collects orphan blobs (bytes, then row) after a grace window.
 *
 * @packageDocumentation
 */
export type { DedupGcConfig } from './config.js';
export { assertDedupGcConfig, DEDUP_GC_DEFAULTS, DEDUP_GC_ENV, dedupGcConfigFromEnv } from './config.js';
export type { DedupGcJob, DedupGcJobOptions } from './dedup-gc-job.js';
export { createDedupGcJob, DEDUP_GC_JOB_NAME } from './dedup-gc-job.js';
