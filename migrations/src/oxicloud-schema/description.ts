import {
  ANY_DEFAULT,
  type CheckDescription,
  type ColumnDefault,
  type ColumnDescription,
  type ForeignKeyDescription,
  type IndexDescription,
  type OnDelete,
  type SchemaDescription,
  type TableDescription,
  type TriggerDescription,
} from './types.js';

/*
 * OxiCloud's drive-era schema (EdouardVanbelle/OxiCloud, all 69 migrations,
 * 20260307000000 … 20260921000000), as the fact sheet (`OXICLOUD.md`) gives
 * it; where the fact sheet is silent, from the real schema's facts (names and
 * types), with the OxiCloud migration file in a comment. Written here as
 * data: no OxiCloud SQL is in this repository. `docs/oxicloud-schema.md`
 * records the one-off comparison with a database migrated by those files.
 */

const TSZ = 'timestamp with time zone';
const UUID_PK: ColumnDescription = {
  name: 'id',
  type: 'uuid',
  nullable: false,
  default: 'gen_random_uuid()',
};

/** A NOT NULL column. */
const nn = (name: string, type: string, def: ColumnDefault = null): ColumnDescription => ({
  name,
  type,
  nullable: false,
  default: def,
});
/** A nullable column without a default. */
const opt = (name: string, type: string): ColumnDescription => ({
  name,
  type,
  nullable: true,
  default: null,
});

const fk = (
  column: string,
  schema: string,
  table: string,
  onDelete: OnDelete,
  refColumn = 'id',
): ForeignKeyDescription => ({
  columns: [column],
  references: { schema, table, columns: [refColumn] },
  onDelete,
});

const btree = (name: string, columns: string[], predicate: string | null = null): IndexDescription => ({
  name,
  unique: false,
  method: 'btree',
  columns,
  predicate,
});
const uniqueIndex = (name: string, columns: string[], predicate: string | null): IndexDescription => ({
  name,
  unique: true,
  method: 'btree',
  columns,
  predicate,
});

/** `CHECK ((col = ANY (ARRAY['a'::text, 'b'::text])))`, as Postgres prints an `IN` list. */
const inList = (column: string, values: string[]) =>
  `CHECK ((${column} = ANY (ARRAY[${values.map((v) => `'${v}'::text`).join(', ')}])))`;
const check = (name: string, meaning: string, definition?: string): CheckDescription =>
  definition === undefined ? { name, meaning } : { name, meaning, definition };

const table = (
  schema: string,
  name: string,
  parts: Partial<Omit<TableDescription, 'schema' | 'name' | 'columns'>> & {
    columns: ColumnDescription[];
  },
): TableDescription => ({
  schema,
  name,
  primaryKey: { columns: ['id'] },
  uniques: [],
  checks: [],
  foreignKeys: [],
  indexes: [],
  triggers: [],
  ...parts,
});

const rowTrigger = (
  name: string,
  timing: TriggerDescription['timing'],
  events: TriggerDescription['events'],
  fn: string,
  updateOf: string[] = [],
): TriggerDescription => ({ name, timing, events, level: 'row', updateOf, deferral: null, function: fn });
const statementTrigger = (
  name: string,
  events: TriggerDescription['events'],
  fn: string,
): TriggerDescription => ({
  name,
  timing: 'after',
  events,
  level: 'statement',
  updateOf: [],
  deferral: null,
  function: fn,
});

// --- auth -------------------------------------------------------------------------------------------------

