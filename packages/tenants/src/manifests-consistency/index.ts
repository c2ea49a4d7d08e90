/**
 * The manifests_consistency tenant: each chunk manifest's `ref_count` against the files that name it, and its
 * shape; with `deep`, a pass of its own that hashes each multi-chunk manifest's chunks in order against its
 * `file_hash` (re-reading shared chunks).
 */
export type { ManifestsConsistencyCheckOptions } from './manifests-consistency-check.js';
export {
  createManifestsConsistencyCheck,
  MANIFEST_HASH_MISMATCH,
  MANIFEST_REF_COUNT_HIGH,
  MANIFEST_REF_COUNT_LOW,
  MANIFEST_SHAPE_MISMATCH,
  MANIFEST_UNREFERENCED,
  MANIFESTS_CONSISTENCY_CHECK_NAME,
  manifestFindings,
} from './manifests-consistency-check.js';
