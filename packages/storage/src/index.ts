/**
 * @oxicloud/storage: Adapters for the tenants' ports: Postgres repositories for the storage domain and the local-disk and S3 blob backends.
 *
 * @packageDocumentation
 */
export {};
export type { BlobData } from './blob/blob-data.js';
export { assertBlobHash, isBlobHash } from './blob/blob-hash.js';
export type { LocalFsBlobStorageOptions } from './blob/local-fs-blob-storage.js';
export { LocalFsBlobStorage } from './blob/local-fs-blob-storage.js';
export type { S3BlobStorageOptions } from './blob/s3-blob-storage.js';
export { S3BlobStorage } from './blob/s3-blob-storage.js';
export type { StorageBackendName } from './blob/s3-config.js';
export { S3_ENV, s3ConfigFromEnv, STORAGE_BACKEND_ENV, storageBackendFromEnv } from './blob/s3-config.js';
export type { Blake3Hasher } from './hashing/blake3.js';
export { BLAKE3_EMPTY, blake3Hex, createBlake3Hasher } from './hashing/blake3.js';
export type { Blake3WorkerPoolOptions, BlobDigest } from './hashing/blake3-worker-pool.js';
export { Blake3WorkerPool, SNIFF_HEAD_BYTES } from './hashing/blake3-worker-pool.js';
export { LocalFsBlobHasher } from './hashing/local-fs-blob-hasher.js';
export { createBlobHasher, StreamingBlobHasher } from './hashing/streaming-blob-hasher.js';
export type { StorageErrorCode } from './storage-error.js';
export { isStorageError, STORAGE_ERROR_CODES, StorageError, toStorageError } from './storage-error.js';
export type { PgQueryable, UserRow } from './postgres/users-repository.js';
export { PgUsersRepository } from './postgres/users-repository.js';
export { PgAdminRecipients } from './postgres/admin-recipients.js';
export type { StorageDatabase } from './postgres/database.js';
export { bigintToNumber } from './postgres/database.js';
export { PgTrashRepository } from './postgres/pg-trash-repository.js';
export { PgUsageRepository } from './postgres/pg-usage-repository.js';
export { PgOrphanBlobRepository } from './postgres/pg-orphan-blob-repository.js';
export { PgGrantRepository } from './postgres/pg-grant-repository.js';
export type { PgDriveUsageScanOptions } from './postgres/pg-drive-usage-scan.js';
export { PgDriveUsageScan } from './postgres/pg-drive-usage-scan.js';
export type { PgFileBlobScanOptions } from './postgres/pg-file-blob-scan.js';
export { PgFileBlobScan } from './postgres/pg-file-blob-scan.js';
export type { PgFolderTreeScanOptions } from './postgres/pg-folder-tree-scan.js';
export { PgFolderTreeScan } from './postgres/pg-folder-tree-scan.js';
export { PgBlobWalkRepository } from './postgres/pg-blob-walk-repository.js';
export { PgBlobIndexScan } from './postgres/pg-blob-index-scan.js';
export { PgMediaFileRepository } from './postgres/pg-media-file-repository.js';
