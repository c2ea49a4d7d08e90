/** The references_consistency tenant: rows that name a file or folder by id, with no foreign key, against the items. */

export type {
  DanglingReference,
  ReferenceScan,
  ReferenceScanOptions,
  ReferenceSource,
  ShareGrantReason,
} from './reference-scan.js';
export { REFERENCE_SOURCES, SHARE_GRANT_REASONS } from './reference-scan.js';
export type { ReferencesConsistencyCheckOptions } from './references-consistency-check.js';
export {
  createReferencesConsistencyCheck,
  REFERENCES_CONSISTENCY_CHECK_NAME,
  referenceFinding,
  SHARE_GRANT_MISMATCH,
} from './references-consistency-check.js';