/** Fact sheet §2. */
const users = table('auth', 'users', {
  columns: [
    UUID_PK,
    opt('username', 'text'),
    nn('email', 'text'),
    opt('password_hash', 'text'),
    nn('role', 'auth.userrole'),
    nn('storage_quota_bytes', 'bigint', "'10737418240'::bigint"),
    nn('storage_used_bytes', 'bigint', '0'),
    nn('created_at', TSZ, 'CURRENT_TIMESTAMP'),
    nn('updated_at', TSZ, 'CURRENT_TIMESTAMP'),
    opt('last_login_at', TSZ),
    nn('active', 'boolean', 'true'),
    opt('oidc_provider', 'character varying(255)'),
    opt('oidc_subject', 'character varying(255)'),
    opt('image', 'text'),
    nn('is_external', 'boolean', 'false'),
    // Types from 20260622000000_auth_users_email_verified_at.sql and the profile migrations (fact sheet: silent).
    opt('given_name', 'text'),
    opt('family_name', 'text'),
    opt('email_verified_at', TSZ),
    opt('preferred_locale', 'text'),
    nn('notify_on_share', 'boolean', 'true'),
    nn('ui_preferences', 'jsonb', "'{}'::jsonb"),
  ],
  uniques: [{ name: 'users_email_key', columns: ['email'] }, { columns: ['username'] }],
  checks: [
    check(
      'users_username_shape_v2',
      'NULL, or no @ and 2 to 64 characters',
      "CHECK (((username IS NULL) OR ((username !~ '@'::text) AND ((char_length(username) >= 2) AND (char_length(username) <= 64)))))",
    ),
    check(
      'users_external_not_admin',
      'an external user is never an admin',
      "CHECK ((NOT (is_external AND (role = 'admin'::auth.userrole))))",
    ),
    check(
      'users_external_no_storage',
      'an external user uses no storage',
      'CHECK (((NOT is_external) OR (storage_used_bytes = 0)))',
    ),
    // Names from 20260623000000_users_preferred_locale.sql and 20260913000000_users_ui_preferences.sql.
    check('users_preferred_locale_check', 'NULL or a BCP-47 shaped tag'),
    check('users_ui_preferences_is_object', 'ui_preferences is a JSON object'),
    check('users_ui_preferences_size_cap', 'ui_preferences takes at most 16384 bytes'),
  ],
  indexes: [
    uniqueIndex(
      'idx_users_oidc',
      ['oidc_provider', 'oidc_subject'],
      '((oidc_provider IS NOT NULL) AND (oidc_subject IS NOT NULL))',
    ),
    { name: 'idx_users_email_trgm', method: 'gin', columns: ['email public.gin_trgm_ops'] },
    { name: 'idx_users_username_trgm', method: 'gin', columns: ['username public.gin_trgm_ops'] },
    // 20260921000000_users_created_at_index.sql (the `-- no-transaction` file).
    btree('idx_users_created_at_desc', ['created_at DESC']),
  ],
  triggers: [
    /** Deletes every `storage.role_grants` row with subject ('user', OLD.id). */
    rowTrigger(
      'trg_cleanup_role_grants_user',
      'after',
      ['delete'],
      'storage.cleanup_role_grants_on_subject_delete',
    ),
  ],
});

/** Fact sheet §2. The virtual group `Internal` (00000000-0000-0000-0000-000000000001) is data, not schema. */
const subjectGroups = table('auth', 'subject_groups', {
  columns: [
    UUID_PK,
    nn('name', 'public.citext'),
    opt('description', 'text'),
    nn('is_virtual', 'boolean', 'false'),
    nn('created_at', TSZ, 'now()'),
    nn('updated_at', TSZ, 'now()'),
  ],
  // Constraint names from 20260612000000_subject_groups.sql.
  uniques: [{ name: 'subject_groups_name_uq', columns: ['name'] }],
  checks: [
    check(
      'subject_groups_name_rfc5321',
      'a letter or digit, then up to 63 letters, digits, dots, underscores or dashes',
      "CHECK ((name OPERATOR(public.~) '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'::public.citext))",
    ),
  ],
});

/** Fact sheet §2: no primary key. */
const subjectGroupMembers = table('auth', 'subject_group_members', {
  columns: [
    nn('group_id', 'uuid'),
    opt('member_user_id', 'uuid'),
    opt('member_group_id', 'uuid'),
    nn('added_at', TSZ, 'now()'),
    nn('added_by', 'uuid'),
  ],
  primaryKey: null,
  // Names from 20260612000000_subject_groups.sql.
  checks: [
    check('subject_group_members_xor', 'exactly one of member_user_id and member_group_id is set'),
    check(
      'subject_group_members_no_self',
      'a group is not its own member',
      'CHECK (((member_group_id IS NULL) OR (member_group_id <> group_id)))',
    ),
  ],
  foreignKeys: [
    fk('group_id', 'auth', 'subject_groups', 'cascade'),
    fk('member_user_id', 'auth', 'users', 'cascade'),
    fk('member_group_id', 'auth', 'subject_groups', 'cascade'),
    fk('added_by', 'auth', 'users', 'no action'),
  ],
  indexes: [
    uniqueIndex(
      'idx_subject_group_members_user',
      ['group_id', 'member_user_id'],
      '(member_user_id IS NOT NULL)',
    ),
    uniqueIndex(
      'idx_subject_group_members_group',
      ['group_id', 'member_group_id'],
      '(member_group_id IS NOT NULL)',
    ),
  ],
});

/** Fact sheet §10: no FK to the item, item_type has no CHECK. */
const userItems = (name: 'user_favorites' | 'user_recent_files', clock: 'created_at' | 'accessed_at') =>
  table('auth', name, {
    columns: [
      nn('id', 'integer', `nextval('auth.${name}_id_seq'::regclass)`),
      nn('user_id', 'uuid'),
      nn('item_id', 'text'),
      nn('item_type', 'text'),
      // 20260307000000_initial_schema.sql (fact sheet: silent).
      nn(clock, TSZ, 'CURRENT_TIMESTAMP'),
    ],
    uniques: [{ columns: ['user_id', 'item_id', 'item_type'] }],
    foreignKeys: [fk('user_id', 'auth', 'users', 'cascade')],
  });

