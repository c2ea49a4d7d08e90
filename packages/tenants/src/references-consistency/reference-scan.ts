import type { StatefulAdapter } from '@oxicloud/consistency';
import type { ScanPage } from '../ports/scan-page.js';

/**
 * The tables that name a file or folder by a text or uuid id with no
 * foreign key (fact sheet §10, §12 item 25), each walked by its primary key:
 * `favorites` (`auth.user_favorites`, serial), `recent_items`
 * (`auth.user_recent_files`, serial), `magic_links` (`auth.magic_link_tokens`
 * naming a resource, uuid), `shares` (`storage.shares`, uuid),
 * `nextcloud_ids` (`storage.nextcloud_object_ids`, bigserial: the numeric
 * ids NextCloud clients cache, never deleted by OxiCloud), `faces`
 * (`faces.faces`, uuid: its file has a foreign key, its `blob_hash`, the
 * content the face was found in, has none).
 */
export const REFERENCE_SOURCES = [
  'favorites',
  'recent_items',
  'magic_links',
  'shares',
  'nextcloud_ids',
  'faces',
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
   * grant is not a viewer on the share's item): see {@link SHARE_GRANT_REASONS};
   * for a face, why its hash is not its file's: see {@link FACE_HASH_REASONS}.
   */
  readonly reason: 'missing' | 'not_a_uuid' | 'unknown_type' | ShareGrantReason | FaceHashReason;
  /** A face only (`faces`): the face's `blob_hash`, and its file's current `files.blob_hash`. */
  readonly hashes?: { readonly face: string; readonly file: string | null };
}

/**
 * The reasons a share's item exists but its link does not work as shared
 * (fact sheet §8, §12 item 21: every share has exactly one token grant, a
 * viewer on `(item_type, item_id)`): reported as `share_grant_mismatch`.
 */
export const SHARE_GRANT_REASONS = ['no_token_grant', 'token_grant_mismatch'] as const;
/** One of {@link SHARE_GRANT_REASONS}. */
export type ShareGrantReason = (typeof SHARE_GRANT_REASONS)[number];

/**
 * Why a face (`faces.faces`, fact sheet §10, §12 item 25) no longer
 * describes its file: its `blob_hash` is set and is not the file's current
 * `files.blob_hash` (the indexer deletes a file's faces and reindexes it on
 * a content update, in a background task that can fail). `stale_hash`: the
 * face's hash is still stored content (a manifest's `file_hash` or a blob),
 * old content of the file or another's; `unknown_hash`: it names no stored
 * content at all. A face whose hash is its file's is never reported, even
 * when that content does not resolve: that is the file's finding
 * (`files_consistency`), not the face's.
 */
export const FACE_HASH_REASONS = ['stale_hash', 'unknown_hash'] as const;
/** One of {@link FACE_HASH_REASONS}. */
export type FaceHashReason = (typeof FACE_HASH_REASONS)[number];

/** The grace boundary of a reference scan (from the run's `startedAt`). */
export interface ReferenceScanOptions {
  /**
   * Only rows written at or before this instant are flagged (a share has no
   * usable timestamp: pass 2 only; a face is as young as the later of its
   * `created_at` and its file's `updated_at`, the last content swap).
   */
  readonly createdBefore: Date;
}

/**
 * What `references_consistency` reads: each source of
 * {@link REFERENCE_SOURCES} walked by its primary key, each page's item ids
 * looked up in `storage.files` / `storage.folders` by primary key in the
 * same statement (a face's hash against its file's, then against
 * `storage.chunk_manifests` / `storage.blobs`). A state-owning port: the adapter returns
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
