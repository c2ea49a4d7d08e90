import type { StatefulAdapter } from '@oxicloud/consistency';
import type { ScanPage } from '../ports/scan-page.js';

/**
 * The tables that name a file or folder by a text or uuid id with no
 * foreign key (fact sheet §10, §12 item 25), each walked by its primary key:
 * `favorites` (`auth.user_favorites`, serial), `recent_items`
 * (`auth.user_recent_files`, serial), `magic_links` (`auth.magic_link_tokens`
 * naming a resource, uuid), `shares` (`storage.shares`, uuid),
 * `nextcloud_ids` (`storage.nextcloud_object_ids`, bigserial: the numeric
 * ids NextCloud clients cache, never deleted by OxiCloud).
 */
export const REFERENCE_SOURCES = [
  'favorites',
  'recent_items',
  'magic_links',
  'shares',
  'nextcloud_ids',
] as const;
/** One of {@link REFERENCE_SOURCES}. */
export type ReferenceSource = (typeof REFERENCE_SOURCES)[number];

/** A row whose item is not there: the id names no row of its type, is no uuid, or the type is none OxiCloud has. */
export interface DanglingReference {
  readonly source: ReferenceSource;
  /** The row's primary key, as text. */
  readonly id: string;
  /** The user the row belongs to (`created_by` for a share). */
  readonly userId: string | null;
  readonly itemType: string | null;
  readonly itemId: string | null;
  /**
   * `missing` (no such file or folder), `not_a_uuid` or `unknown_type`; for
   * a share whose item exists, `no_token_grant` (no grant has the share as
   * its token subject) or `token_grant_mismatch` (more than one, or its one
   * grant is not a viewer on the share's item): see {@link SHARE_GRANT_REASONS}.
   */
  readonly reason: 'missing' | 'not_a_uuid' | 'unknown_type' | ShareGrantReason;
}

/**
 * The reasons a share's item exists but its link does not work as shared
 * (fact sheet §8, §12 item 21: every share has exactly one token grant, a
 * viewer on `(item_type, item_id)`): reported as `share_grant_mismatch`.
 */
export const SHARE_GRANT_REASONS = ['no_token_grant', 'token_grant_mismatch'] as const;
/** One of {@link SHARE_GRANT_REASONS}. */
export type ShareGrantReason = (typeof SHARE_GRANT_REASONS)[number];

/** The grace boundary of a reference scan (from the run's `startedAt`). */
export interface ReferenceScanOptions {
  /** Only rows written at or before this instant are flagged (a share has no usable timestamp: pass 2 only). */
  readonly createdBefore: Date;
}

/**
 * What `references_consistency` reads: each source of
 * {@link REFERENCE_SOURCES} walked by its primary key, each page's item ids
 * looked up in `storage.files` / `storage.folders` by primary key in the
 * same statement. A state-owning port: the adapter returns
 * `references_consistency` from `consistencyChecks()`.
 */
export interface ReferenceScan extends StatefulAdapter {
  /** Up to `limit` rows of `source` with key > `afterId` in key order; the anomalies are the dangling ones. */
  scanReferences(
    source: ReferenceSource,
    afterId: string | null,
    limit: number,
    options: ReferenceScanOptions,
  ): Promise<ScanPage<DanglingReference>>;
  /** Pass 2: re-reads these rows of `source` now; returns the ones still dangling. */
  reverifyReferences(
    source: ReferenceSource,
    ids: readonly string[],
    options: ReferenceScanOptions,
  ): Promise<DanglingReference[]>;
  /** Rows the walk will examine, from planner statistics; `null` when unknown. */
  estimateRows(): Promise<number | null>;
}