/**
 * Fact sheet §10 (resource_type/resource_id with no FK); the other columns
 * from 20260612000004_magic_link_tokens.sql and 20260621000000_magic_link_request_challenge.sql.
 */
const magicLinkTokens = table('auth', 'magic_link_tokens', {
  columns: [
    UUID_PK,
    nn('token', 'text'),
    nn('user_id', 'uuid'),
    nn('status', 'auth.magic_link_status', "'pending'::auth.magic_link_status"),
    nn('issued_at', TSZ, 'now()'),
    nn('expires_at', TSZ),
    opt('used_at', TSZ),
    opt('resource_type', 'text'),
    opt('resource_id', 'uuid'),
    opt('request_challenge', 'text'),
  ],
  uniques: [{ columns: ['token'] }],
  checks: [
    check('magic_link_tokens_resource_pair', 'resource_type and resource_id are both set or both NULL'),
    check('magic_link_tokens_resource_type_check', "NULL, 'file' or 'folder'"),
  ],
  foreignKeys: [fk('user_id', 'auth', 'users', 'cascade')],
});

// --- storage: drives, the tree, content ----------------------------------------------------------------------

/** Fact sheet §3. */
const drives = table('storage', 'drives', {
  columns: [
    UUID_PK,
    nn('kind', 'text'),
    opt('default_for_user', 'uuid'),
    opt('root_folder_id', 'uuid'),
    opt('quota_bytes', 'bigint'),
    nn('used_bytes', 'bigint', '0'),
    nn('policies', 'jsonb', "'{}'::jsonb"),
    nn('created_at', TSZ, 'now()'),
    nn('updated_at', TSZ, 'now()'),
  ],
  checks: [
    check('drives_kind_check', "'personal' or 'shared'", inList('kind', ['personal', 'shared'])),
    check(
      'drives_personal_quota_null',
      'a personal drive has no quota of its own (the user envelope counts)',
      "CHECK (((kind <> 'personal'::text) OR (quota_bytes IS NULL)))",
    ),
  ],
  foreignKeys: [
    fk('default_for_user', 'auth', 'users', 'cascade'),
    fk('root_folder_id', 'storage', 'folders', 'cascade'),
  ],
  indexes: [
    uniqueIndex('idx_drives_default_for_user_unique', ['default_for_user'], '(default_for_user IS NOT NULL)'),
    btree('idx_drives_kind', ['kind']),
  ],
  triggers: [
    /** Sets `updated_at = now()` on every update. */
    rowTrigger('trg_drives_touch_updated_at', 'before', ['update'], 'storage.drives_touch_updated_at'),
  ],
});

/** Fact sheet §4. */
const folders = table('storage', 'folders', {
  columns: [
    UUID_PK,
    nn('name', 'text'),
    opt('parent_id', 'uuid'),
    nn('path', 'text', "''::text"),
    nn('lpath', 'public.ltree', "''::public.ltree"),
    nn('is_trashed', 'boolean', 'false'),
    opt('trashed_at', TSZ),
    opt('original_parent_id', 'uuid'),
    nn('created_at', TSZ, 'CURRENT_TIMESTAMP'),
    nn('updated_at', TSZ, 'CURRENT_TIMESTAMP'),
    nn('tree_modified_at', TSZ, 'now()'),
    nn('drive_id', 'uuid'),
    opt('created_by', 'uuid'),
    opt('updated_by', 'uuid'),
  ],
  foreignKeys: [
    fk('parent_id', 'storage', 'folders', 'cascade'),
    fk('drive_id', 'storage', 'drives', 'cascade'),
    fk('created_by', 'auth', 'users', 'set null'),
    fk('updated_by', 'auth', 'users', 'set null'),
  ],
  indexes: [
    uniqueIndex(
      'idx_folders_unique_name',
      ['parent_id', 'name', 'drive_id'],
      '((NOT is_trashed) AND (parent_id IS NOT NULL))',
    ),
    uniqueIndex(
      'idx_folders_unique_name_root',
      ['name', 'drive_id'],
      '((NOT is_trashed) AND (parent_id IS NULL))',
    ),
    { name: 'idx_folders_lpath', method: 'gist', columns: ['lpath'] },
    btree('idx_folders_path', ['path text_pattern_ops']),
    btree('idx_folders_trash_expiry', ['trashed_at'], 'is_trashed'),
    btree('idx_folders_drive_trashed', ['drive_id', 'trashed_at'], 'is_trashed'),
    { name: 'idx_folders_parent_lname', method: 'btree' },
    { name: 'idx_folders_name_trgm', method: 'gin', columns: ['name public.gin_trgm_ops'] },
  ],
  triggers: [
    /**
     * Computes `path` and `lpath` from the parent row: a root gets
     * `path = name`, `lpath = label(id)`; a child `parent.path || '/' || name`
     * and `parent.lpath || label(id)`, where label(id) is the uuid with `-`
     * replaced by `_`. Supplied values are overwritten.
     */
    rowTrigger('trg_folders_path', 'before', ['insert', 'update'], 'storage.compute_folder_path', [
      'name',
      'parent_id',
    ]),
    /**
     * Unless `pg_trigger_depth() > 1`: when path or lpath changed, rewrites
     * the descendants by prefix substitution; when drive_id changed, moves
     * the subtree's folders and files that had the old drive to the new one.
     */
    rowTrigger('trg_folders_cascade_path', 'after', ['update'], 'storage.cascade_folder_path', [
      'name',
      'parent_id',
      'path',
      'lpath',
      'drive_id',
    ]),
    /**
     * At commit: a non-trashed root folder that still exists must be the
     * `root_folder_id` of the drive it names, else "Orphan root folder rejected".
     */
    {
      name: 'trg_no_orphan_root_folder',
      timing: 'after',
      events: ['insert', 'update'],
      level: 'row',
      updateOf: [],
      deferral: 'deferrable initially deferred',
      function: 'storage.check_no_orphan_root_folder',
    },
    /** Deletes the grants on ('folder', OLD.id); cascaded deletes fire it too. */
    rowTrigger(
      'trg_cleanup_role_grants_folder',
      'after',
      ['delete'],
      'storage.cleanup_role_grants_on_resource_delete',
    ),
    /** Enqueue the parent chain into `storage.tree_etag_dirty` (no-ops when nested). */
    statementTrigger('folders_bump_tree_etag_ins', ['insert'], 'storage.bump_tree_from_folders_stmt'),
    statementTrigger('folders_bump_tree_etag_upd', ['update'], 'storage.bump_tree_from_folders_stmt_upd'),
    statementTrigger('folders_bump_tree_etag_del', ['delete'], 'storage.bump_tree_from_folders_stmt'),
  ],
});

