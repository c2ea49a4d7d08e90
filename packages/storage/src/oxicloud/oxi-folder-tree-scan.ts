import type { ConsistencyCheck } from '@oxicloud/consistency';
import type { Logger } from '@oxicloud/scheduler';
import {
  createFoldersConsistencyCheck,
  type FoldersConsistencyCheckOptions,
  type FolderTreeAnomaly,
  type FolderTreeScan,
  type FolderTreeScanOptions,
  type ScanPage,
  type TrashFlagsProblem,
} from '@oxicloud/tenants';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { bigintToNumber } from '../postgres/database.js';
import type { OxiCloudDatabase } from './database.js';
import { estimateOxiRows } from './oxi-tree-support.js';

interface FolderJson {
  id: string;
  drive_id: string;
  parent_id: string | null;
  live_under_trashed: boolean;
  parent_trashed_at: string | null;
  path: string;
  expected_path: string;
  lpath: string;
  expected_lpath: string;
  parent_drive_id: string | null;
  orphan_root: boolean;
  trash_flags: TrashFlagsProblem | null;
}
interface PageRow {
  scanned: string;
  last_id: string | null;
  anomalies: FolderJson[];
}

const toAnomaly = (r: FolderJson): FolderTreeAnomaly => ({
  folderId: r.id,
  driveId: r.drive_id,
  parentId: r.parent_id,
  liveUnderTrashedParent: r.live_under_trashed,
  parentTrashedAt: r.parent_trashed_at === null ? null : new Date(r.parent_trashed_at),
  path: r.path,
  expectedPath: r.expected_path,
  lpath: r.lpath,
  expectedLpath: r.expected_lpath,
  parentDriveId: r.parent_drive_id,
  orphanRoot: r.orphan_root,
  trashFlags: r.trash_flags,
});

/** Options of {@link OxiFolderTreeScan}. */
export interface OxiFolderTreeScanOptions {
  /** The checks' batch loops log their retries, lost checkpoints and failures here. */
  readonly logger?: Logger;
  /** Each check's own options, by check name: given to that check only. */
  readonly checks?: {
    /** `graceWindowMs` on the parent's `trashed_at` (default 1 h). */
    readonly folders_consistency?: Omit<FoldersConsistencyCheckOptions, 'scan' | 'logger'>;
  };
}

/**
 * {@link FolderTreeScan} on OxiCloud's `storage.folders`, and the stateful
 * adapter of the folder tree (`subsystem() === 'folder_tree'`): it
 * contributes `folders_consistency`, with OxiCloud's rules (fact sheet §4,
 * §12 items 1–4 and 7):
 *
 * - `path_mismatch` / `lpath_mismatch`: a root's `path = name` (no leading
 *   slash) and `lpath = label(id)`; a child's `path = parent.path || '/' ||
 *   name` and `lpath = parent.lpath || label(id)`, where `label(id)` is the
 *   uuid with every `-` replaced by `_` (what `trg_folders_path` writes);
 * - `drive_id_parent_mismatch`: a child's `drive_id` differs from its
 *   parent's; for a root, another drive than its own points at it
 *   (`drives.root_folder_id = folder.id`, reported as `parent_drive_id`:
 *   two drives sharing one root, or a root whose `drive_id` is not the drive
 *   that names it);
 * - `orphan_root`: a live root that no drive of its own `drive_id` points at
 *   (item 4: every later update of that row fails at commit in OxiCloud), or
 *   a folder whose parent chain, within its drive, does not end at that
 *   drive's `root_folder_id` (a cycle, a detour through another drive, or a
 *   chain up to a stray top-level folder). A chain ending at a trashed
 *   top-level folder is the trash's, not an orphan;
 * - `parent_trashed_mismatch`: a live folder under a trashed parent (the
 *   legacy pre-2026-06-17 state), past the grace.
 * - `trash_flags_mismatch`: `trashed_at` set iff `is_trashed`, and no
 *   `original_parent_id` on a live folder (item 7; a descendant trashed by a
 *   cascade may keep one from an earlier trash of its own, so that is not
 *   checked on trashed rows).
 *
 * Each page is one statement: a keyset page of folders by id, the parents
 * by primary key, the drives naming the page's roots, each parent chain
 * walked up to its top (one primary-key probe per ancestor), and back only
 * the mismatching folders plus the count and last id.
 *
 * @example
 * ```ts
 * const db = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool }) });
 * consistencyRegistry.register(new OxiFolderTreeScan(db));
 * ```
 */
