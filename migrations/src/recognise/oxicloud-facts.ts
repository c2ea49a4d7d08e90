import { type Catalog, hasColumn } from './read-catalog.js';
import type { OxiCloudEra, OxiCloudFacts } from './recognition.js';

const notNull = (catalog: Catalog, relation: string, column: string): boolean =>
  catalog.relations.get(relation)?.columns.get(column)?.notNull === true;

/**
 * The storage tables both OxiCloud and the engine's storage domain have:
 * without them a database holds no storage domain at all.
 */
export function hasStorageDomain(catalog: Catalog): boolean {
  return ['auth.users', 'storage.folders', 'storage.files'].every((name) => catalog.relations.has(name));
}

/** The eras of OxiCloud's migrations the catalog proves (fact sheet §1, "Recognition recipe"). */
export function oxicloudFacts(catalog: Catalog): OxiCloudFacts {
  const playlistCheck = catalog.constraints.get('storage.role_grants.role_grants_resource_type_check');
  return {
    chunkManifests: catalog.relations.has('storage.chunk_manifests'),
    driveEraD0:
      catalog.relations.has('storage.drives') &&
      notNull(catalog, 'storage.folders', 'drive_id') &&
      notNull(catalog, 'storage.files', 'drive_id'),
    d7Done:
      catalog.relations.has('storage.files') &&
      catalog.relations.has('storage.folders') &&
      !hasColumn(catalog, 'storage.files', 'user_id') &&
      !hasColumn(catalog, 'storage.folders', 'user_id') &&
      hasColumn(catalog, 'storage.trash_items', 'drive_id'),
    deadPropertyRekey: hasColumn(catalog, 'storage.webdav_dead_properties', 'folder_id'),
    personalQuotaPinned: catalog.constraints.has('storage.drives.drives_personal_quota_null'),
    grantRoleEnum:
      catalog.relations.get('storage.role_grants')?.columns.get('role')?.type === 'storage.grant_role',
    // pg_get_constraintdef prints the list as ARRAY['folder'::text, …, 'playlist'::text].
    playlistGrants: playlistCheck?.includes("'playlist'") === true,
  };
}

/** The era the facts put a database in: D0 first, then D7. */
export function eraOf(facts: OxiCloudFacts): OxiCloudEra {
  if (!facts.driveEraD0) return 'pre-drive';
  return facts.d7Done ? 'drive-d7' : 'drive-d0';
}