/** Fact sheet §4. */
const files = table('storage', 'files', {
  columns: [
    UUID_PK,
    nn('name', 'text'),
    opt('folder_id', 'uuid'),
    nn('blob_hash', 'character varying(64)'),
    nn('size', 'bigint', '0'),
    nn('mime_type', 'text', "'application/octet-stream'::text"),
    nn('is_trashed', 'boolean', 'false'),
    opt('trashed_at', TSZ),
    opt('original_folder_id', 'uuid'),
    nn('created_at', TSZ, 'CURRENT_TIMESTAMP'),
    nn('updated_at', TSZ, 'CURRENT_TIMESTAMP'),
    nn('media_sort_date', TSZ, 'CURRENT_TIMESTAMP'),
    nn('category_order', 'smallint', '9999'),
    nn('drive_id', 'uuid'),
    opt('created_by', 'uuid'),
    opt('updated_by', 'uuid'),
  ],
  foreignKeys: [
    fk('folder_id', 'storage', 'folders', 'cascade'),
    fk('drive_id', 'storage', 'drives', 'cascade'),
    fk('created_by', 'auth', 'users', 'set null'),
    fk('updated_by', 'auth', 'users', 'set null'),
  ],
  indexes: [
    uniqueIndex(
      'idx_files_unique_name_in_folder',
      ['drive_id', 'folder_id', 'name'],
      '((NOT is_trashed) AND (folder_id IS NOT NULL))',
    ),
    uniqueIndex(
      'idx_files_unique_name_at_root',
      ['drive_id', 'name'],
      '((NOT is_trashed) AND (folder_id IS NULL))',
    ),
    btree('idx_files_blob_hash', ['blob_hash']),
    btree('idx_files_trash_expiry', ['trashed_at'], 'is_trashed'),
    btree('idx_files_drive_trashed', ['drive_id', 'trashed_at'], 'is_trashed'),
    { name: 'idx_files_folder_name', method: 'btree' },
    { name: 'idx_files_folder_lname', method: 'btree' },
    { name: 'idx_files_media_timeline_by_drive', method: 'btree' },
    { name: 'idx_files_name_trgm', method: 'gin', columns: ['name public.gin_trgm_ops'] },
  ],
  triggers: [
    /**
     * The one reference-count trigger: `ref_count = greatest(ref_count - 1, 0)`
     * on the `storage.blobs` row named OLD.blob_hash, stamping `orphaned_at`
     * at 0. Never touches `chunk_manifests`.
     */
    rowTrigger('trg_files_decrement_blob_ref', 'after', ['delete'], 'storage.decrement_blob_ref'),
    /** Deletes the grants on ('file', OLD.id). */
    rowTrigger(
      'trg_cleanup_role_grants_file',
      'after',
      ['delete'],
      'storage.cleanup_role_grants_on_resource_delete',
    ),
    /** Enqueue (folder.lpath, folder.id, folder.drive_id) per touched folder (no-ops when nested). */
    statementTrigger('files_bump_tree_etag_ins', ['insert'], 'storage.bump_tree_from_files_stmt'),
    statementTrigger('files_bump_tree_etag_upd', ['update'], 'storage.bump_tree_from_files_stmt_upd'),
    statementTrigger('files_bump_tree_etag_del', ['delete'], 'storage.bump_tree_from_files_stmt'),
    /** Enqueue 'upsert'/'delete' rows into `storage.search_index_dirty` (no depth guard). */
    statementTrigger('files_enqueue_search_ins', ['insert'], 'storage.enqueue_search_from_files_stmt'),
    statementTrigger('files_enqueue_search_upd', ['update'], 'storage.enqueue_search_from_files_stmt_upd'),
    statementTrigger('files_enqueue_search_del', ['delete'], 'storage.enqueue_search_from_files_stmt'),
  ],
});

