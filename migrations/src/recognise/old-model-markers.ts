import { type Catalog, hasColumn } from './read-catalog.js';
import type { OldModelMarker } from './recognition.js';

/**
 * The names of the engine's old storage model (`sql/0001..0007`) the catalog
 * has, in {@link OldModelMarker}'s order. OxiCloud has none of them.
 */
export function oldModelMarkers(catalog: Catalog): OldModelMarker[] {
  const markers: OldModelMarker[] = [];
  if (hasColumn(catalog, 'storage.drives', 'owner_id')) markers.push('storage.drives.owner_id');
  if (hasColumn(catalog, 'storage.blobs', 'deleting_at')) markers.push('storage.blobs.deleting_at');
  if (catalog.functions.has('public.oxicloud_uuid_v7')) markers.push('public.oxicloud_uuid_v7()');
  return markers;
}
