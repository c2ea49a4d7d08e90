import type { ColumnType, Generated } from 'kysely';

/**
 * Kysely table types of the storage domain, as migrations/sql creates it
 * (0002_auth_users.sql, 0003_storage_domain.sql, 0004_media_metadata.sql).
 * Keys are schema-qualified (`'storage.files'`), so queries read
 * `db.selectFrom('storage.files')`. Add tables here as migrations add them.
 *
 * `BIGINT` columns arrive from `pg` as strings: select them as
 * {@link PgBigint} and convert with {@link bigintToNumber}, in one place.
 */

/** A `BIGINT` column: a string when read, a number/bigint/string when written. */
export type PgBigint = ColumnType<string, number | bigint | string, number | bigint | string>;
/** A nullable `BIGINT` column. */
export type PgNullableBigint = ColumnType<
  string | null,
  number | bigint | string | null,
  number | bigint | string | null
>;
/** A `TIMESTAMPTZ` column with a default. */
export type PgTimestampDefault = ColumnType<Date, Date | string | undefined, Date | string>;
/** A nullable `TIMESTAMPTZ` column. */
export type PgNullableTimestamp = ColumnType<
  Date | null,
  Date | string | null | undefined,
  Date | string | null
>;

/** `auth.users`. */
export interface UsersTable {
  id: Generated<string>;
  username: string;
  email: string | null;
  role: ColumnType<'admin' | 'user', 'admin' | 'user' | undefined, 'admin' | 'user'>;
  quota_bytes: PgNullableBigint;
  /** The "user envelope": the sum of `used_bytes` over the user's drives. */
  storage_used_bytes: ColumnType<string, number | bigint | string | undefined, number | bigint | string>;
  created_at: PgTimestampDefault;
}

/** `storage.drives`. */
export interface DrivesTable {
  id: Generated<string>;
  owner_id: string;
  name: string;
  used_bytes: ColumnType<string, number | bigint | string | undefined, number | bigint | string>;
  quota_bytes: PgNullableBigint;
  created_at: PgTimestampDefault;
}

/** `storage.folders` (`path` and `lpath` are kept by triggers). */
export interface FoldersTable {
  id: Generated<string>;
  drive_id: string;
  parent_id: string | null;
  name: string;
  path: ColumnType<string, never, never>;
  /** `ltree` as text (`label.label…`). */
  lpath: ColumnType<string, never, never>;
  is_trashed: ColumnType<boolean, boolean | undefined, boolean>;
  trashed_at: PgNullableTimestamp;
  created_at: PgTimestampDefault;
  updated_at: PgTimestampDefault;
}

/** `storage.files` (no FK to blobs on purpose; `ref_count` kept by statement triggers). */
export interface FilesTable {
  id: Generated<string>;
  drive_id: string;
  folder_id: string | null;
  name: string;
  blob_hash: string;
  size: PgBigint;
  mime_type: ColumnType<string, string | undefined, string>;
  is_trashed: ColumnType<boolean, boolean | undefined, boolean>;
  trashed_at: PgNullableTimestamp;
  created_at: PgTimestampDefault;
  updated_at: PgTimestampDefault;
}

/** `storage.blobs` (content-addressed by BLAKE3 hex). */
export interface BlobsTable {
  hash: string;
  size: PgBigint;
  ref_count: ColumnType<number, number | undefined, number>;
  /** Set when `ref_count` is 0; cleared when a reference arrives. */
  orphaned_at: PgNullableTimestamp;
  /** Set by `dedup_gc` once it decided to delete the blob (0007); a file may not reference a marked blob. */
  deleting_at: PgNullableTimestamp;
  content_type: string | null;
  created_at: PgTimestampDefault;
}

/** `storage.role_grants`. */
export interface RoleGrantsTable {
  id: Generated<string>;
  subject_id: string;
  resource_type: 'drive' | 'folder' | 'file';
  resource_id: string;
  role: 'viewer' | 'editor' | 'owner';
  granted_by: string | null;
  created_at: PgTimestampDefault;
  expires_at: PgNullableTimestamp;
}

/** `storage.audio_metadata`. */
export interface AudioMetadataTable {
  file_id: string;
  title: string | null;
  artist: string | null;
  album: string | null;
  genre: string | null;
  year: number | null;
  track_number: number | null;
  duration_seconds: number | null;
  bitrate: number | null;
  codec: string | null;
  extracted_at: PgTimestampDefault;
}

/** `storage.image_metadata`. */
export interface ImageMetadataTable {
  file_id: string;
  captured_at: PgNullableTimestamp;
  camera_make: string | null;
  camera_model: string | null;
  width: number | null;
  height: number | null;
  extracted_at: PgTimestampDefault;
}

/** Every storage-domain table, keyed by its schema-qualified name. */
export interface StorageDatabase {
  'auth.users': UsersTable;
  'storage.drives': DrivesTable;
  'storage.folders': FoldersTable;
  'storage.files': FilesTable;
  'storage.blobs': BlobsTable;
  'storage.role_grants': RoleGrantsTable;
  'storage.audio_metadata': AudioMetadataTable;
  'storage.image_metadata': ImageMetadataTable;
}

/**
 * A `BIGINT` (or `COUNT(*)`) value from `pg` → number. Throws when it is
 * beyond 2^53 − 1, where a JS number would silently lose precision.
 */
export function bigintToNumber(value: string | number | bigint | null | undefined): number {
  if (value === null || value === undefined) return 0;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n)) {
    throw new RangeError(`BIGINT value ${String(value)} is not a safe integer (beyond 2^53 - 1)`);
  }
  return n;
}
