/** The storage_consistency tenant: the blob backend merged with `storage.blobs` (orphans, missing bytes, objects of the wrong size, deep re-hash + mime sniff), then OxiCloud's thumbnails and file-id keyed derived files. */

export type { MimeSniff } from './mime-sniff.js';
export { mimeContradicts, normaliseMime, sniffMime } from './mime-sniff.js';
export type { StorageConsistencyCheckOptions } from './storage-consistency-check.js';
export {
  BLOB_HASH_MISMATCH,
  BLOB_MIME_MISMATCH,
  BLOB_OBJECT_SIZE_MISMATCH,
  createStorageConsistencyCheck,
  ENCRYPTED_OBJECT_OVERHEAD_BYTES,
  MISSING_BLOB_BYTES,
  MISSING_BYTES_MAX_FILE_IDS,
  ORPHAN_BLOB,
  ORPHAN_FILE_THUMBNAIL,
  ORPHAN_THUMBNAIL,
  ORPHAN_TRANSCODED_IMAGE,
  STORAGE_CONSISTENCY_CHECK_NAME,
} from './storage-consistency-check.js';
export type { StoreCanaryOptions } from './store-canary.js';
export { STORE_CANARY_SAMPLE, storeCanary } from './store-canary.js';
export type {
  DerivedFiles,
  FileDerivativesEntry,
  ThumbnailEntry,
  ThumbnailStore,
} from './thumbnail-store.js';
