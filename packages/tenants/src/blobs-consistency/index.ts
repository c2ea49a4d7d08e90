/** The blobs_consistency tenant: each blob row's `ref_count` and `orphaned_at` against the files that reference it. */
export type { BlobsConsistencyCheckOptions } from './blobs-consistency-check.js';
export {
  BLOBS_CONSISTENCY_CHECK_NAME,
  blobRowFindings,
  createBlobsConsistencyCheck,
  ORPHANED_AT_MISMATCH,
  REF_COUNT_MISMATCH,
} from './blobs-consistency-check.js';