export class OxiFolderTreeScan implements FolderTreeScan {
  readonly #db: Kysely<OxiCloudDatabase>;
  readonly #checks: readonly ConsistencyCheck[];

  constructor(db: Kysely<OxiCloudDatabase>, options: OxiFolderTreeScanOptions = {}) {
    this.#db = db;
    const { checks = {} } = options;
    const logger = options.logger ? { logger: options.logger } : {};
    this.#checks = [
      {
        ...createFoldersConsistencyCheck({ ...checks.folders_consistency, ...logger, scan: this }),
        reads: ['storage.drives', 'storage.folders'],
      },
    ];
  }

  subsystem(): string {
    return 'folder_tree';
  }

  /** `folders_consistency`: trash flag, path, lpath and drive of each folder; its chain to its drive's root. */
  consistencyChecks(): readonly ConsistencyCheck[] {
    return this.#checks;
  }

  async scanFolderTree(
    afterId: string | null,
    limit: number,
    options: FolderTreeScanOptions,
  ): Promise<ScanPage<FolderTreeAnomaly>> {
    const page = await this.#compare(
      sql`SELECT id, drive_id, parent_id, name, path, lpath, is_trashed, trashed_at, original_parent_id FROM storage.folders
          ${afterId === null ? sql`` : sql`WHERE id > ${afterId}::uuid`}
          ORDER BY id LIMIT ${limit}`,
      options,
    );
    return {
      scanned: bigintToNumber(page.scanned),
      lastKey: page.last_id,
      anomalies: page.anomalies.map(toAnomaly),
    };
  }

  async reverifyFolderTree(
    folderIds: readonly string[],
    options: FolderTreeScanOptions,
  ): Promise<FolderTreeAnomaly[]> {
    if (folderIds.length === 0) return [];
    const page = await this.#compare(
      sql`SELECT id, drive_id, parent_id, name, path, lpath, is_trashed, trashed_at, original_parent_id FROM storage.folders
           WHERE id = ANY(${[...folderIds]}::uuid[])`,
      options,
    );
    return page.anomalies.map(toAnomaly);
  }

  estimateRows(): Promise<number | null> {
    return estimateOxiRows(this.#db, ['storage.folders']);
  }

  async #compare(batch: RawBuilder<unknown>, options: FolderTreeScanOptions): Promise<PageRow> {
    const { rows } = await sql<PageRow>`
      WITH RECURSIVE batch AS MATERIALIZED (${batch}),
      -- The batch's parents by primary key (a plain LEFT JOIN makes the planner
      -- hash-join against a seq scan of every folder, once per batch).
      parents AS MATERIALIZED (
        SELECT p.id, p.drive_id, p.parent_id, p.is_trashed, p.trashed_at, p.path, p.lpath
          FROM storage.folders p
         WHERE p.id = ANY (ARRAY(SELECT b.parent_id FROM batch b WHERE b.parent_id IS NOT NULL))
      ),
      -- The drives that name one of the batch's roots (root_folder_id has no index:
      -- one scan of storage.drives per batch, never one per root).
      naming AS MATERIALIZED (
        SELECT d.id, d.root_folder_id FROM storage.drives d
         WHERE d.root_folder_id = ANY (ARRAY(SELECT b.id FROM batch b WHERE b.parent_id IS NULL))
      ),
      -- Each non-root folder whose parent is in its own drive walks up the chain
      -- (node = the ancestor reached, next = its parent_id) while the drive stays
      -- the same; next IS NULL means node is the chain's top-level folder.
      up (start_id, drive_id, node, next, node_trashed, depth) AS (
        SELECT b.id, b.drive_id, p.id, p.parent_id, p.is_trashed, 1
          FROM batch b JOIN parents p ON p.id = b.parent_id AND p.drive_id = b.drive_id
        UNION ALL
        SELECT u.start_id, u.drive_id, f.id, f.parent_id, f.is_trashed, u.depth + 1
          FROM up u JOIN storage.folders f ON f.id = u.next AND f.drive_id = u.drive_id
         WHERE u.depth < 100000
      ) CYCLE node SET is_cycle USING visited,
      -- A chain reaches its drive when its top is that drive's root_folder_id
      -- (or a trashed top-level folder: a subtree in the trash).
      reached AS MATERIALIZED (
        SELECT DISTINCT u.start_id FROM up u
         WHERE u.next IS NULL AND NOT u.is_cycle
           AND (u.node_trashed
                OR EXISTS (SELECT 1 FROM storage.drives d WHERE d.id = u.drive_id AND d.root_folder_id = u.node))
      ),
      checked AS (
        SELECT b.id, b.drive_id, b.parent_id,
               CASE WHEN b.parent_id IS NOT NULL THEN
                      CASE WHEN p.drive_id <> b.drive_id THEN p.drive_id END
                    ELSE (SELECT n.id FROM naming n WHERE n.root_folder_id = b.id AND n.id <> b.drive_id
                           ORDER BY n.id LIMIT 1)
               END AS parent_drive_id,
               CASE WHEN b.parent_id IS NULL THEN
                      NOT b.is_trashed
                      AND NOT EXISTS (SELECT 1 FROM naming n WHERE n.id = b.drive_id AND n.root_folder_id = b.id)
                    ELSE p.drive_id = b.drive_id AND NOT EXISTS (SELECT 1 FROM reached r WHERE r.start_id = b.id)
               END AS orphan_root,
               (NOT b.is_trashed AND COALESCE(p.is_trashed, false)
                 AND COALESCE(p.trashed_at, '-infinity'::timestamptz) <= ${options.trashedBefore}) AS live_under_trashed,
               p.trashed_at AS parent_trashed_at,
               CASE WHEN b.is_trashed AND b.trashed_at IS NULL THEN 'trashed_without_trashed_at'
                    WHEN NOT b.is_trashed AND b.trashed_at IS NOT NULL THEN 'live_with_trashed_at'
                    WHEN NOT b.is_trashed AND b.original_parent_id IS NOT NULL THEN 'live_with_original_parent'
               END AS trash_flags,
               b.path,
               CASE WHEN b.parent_id IS NULL THEN b.name ELSE p.path || '/' || b.name END AS expected_path,
               b.lpath::text AS lpath,
               CASE WHEN b.parent_id IS NULL THEN replace(b.id::text, '-', '_')
                    ELSE p.lpath::text || '.' || replace(b.id::text, '-', '_') END AS expected_lpath
          FROM batch b
          LEFT JOIN parents p ON p.id = b.parent_id
      )
      SELECT (SELECT count(*) FROM batch) AS scanned,
             (SELECT id FROM batch ORDER BY id DESC LIMIT 1) AS last_id,
             COALESCE((
               SELECT json_agg(json_build_object(
                        'id', c.id, 'drive_id', c.drive_id, 'parent_id', c.parent_id,
                        'live_under_trashed', c.live_under_trashed, 'parent_trashed_at', c.parent_trashed_at,
                        'path', c.path, 'expected_path', COALESCE(c.expected_path, ''),
                        'lpath', c.lpath, 'expected_lpath', COALESCE(c.expected_lpath, ''),
                        'parent_drive_id', c.parent_drive_id, 'orphan_root', COALESCE(c.orphan_root, false),
                        'trash_flags', c.trash_flags)
                        ORDER BY c.id)
                 FROM checked c
                WHERE c.live_under_trashed
                   OR c.trash_flags IS NOT NULL
                   OR c.parent_drive_id IS NOT NULL
                   OR COALESCE(c.orphan_root, false)
                   OR c.path IS DISTINCT FROM c.expected_path
                   OR c.lpath IS DISTINCT FROM c.expected_lpath
             ), '[]'::json) AS anomalies`.execute(this.#db);
    return rows[0] as PageRow;
  }
}
