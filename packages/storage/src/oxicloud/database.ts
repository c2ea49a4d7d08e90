import type { ColumnType, Generated } from 'kysely';
import type {
  PgBigint,
  PgNullableBigint,
  PgNullableTimestamp,
  PgTimestampDefault,
} from '../postgres/database.js';

/**
 * Kysely table types of OxiCloud's storage domain (the fact sheet, and
 * `migrations/oxicloud-domain/`, which the embedded default will create):
 * the tables the jobs and checks read and write. Keys are schema-qualified.
 * Columns a job never touches are left out; add them where a query needs
 * them. `BIGINT` arrives as a string: convert with `bigintToNumber`.
 */

/** `auth.users` (no username NOT NULL, no quota column: `storage_quota_bytes` ≤ 0 means unlimited). */
export interface OxiUsersTable {
  id: Generated<string>;
  username: string | null;
  email: string;
  password_hash: string | null;
  role: 'admin' | 'user';
  storage_quota_bytes: ColumnType<string, number | bigint | string | undefined, number | bigint | string>;
  storage_used_bytes: ColumnType<string, number | bigint | string | undefined, number | bigint | string>;
  created_at: PgTimestampDefault;
  updated_at: PgTimestampDefault;
  active: ColumnType<boolean, boolean | undefined, boolean>;
  is_external: ColumnType<boolean, boolean | undefined, boolean>;
}

/** `storage.drives`: no name (the root folder's name is the display name), no owner column (owner grants). */
export interface OxiDrivesTable {
  id: Generated<string>;
  kind: 'personal' | 'shared';
  default_for_user: string | null;
  root_folder_id: string | null;
  quota_bytes: PgNullableBigint;
  used_bytes: ColumnType<string, number | bigint | string | undefined, number | bigint | string>;
  policies: ColumnType<Record<string, unknown>, string | undefined, string>;
  created_at: PgTimestampDefault;
  updated_at: PgTimestampDefault;
}

/** `storage.folders` (`path` and `lpath` are set by trigger). */
export interface OxiFoldersTable {
  id: Generated<string>;
  name: string;
  parent_id: string | null;
  path: ColumnType<string, string | undefined, string>;
  lpath: ColumnType<string, string | undefined, string>;
  is_trashed: ColumnType<boolean, boolean | undefined, boolean>;
  trashed_at: PgNullableTimestamp;
  original_parent_id: string | null;
  created_at: PgTimestampDefault;
  updated_at: PgTimestampDefault;
  drive_id: string;
  created_by: string | null;
  updated_by: string | null;
}

/** `storage.files`: `blob_hash` names a manifest (`file_hash`) or a legacy blob; no FK. */
export interface OxiFilesTable {
  id: Generated<string>;
  name: string;
  folder_id: string | null;
  blob_hash: string;
  size: PgBigint;
  mime_type: ColumnType<string, string | undefined, string>;
  is_trashed: ColumnType<boolean, boolean | undefined, boolean>;
  trashed_at: PgNullableTimestamp;
  original_folder_id: string | null;
  created_at: PgTimestampDefault;
  updated_at: PgTimestampDefault;
  media_sort_date: PgTimestampDefault;
  category_order: ColumnType<number, number | undefined, number>;
  drive_id: string;
  created_by: string | null;
  updated_by: string | null;
}

/** `storage.blobs`: one row per stored object (a chunk or a legacy whole-file blob); `size` is plaintext. */
export interface OxiBlobsTable {
  hash: string;
  size: PgBigint;
  ref_count: ColumnType<number, number | undefined, number>;
  content_type: string | null;
  created_at: PgTimestampDefault;
  orphaned_at: PgNullableTimestamp;
}

/** `storage.chunk_manifests`: one row per distinct CDC content; chunks in order, repeats allowed. */
export interface OxiChunkManifestsTable {
  file_hash: string;
  chunk_hashes: string[];
  chunk_sizes: ColumnType<string[], (number | string)[], (number | string)[]>;
  total_size: PgBigint;
  chunk_count: number;
  content_type: string | null;
  ref_count: ColumnType<number, number | undefined, number>;
  created_at: PgTimestampDefault;
}

/** `storage.role_grants` (no foreign keys at all). */
export interface OxiRoleGrantsTable {
  id: Generated<string>;
  subject_type: 'user' | 'group' | 'token';
  subject_id: string;
  resource_type: 'folder' | 'file' | 'drive' | 'calendar' | 'address_book' | 'playlist';
  resource_id: string;
  role: 'owner' | 'editor' | 'contributor' | 'commenter' | 'viewer';
  granted_by: string;
  granted_at: PgTimestampDefault;
  expires_at: PgNullableTimestamp;
}

/** `storage.file_metadata`: image and video capture data, one row per file (FK files ON DELETE CASCADE). */
export interface OxiFileMetadataTable {
  file_id: string;
  captured_at: PgNullableTimestamp;
  latitude: number | null;
  longitude: number | null;
  camera_make: string | null;
  camera_model: string | null;
  /** EXIF orientation 1–8. */
  orientation: number | null;
  width: number | null;
  height: number | null;
  created_at: PgTimestampDefault;
}

/** `audio.file_metadata`: audio tags, one row per file (FK files ON DELETE CASCADE). */
export interface OxiAudioFileMetadataTable {
  file_id: string;
  title: string | null;
  artist: string | null;
  album: string | null;
  album_artist: string | null;
  genre: string | null;
  track_number: number | null;
  disc_number: number | null;
  year: number | null;
  /** Whole seconds, NOT NULL DEFAULT 0. */
  duration_secs: ColumnType<number, number | undefined, number>;
  bitrate: number | null;
  sample_rate: number | null;
  channels: number | null;
  format: string | null;
  created_at: PgTimestampDefault;
  updated_at: PgTimestampDefault;
}

/** The tables of OxiCloud's storage domain the engine queries. */
export interface OxiCloudDatabase {
  'auth.users': OxiUsersTable;
  'storage.drives': OxiDrivesTable;
  'storage.folders': OxiFoldersTable;
  'storage.files': OxiFilesTable;
  'storage.blobs': OxiBlobsTable;
  'storage.chunk_manifests': OxiChunkManifestsTable;
  'storage.role_grants': OxiRoleGrantsTable;
  'storage.file_metadata': OxiFileMetadataTable;
  'audio.file_metadata': OxiAudioFileMetadataTable;
}
