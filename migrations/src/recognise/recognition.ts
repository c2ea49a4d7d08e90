/**
 * What {@link recogniseDatabase} found a database to be: one of five kinds,
 * told apart by catalog reads only.
 *
 * Glossary:
 * - **OxiCloud's schema**: the drive-era schema OxiCloud's own migrations
 *   (sqlx, bookkeeping in `_sqlx_migrations`) build (the fact sheet, `OXICLOUD.md` §1).
 * - **the engine's bookkeeping**: `public.oxicloud_migrations`, the table
 *   this package's runner records its files in.
 * - **the old model**: the storage domain of this package's `sql/0001..0007`
 *   (`storage.drives.owner_id`, `storage.blobs.deleting_at`,
 *   `public.oxicloud_uuid_v7()`), none of which exists in OxiCloud.
 *
 * @module
 */

/** The five kinds a {@link Recognition} can be. */
export type RecognitionKind = Recognition['kind'];

/** What a database is. Branch on `kind`. */
export type Recognition =
  | EmptyDatabase
  | OxiCloudDatabase
  | EngineOldModelDatabase
  | EngineDatabase
  | UnknownDatabase;

/** No table, view or foreign table in any schema but `pg_catalog` and `information_schema` (extensions' own objects aside). */
export interface EmptyDatabase {
  readonly kind: 'empty';
}

/**
 * OxiCloud's own database: `_sqlx_migrations` in the connection's schema
 * (normally `public`) and the storage tables (`auth.users`,
 * `storage.folders`, `storage.files`).
 */
export interface OxiCloudDatabase {
  readonly kind: 'oxicloud';
  readonly era: OxiCloudEra;
  /** The rows of `_sqlx_migrations`, or `'not-readable'` when this role may not read that table. */
  readonly migrations: SqlxMigrations | 'not-readable';
  readonly facts: OxiCloudFacts;
  /** The engine's own schema beside OxiCloud (sidecar mode), whose bookkeeping and runs are reported here. */
  readonly engineSchema: string;
  /** The engine's bookkeeping (`<engineSchema>.migrations`), when a sidecar already migrated here; `null` when it never did. */
  readonly engineMigrations: EngineMigrations | 'not-readable' | null;
  /** The engine's runs and findings in `engineSchema` (`'absent'` when a sidecar never created them). */
  readonly jobs: JobsCounts;
}

/** The engine's bookkeeping on its own old storage model: at least one old-model marker. */
export interface EngineOldModelDatabase {
  readonly kind: 'engine-old-model';
  readonly migrations: EngineMigrations | 'not-readable';
  /** The old-model markers found, in a fixed order: `storage.drives.owner_id`, `storage.blobs.deleting_at`, `public.oxicloud_uuid_v7()`. */
  readonly markers: readonly OldModelMarker[];
  readonly jobs: JobsCounts;
}

/**
 * The engine's bookkeeping on a storage domain shaped like OxiCloud's (the
 * storage tables, no old-model marker) and no `_sqlx_migrations`: what the
 * engine's own migrations of OxiCloud's schema will leave.
 */
export interface EngineDatabase {
  readonly kind: 'engine';
  readonly era: OxiCloudEra;
  readonly migrations: EngineMigrations | 'not-readable';
  readonly facts: OxiCloudFacts;
  readonly jobs: JobsCounts;
}

/** Anything else. `found` is for a message, not to branch on. */
export interface UnknownDatabase {
  readonly kind: 'unknown';
  /**
   * What is there, for a message: `schema <name>` for each schema that is
   * not the system's or an extension's (an empty `public` left out), then up
   * to {@link FOUND_TABLES_LISTED} tables as `<schema>.<name>`.
   */
  readonly found: readonly string[];
  /** How many tables (and views, foreign tables) there are in all, listed or not. */
  readonly tableCount: number;
}

/** How many table names {@link UnknownDatabase.found} lists at most. */
export const FOUND_TABLES_LISTED = 10;

/**
 * How far OxiCloud's drive migration got, from the facts:
 * - `pre-drive`: no drive era D0 (no `storage.drives`, or `drive_id` still nullable);
 * - `drive-d0`: D0 (drives exist and every folder and file has one), D7 not done
 *   (`files.user_id` / `folders.user_id` still there, or `trash_items` has no `drive_id`);
 * - `drive-d7`: D0 and D7 done: the drive-era schema.
 */
export type OxiCloudEra = 'pre-drive' | 'drive-d0' | 'drive-d7';

/** The eras of OxiCloud's schema, each proven by a catalog fact (fact sheet `OXICLOUD.md` §1, "Recognition recipe"). */
export interface OxiCloudFacts {
  /** `storage.chunk_manifests` exists (migration ≥ 20260414000000). */
  readonly chunkManifests: boolean;
  /** `storage.drives` exists and `storage.folders.drive_id`, `storage.files.drive_id` are NOT NULL (≥ 20260802100002). */
  readonly driveEraD0: boolean;
  /** `storage.files` and `storage.folders` have no `user_id`, and the view `storage.trash_items` has `drive_id` (≥ 20260904000000). */
  readonly d7Done: boolean;
  /** `storage.webdav_dead_properties.folder_id` exists (≥ 20260830000001). */
  readonly deadPropertyRekey: boolean;
  /** The constraint `drives_personal_quota_null` exists on `storage.drives` (≥ 20260916000000). */
  readonly personalQuotaPinned: boolean;
  /** `storage.role_grants.role` has the type `storage.grant_role` (≥ 20260801000000). */
  readonly grantRoleEnum: boolean;
  /** `role_grants_resource_type_check` on `storage.role_grants` admits `'playlist'` (≥ 20260910000000). */
  readonly playlistGrants: boolean;
}

/** The rows of OxiCloud's `_sqlx_migrations`. */
export interface SqlxMigrations {
  /** The schema the table is in (the connection's, normally `public`). */
  readonly schema: string;
  readonly count: number;
  /** The highest `version` (e.g. 20260921000000), `null` when there is no row. */
  readonly latest: number | null;
  /** Rows with `success = false`: OxiCloud refuses to boot on one. */
  readonly failed: number;
}

/** The rows of the engine's `public.oxicloud_migrations`. */
export interface EngineMigrations {
  readonly count: number;
  /** The last name in order (e.g. `0010_job_registrations.sql`), `null` when there is no row. */
  readonly latest: string | null;
}

/** A name of the engine's old storage model that OxiCloud does not have. */
export type OldModelMarker =
  | 'storage.drives.owner_id'
  | 'storage.blobs.deleting_at'
  | 'public.oxicloud_uuid_v7()';

/** The engine's runs and findings, counted, or why not. */
export interface JobsCounts {
  /** `jobs.recoverable_runs`. */
  readonly runs: RunCounts | Uncounted;
  /** The rows of `jobs.run_findings`. */
  readonly runFindings: number | Uncounted;
}

/** `'absent'`: the table does not exist; `'not-readable'`: this role may not read it. */
export type Uncounted = 'absent' | 'not-readable';

/** The rows of `jobs.recoverable_runs`, and those a server would resume or is running. */
export interface RunCounts {
  readonly total: number;
  readonly running: number;
  /** Paused runs: each keeps its cursor (its place in the data) to resume from. */
  readonly paused: number;
}