/** Fact sheet §5: one row per object in the blob store. */
const blobs = table('storage', 'blobs', {
  columns: [
    nn('hash', 'character varying(64)'),
    nn('size', 'bigint'),
    nn('ref_count', 'integer', '1'),
    opt('content_type', 'text'),
    nn('created_at', TSZ, 'now()'),
    opt('orphaned_at', TSZ),
  ],
  primaryKey: { columns: ['hash'] },
  checks: [check('blobs_ref_count_check', 'ref_count >= 0', 'CHECK ((ref_count >= 0))')],
  indexes: [btree('idx_blobs_gc_eligible', ['orphaned_at'], '(ref_count = 0)')],
});

/** Fact sheet §5: one row per distinct CDC file content; no orphaned_at. */
const chunkManifests = table('storage', 'chunk_manifests', {
  columns: [
    nn('file_hash', 'character varying(64)'),
    nn('chunk_hashes', 'text[]'),
    nn('chunk_sizes', 'bigint[]'),
    nn('total_size', 'bigint'),
    nn('chunk_count', 'integer'),
    opt('content_type', 'text'),
    nn('ref_count', 'integer', '1'),
    nn('created_at', TSZ, 'now()'),
  ],
  primaryKey: { columns: ['file_hash'] },
  checks: [check('chunk_manifests_ref_count_check', 'ref_count >= 0', 'CHECK ((ref_count >= 0))')],
  indexes: [
    { name: 'idx_chunk_manifests_chunk_hashes_gin', method: 'gin', columns: ['chunk_hashes'] },
    { name: 'idx_chunk_manifests_ref_count_zero', method: 'btree' },
  ],
});

// --- storage: grants, shares, queues, per-resource state -------------------------------------------------

/** Fact sheet §8: no foreign keys at all. */
const roleGrants = table('storage', 'role_grants', {
  columns: [
    UUID_PK,
    nn('subject_type', 'text'),
    nn('subject_id', 'uuid'),
    nn('resource_type', 'text'),
    nn('resource_id', 'uuid'),
    nn('role', 'storage.grant_role'),
    nn('granted_by', 'uuid'),
    nn('granted_at', TSZ, 'now()'),
    opt('expires_at', TSZ),
  ],
  uniques: [{ columns: ['subject_type', 'subject_id', 'resource_type', 'resource_id'] }],
  checks: [
    check(
      'role_grants_subject_type_check',
      'user, group or token',
      inList('subject_type', ['user', 'group', 'token']),
    ),
    check(
      'role_grants_resource_type_check',
      'folder, file, drive, calendar, address_book or playlist',
      inList('resource_type', ['folder', 'file', 'drive', 'calendar', 'address_book', 'playlist']),
    ),
  ],
  indexes: [
    { name: 'idx_role_grants_subject', method: 'btree', columns: ['subject_type', 'subject_id'] },
    { name: 'idx_role_grants_resource', method: 'btree', columns: ['resource_type', 'resource_id'] },
    btree('idx_role_grants_expires_at', ['expires_at'], '(expires_at IS NOT NULL)'),
    btree('idx_role_grants_granted_by', ['granted_by']),
  ],
  triggers: [
    /** When a token grant goes and its token has no grant left, deletes the `storage.shares` row. */
    rowTrigger(
      'trg_cleanup_share_on_role_grant_delete',
      'after',
      ['delete'],
      'storage.cleanup_share_on_last_role_grant_delete',
    ),
  ],
});

