export type { BlobData } from './blob/blob-data.js';
export { assertBlobHash, isBlobHash } from './blob/blob-hash.js';
export {
  BLOB_OBJECT_SUFFIX,
  blobObjectKey,
  hashOfBlobObjectKey,
  LOCAL_BLOBS_DIR,
  LOCAL_QUARANTINE_DIR,
  localBlobDir,
  localBlobPath,
  localBlobsDir,
  localQuarantinedBlobPath,
  localQuarantinedManifestPath,
  S3_QUARANTINE_PREFIX,
} from './blob/blob-layout.js';
export { blobQuarantineOf } from './blob/blob-quarantine-of.js';
export type { EncryptedBlobStorageOptions } from './blob/encrypted-blob-storage.js';
export {
  ENCRYPTION_NONCE_BYTES,
  ENCRYPTION_OVERHEAD_BYTES,
  ENCRYPTION_TAG_BYTES,
  EncryptedBlobStorage,
} from './blob/encrypted-blob-storage.js';
export type { LocalFsBlobStorageOptions } from './blob/local-fs-blob-storage.js';
export { LocalFsBlobStorage } from './blob/local-fs-blob-storage.js';
export { LocalThumbnailStore } from './blob/local-thumbnail-store.js';
export { readsMediaAtRawPath } from './blob/raw-media-path.js';
export type { S3BlobStorageOptions } from './blob/s3-blob-storage.js';
export { S3BlobStorage } from './blob/s3-blob-storage.js';
export type { StorageBackendName } from './blob/s3-config.js';
export {
  S3_DEFAULT_REGION,
  S3_ENV,
  S3_ENV_ALIASES,
  STORAGE_BACKEND_ENV,
  s3ConfigFromEnv,
  storageBackendFromEnv,
} from './blob/s3-config.js';
export {
  parseStorageEncryptionKey,
  STORAGE_ENCRYPTION_ENV,
  STORAGE_ENCRYPTION_KEY_BYTES,
  storageEncryptionFromEnv,
} from './blob/storage-encryption-config.js';
export type { ThumbnailSize } from './blob/thumbnail-layout.js';
export {
  externalThumbnailFileIdOf,
  externalThumbnailPath,
  THUMBNAIL_EXTENSIONS,
  THUMBNAIL_SIZES,
  THUMBNAILS_DIR,
  TRANSCODED_DIR,
  TRANSCODED_FORMAT,
  thumbnailHashOf,
  thumbnailPath,
  transcodedFileIdOf,
  transcodedImagePath,
} from './blob/thumbnail-layout.js';
export {
  CATEGORY_ORDER_DEFAULT,
  CATEGORY_ORDERS,
  type Category,
  categoryOrderFor,
} from './content/category-order.js';
export type {
  BlobRefCountBasis,
  ExpectedBlobRefCount,
  FileBlobRef,
  ManifestChunkList,
} from './content/expected-blob-ref-counts.js';
export {
  BLOB_REF_COUNT_BASES,
  BlobRefCountExpectation,
  expectedBlobRefCounts,
} from './content/expected-blob-ref-counts.js';
export type {
  ContentChunk,
  FileContent,
  LegacyFileContent,
  ManifestFileContent,
} from './content/file-content.js';
export { CDC_CHUNK_SIZES, fileContentSize, manifestContent } from './content/file-content.js';
export type { FileContentDigest, HashFileContentOptions } from './content/hash-file-content.js';
export { hashFileContent } from './content/hash-file-content.js';
export type {
  ChunkManifest,
  ManifestShapeProblem,
  ManifestShapeProblemCode,
} from './content/manifest-shape.js';
export { MANIFEST_SHAPE_PROBLEM_CODES, manifestShapeProblems } from './content/manifest-shape.js';
export type { OpenFileContentOptions } from './content/open-file-content.js';
export { openFileContent } from './content/open-file-content.js';
export type { Blake3Hasher } from './hashing/blake3.js';
export { BLAKE3_EMPTY, blake3Hex, createBlake3Hasher } from './hashing/blake3.js';
export type { Blake3WorkerPoolOptions, BlobDigest } from './hashing/blake3-worker-pool.js';
export { Blake3WorkerPool, SNIFF_HEAD_BYTES } from './hashing/blake3-worker-pool.js';
export { LocalFsBlobHasher } from './hashing/local-fs-blob-hasher.js';
export { createBlobHasher, StreamingBlobHasher } from './hashing/streaming-blob-hasher.js';
export type { PgQueryable } from './postgres/database.js';
export { bigintToNumber } from './postgres/database.js';
export type { StorageErrorCode } from './storage-error.js';
export { isStorageError, STORAGE_ERROR_CODES, StorageError, toStorageError } from './storage-error.js';
