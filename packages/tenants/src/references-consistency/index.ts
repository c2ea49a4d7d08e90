/** The references_consistency tenant: rows that name a file or folder by id, with no foreign key, against the items. */

export type {
  DanglingReference,
  ReferenceScan,
  ReferenceScanOptions,
  ReferenceSource,
} from './reference-scan.js';
export { REFERENCE_SOURCES } from './reference-scan.js';
export type { ReferencesConsistencyCheckOptions } from './references-consistency-check.js';
export {
  createReferencesConsistencyCheck,
  REFERENCES_CONSISTENCY_CHECK_NAME,
  referenceFinding,
} from './references-consistency-check.js';