/** Fact sheet §8: a share is a token subject; item_id is text with no FK. */
const shares = table('storage', 'shares', {
  columns: [
    // The id default: 20260307000000_initial_schema.sql (fact sheet: silent).
    UUID_PK,
    nn('item_id', 'text'),
    opt('item_name', 'text'),
    nn('item_type', 'text'),
    nn('token', 'character varying(36)'),
    opt('password_hash', 'text'),
    nn('created_at', 'bigint'),
    nn('created_by', 'uuid'),
    nn('access_count', 'bigint', '0'),
  ],
  uniques: [{ columns: ['token'] }],
  checks: [check('shares_item_type_check', 'file or folder', inList('item_type', ['file', 'folder']))],
  triggers: [
    /** Deletes the grants with subject ('token', OLD.id). */
    rowTrigger(
      'trg_cleanup_role_grants_token',
      'after',
      ['delete'],
      'storage.cleanup_role_grants_on_subject_delete',
    ),
  ],
});

/** Fact sheet §4: the tree-ETag queue, no FKs. */
const treeEtagDirty = table('storage', 'tree_etag_dirty', {
  columns: [
    { ...nn('id', 'bigint'), identity: 'always' },
    nn('lpath', 'public.ltree'),
    opt('folder_id', 'uuid'),
    opt('drive_id', 'uuid'),
  ],
});

/** Fact sheet §4: the search queue, no FK. */
const searchIndexDirty = table('storage', 'search_index_dirty', {
  columns: [{ ...nn('id', 'bigint'), identity: 'always' }, nn('file_id', 'uuid'), nn('op', 'text')],
  checks: [check('search_index_dirty_op_check', 'upsert or delete', inList('op', ['upsert', 'delete']))],
});

/** Fact sheet §9. */
const fileMetadata = table('storage', 'file_metadata', {
  columns: [
    nn('file_id', 'uuid'),
    opt('captured_at', TSZ),
    opt('latitude', 'double precision'),
    opt('longitude', 'double precision'),
    opt('camera_make', 'text'),
    opt('camera_model', 'text'),
    opt('orientation', 'smallint'),
    opt('width', 'integer'),
    opt('height', 'integer'),
    nn('created_at', TSZ, 'CURRENT_TIMESTAMP'),
  ],
  primaryKey: { columns: ['file_id'] },
  foreignKeys: [fk('file_id', 'storage', 'files', 'cascade')],
  indexes: [
    btree(
      'idx_file_metadata_geo',
      ['longitude', 'latitude'],
      '((latitude IS NOT NULL) AND (longitude IS NOT NULL))',
    ),
  ],
  triggers: [
    /** Sets `files.media_sort_date = COALESCE(NEW.captured_at, files.created_at)`; no DELETE trigger. */
    rowTrigger('trg_sync_media_sort_date', 'after', ['insert', 'update'], 'storage.sync_media_sort_date', [
      'captured_at',
    ]),
  ],
});

/** Fact sheet §10 (after the resource-id rekey). */
const webdavDeadProperties = table('storage', 'webdav_dead_properties', {
  columns: [
    UUID_PK,
    nn('namespace', 'text', "''::text"),
    nn('local_name', 'text'),
    opt('value', 'text'),
    nn('created_at', TSZ, 'CURRENT_TIMESTAMP'),
    nn('updated_at', TSZ, 'CURRENT_TIMESTAMP'),
    opt('folder_id', 'uuid'),
    opt('file_id', 'uuid'),
  ],
  checks: [
    check(
      'webdav_dead_properties_one_resource_chk',
      'exactly one of folder_id and file_id is set',
      'CHECK (((folder_id IS NULL) <> (file_id IS NULL)))',
    ),
  ],
  foreignKeys: [
    fk('folder_id', 'storage', 'folders', 'cascade'),
    fk('file_id', 'storage', 'files', 'cascade'),
  ],
  indexes: [
    // Names from 20260830000001_webdav_dead_properties_resource_id_rekey.sql.
    uniqueIndex(
      'idx_webdav_dead_props_file_unique',
      ['file_id', 'namespace', 'local_name'],
      '(file_id IS NOT NULL)',
    ),
    uniqueIndex(
      'idx_webdav_dead_props_folder_unique',
      ['folder_id', 'namespace', 'local_name'],
      '(folder_id IS NOT NULL)',
    ),
  ],
});

/** Fact sheet §10: NextCloud file ids; no FK, never deleted. */
const nextcloudObjectIds = table('storage', 'nextcloud_object_ids', {
  columns: [
    nn('id', 'bigint', "nextval('storage.nextcloud_object_ids_id_seq'::regclass)"),
    nn('object_type', 'text'),
    nn('object_id', 'uuid'),
  ],
  uniques: [{ columns: ['object_type', 'object_id'] }],
  checks: [
    check(
      'nextcloud_object_ids_object_type_check',
      'file or folder',
      inList('object_type', ['file', 'folder']),
    ),
  ],
});

