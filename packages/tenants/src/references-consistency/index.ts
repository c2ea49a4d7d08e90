/** The references_consistency tenant: rows that name a file or folder by id, with no foreign key, against the items; faces against their file's content hash. */

export type {
  DanglingReference,
  FaceHashReason,
  ReferenceScan,
  ReferenceScanOptions,
  ReferenceSource,
  ShareGrantReason,
} from './reference-scan.js';
export { FACE_HASH_REASONS, REFERENCE_SOURCES, SHARE_GRANT_REASONS } from './reference-scan.js';
export type { ReferencesConsistencyCheckOptions } from './references-consistency-check.js';
export {
  createReferencesConsistencyCheck,
  REFERENCES_CONSISTENCY_CHECK_NAME,
  referenceFinding,
  SHARE_GRANT_MISMATCH,
  STALE_FACE_HASH,
} from './references-consistency-check.js';