/** Fact sheet §10: blob_hash = files.blob_hash, no FK. */
const blobExtractedText = table('storage', 'blob_extracted_text', {
  columns: [
    nn('blob_hash', 'character varying(64)'),
    opt('text', 'text'),
    nn('status', 'text'),
    nn('extractor', 'text'),
    // Default from 20260701000000_content_search_index.sql (fact sheet: silent).
    nn('extracted_at', TSZ, 'now()'),
  ],
  primaryKey: { columns: ['blob_hash'] },
  checks: [
    check(
      'blob_extracted_text_status_check',
      'ok, empty, failed or too_large',
      inList('status', ['ok', 'empty', 'failed', 'too_large']),
    ),
  ],
});

/** Fact sheet §10 (mount_folder_id UNIQUE, CASCADE); the other columns from 20260805000000_external_mounts.sql. */
const externalMounts = table('storage', 'external_mounts', {
  columns: [
    UUID_PK,
    nn('mount_folder_id', 'uuid'),
    nn('kind', 'text', ANY_DEFAULT),
    nn('config', 'jsonb', ANY_DEFAULT),
    nn('name', 'text'),
    nn('owner_id', 'uuid'),
    nn('read_only', 'boolean', ANY_DEFAULT),
    nn('visibility', 'text', ANY_DEFAULT),
    nn('created_at', TSZ, 'now()'),
    nn('updated_at', TSZ, 'now()'),
  ],
  uniques: [{ columns: ['mount_folder_id'] }],
  foreignKeys: [
    fk('mount_folder_id', 'storage', 'folders', 'cascade'),
    fk('owner_id', 'auth', 'users', 'cascade'),
  ],
});

// --- audio, caldav, carddav, faces --------------------------------------------------------------------------

/** Fact sheet §9. */
const audioFileMetadata = table('audio', 'file_metadata', {
  columns: [
    nn('file_id', 'uuid'),
    opt('title', 'text'),
    opt('artist', 'text'),
    opt('album', 'text'),
    opt('album_artist', 'text'),
    opt('genre', 'text'),
    opt('track_number', 'integer'),
    opt('disc_number', 'integer'),
    opt('year', 'integer'),
    nn('duration_secs', 'integer', '0'),
    opt('bitrate', 'integer'),
    opt('sample_rate', 'integer'),
    opt('channels', 'smallint'),
    opt('format', 'text'),
    nn('created_at', TSZ, 'CURRENT_TIMESTAMP'),
    nn('updated_at', TSZ, 'CURRENT_TIMESTAMP'),
  ],
  primaryKey: { columns: ['file_id'] },
  foreignKeys: [fk('file_id', 'storage', 'files', 'cascade')],
});

/** Grants point at playlists (resource_type 'playlist'). Columns from 20260308000000_audio_schema.sql. */
const playlists = table('audio', 'playlists', {
  columns: [
    UUID_PK,
    nn('name', 'text'),
    opt('description', 'text'),
    nn('owner_id', 'uuid'),
    nn('is_public', 'boolean', 'false'),
    opt('cover_file_id', 'uuid'),
    nn('created_at', TSZ, 'CURRENT_TIMESTAMP'),
    nn('updated_at', TSZ, 'CURRENT_TIMESTAMP'),
  ],
  foreignKeys: [
    fk('owner_id', 'auth', 'users', 'cascade'),
    fk('cover_file_id', 'storage', 'files', 'set null'),
  ],
});

/** Fact sheet §10 (file_id CASCADE); the other columns from 20260308000000_audio_schema.sql. */
const playlistItems = table('audio', 'playlist_items', {
  columns: [
    UUID_PK,
    nn('playlist_id', 'uuid'),
    nn('file_id', 'uuid'),
    nn('position', 'integer'),
    nn('added_at', TSZ, 'CURRENT_TIMESTAMP'),
  ],
  uniques: [{ columns: ['playlist_id', 'file_id'] }],
  foreignKeys: [
    fk('playlist_id', 'audio', 'playlists', 'cascade'),
    fk('file_id', 'storage', 'files', 'cascade'),
  ],
});

/**
 * Grants point at calendars and address books (resource types 'calendar',
 * 'address_book'): the two tables as far as grants and the user cascade meet
 * them. Columns from 20260307000000_initial_schema.sql (the id has no default).
 */
const davCollection = (schema: 'caldav' | 'carddav', name: 'calendars' | 'address_books') =>
  table(schema, name, {
    columns: [
      nn('id', 'uuid'),
      nn('name', 'text'),
      nn('owner_id', 'uuid'),
      opt('description', 'text'),
      opt('color', 'character varying(9)'),
      nn('is_public', 'boolean', 'false'),
      nn('ctag', 'character varying(64)', ANY_DEFAULT),
      nn('created_at', TSZ, 'CURRENT_TIMESTAMP'),
      nn('updated_at', TSZ, 'CURRENT_TIMESTAMP'),
    ],
    foreignKeys: [fk('owner_id', 'auth', 'users', 'cascade')],
  });

/** Fact sheet §10 (file and user CASCADE, blob_hash with no FK); the rest from 20260801000004_faces.sql. */
const faces = table('faces', 'faces', {
  columns: [
    UUID_PK,
    nn('file_id', 'uuid'),
    nn('user_id', 'uuid'),
    opt('person_id', 'uuid'),
    nn('bbox', 'real[]'),
    nn('det_score', 'real'),
    opt('quality', 'real'),
    nn('embedding', 'bytea'),
    opt('blob_hash', 'character varying(64)'),
    nn('created_at', TSZ, 'now()'),
  ],
  foreignKeys: [
    fk('file_id', 'storage', 'files', 'cascade'),
    fk('user_id', 'auth', 'users', 'cascade'),
    fk('person_id', 'faces', 'persons', 'set null'),
  ],
});

/** Fact sheet §2, §10 (user CASCADE); columns from 20260801000004_faces.sql. */
const persons = table('faces', 'persons', {
  columns: [
    UUID_PK,
    nn('user_id', 'uuid'),
    opt('display_name', 'text'),
    opt('cover_face_id', 'uuid'),
    nn('is_hidden', 'boolean', 'false'),
    nn('created_at', TSZ, 'now()'),
    nn('updated_at', TSZ, 'now()'),
  ],
  foreignKeys: [fk('user_id', 'auth', 'users', 'cascade')],
});

/** OxiCloud's drive-era schema, as far as this engine meets it. See the module comment. */
export const OXICLOUD_SCHEMA: SchemaDescription = {
  schemas: ['auth', 'storage', 'caldav', 'carddav', 'audio', 'faces'],
  extensions: [
    { name: 'pg_trgm', schema: 'public' },
    { name: 'ltree', schema: 'public' },
    { name: 'citext', schema: 'public' },
  ],
  enums: [
    { schema: 'auth', name: 'userrole', labels: ['admin', 'user'] },
    // Labels from 20260307000000_initial_schema.sql and 20260612000004_magic_link_tokens.sql (fact sheet: names only).
    { schema: 'auth', name: 'device_code_status', labels: ['pending', 'authorized', 'denied', 'expired'] },
    { schema: 'auth', name: 'magic_link_status', labels: ['pending', 'used', 'expired'] },
    {
      schema: 'storage',
      name: 'grant_role',
      labels: ['owner', 'editor', 'contributor', 'commenter', 'viewer'],
    },
  ],
  tables: [
    users,
    subjectGroups,
    subjectGroupMembers,
    userItems('user_favorites', 'created_at'),
    userItems('user_recent_files', 'accessed_at'),
    magicLinkTokens,
    drives,
    folders,
    files,
    blobs,
    chunkManifests,
    roleGrants,
    shares,
    treeEtagDirty,
    searchIndexDirty,
    fileMetadata,
    webdavDeadProperties,
    nextcloudObjectIds,
    blobExtractedText,
    externalMounts,
    audioFileMetadata,
    playlists,
    playlistItems,
    davCollection('caldav', 'calendars'),
    davCollection('carddav', 'address_books'),
    faces,
    persons,
  ],
  views: [
    {
      schema: 'storage',
      name: 'trash_items',
      // Fact sheet §4: the top-level trashed items; column types from 20260804000000_trash_items_drive_id.sql.
      columns: [
        { name: 'id', type: 'uuid' },
        { name: 'name', type: 'text' },
        { name: 'item_type', type: 'text' },
        { name: 'trashed_at', type: TSZ },
        { name: 'original_parent_id', type: 'uuid' },
        { name: 'created_at', type: TSZ },
        { name: 'drive_id', type: 'uuid' },
      ],
    },
  ],
  outOfScope: [
    { schema: 'auth', name: 'sessions', why: "OxiCloud's login sessions; no job reads them" },
    { schema: 'auth', name: 'app_passwords', why: "OxiCloud's app passwords; no job reads them" },
    { schema: 'auth', name: 'device_codes', why: "OxiCloud's device-flow codes; no job reads them" },
    {
      schema: 'auth',
      name: 'admin_settings',
      why: "OxiCloud's settings (storage migration target); read by no job yet",
    },
    {
      schema: 'auth',
      name: 'user_files',
      why: 'a legacy table no current OxiCloud code reads (fact sheet §10)',
    },
    { schema: 'audio', name: 'playlist_shares', why: 'legacy per-user playlist sharing; grants replace it' },
    { schema: 'caldav', name: 'calendar_events', why: 'calendar content; grants point at calendars only' },
    {
      schema: 'caldav',
      name: 'calendar_properties',
      why: 'calendar content; grants point at calendars only',
    },
    { schema: 'carddav', name: 'contacts', why: 'address-book content; grants point at address books only' },
    {
      schema: 'carddav',
      name: 'contact_groups',
      why: 'address-book content; grants point at address books only',
    },
    {
      schema: 'carddav',
      name: 'group_memberships',
      why: 'address-book content; grants point at address books only',
    },
  ],
};
