import type { ConsistencyCheck } from '@oxicloud/consistency';
import type { Logger } from '@oxicloud/scheduler';
import {
  createFoldersConsistencyCheck,
  type FoldersConsistencyCheckOptions,
  type FolderTreeAnomaly,
  type FolderTreeScan,
  type FolderTreeScanOptions,
  type ScanPage,
} from '@oxicloud/tenants';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { bigintToNumber, type StorageDatabase } from './database.js';
import { estimateRowsOf } from './row-estimate.js';

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
});

/** Options of {@link PgFolderTreeScan}. */
export interface PgFolderTreeScanOptions {
  /** The checks' batch loops log their retries, lost checkpoints and failures here. */
  readonly logger?: Logger;
  /**
   * Each check's own options (grace, thresholds), by check name: given to that
   * check only, where the adapter lists its checks.
   */
  readonly checks?: {
    /** `graceWindowMs` on the parent's `trashed_at` (default 1 h). */
    readonly folders_consistency?: Omit<FoldersConsistencyCheckOptions, 'scan' | 'logger'>;
  };
}

/**
 * {@link FolderTreeScan} on `storage.folders`, and the stateful adapter of
 * the folder tree (`subsystem() === 'folder_tree'`): it contributes
 * `folders_consistency`. Each page is one statement: a keyset page of
 * folders by id, each joined to its parent row, the reconstruction
 * (`parent.path || '/' || name`, `parent.lpath || folder_label(id)`) and the
 * parent's drive compared in SQL, each parent chain walked up to its root
 * (`orphan_root`), and back only the mismatching folders plus the count and
 * last id.
 */
export class PgFolderTreeScan implements FolderTreeScan {
  readonly #db: Kysely<StorageDatabase>;
  readonly #checks: readonly ConsistencyCheck[];

  constructor(db: Kysely<StorageDatabase>, options: PgFolderTreeScanOptions = {}) {
    this.#db = db;
    const { checks = {} } = options;
    const logger = options.logger ? { logger: options.logger } : {};
    // The adapter's checks, each with its own options.
    this.#checks = [createFoldersConsistencyCheck({ ...checks.folders_consistency, ...logger, scan: this })];
  }

  subsystem(): string {
    return 'folder_tree';
  }

  /** `folders_consistency`: trash flag, path, lpath and drive of each folder against its parent; its chain to a root. */
  consistencyChecks(): readonly ConsistencyCheck[] {
    return this.#checks;
  }

  async scanFolderTree(
    afterId: string | null,
    limit: number,
    options: FolderTreeScanOptions,
  ): Promise<ScanPage<FolderTreeAnomaly>> {
    const page = await this.#compare(
      sql`SELECT id, drive_id, parent_id, name, path, lpath, is_trashed FROM storage.folders
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
      sql`SELECT id, drive_id, parent_id, name, path, lpath, is_trashed FROM storage.folders
           WHERE id = ANY(${[...folderIds]}::uuid[])`,
      options,
    );
    return page.anomalies.map(toAnomaly);
  }

  estimateRows(): Promise<number | null> {
    return estimateRowsOf(this.#db, ['storage.folders']);
  }

  async #compare(batch: RawBuilder<unknown>, options: FolderTreeScanOptions): Promise<PageRow> {
    const { rows } = await sql<PageRow>`
      WITH RECURSIVE batch AS MATERIALIZED (${batch}),
      -- The batch's parents by primary key: a plain LEFT JOIN to storage.folders makes the
      -- planner hash-join against a seq scan of every folder, once per batch (O(n²) overall).
      parents AS MATERIALIZED (
        SELECT p.id, p.drive_id, p.is_trashed, p.trashed_at, p.path, p.lpath FROM storage.folders p
         WHERE p.id = ANY (ARRAY(SELECT b.parent_id FROM batch b WHERE b.parent_id IS NOT NULL))
      ),
      -- orphan_root: each folder whose parent is in its own drive walks up its parent chain
      -- (one primary-key probe per ancestor) while the drive stays the same; reaching a
      -- parent_id of NULL means the chain ends at a top-level folder of the drive. A repeated
      -- folder (CYCLE) or a drive change stops the walk without reaching it.
      up (start_id, drive_id, cur, depth) AS (
        SELECT b.id, b.drive_id, b.parent_id, 1
          FROM batch b JOIN parents p ON p.id = b.parent_id AND p.drive_id = b.drive_id
        UNION ALL
        SELECT u.start_id, u.drive_id, f.parent_id, u.depth + 1
          FROM up u JOIN storage.folders f ON f.id = u.cur AND f.drive_id = u.drive_id
         WHERE u.depth < 100000
      ) CYCLE cur SET is_cycle USING visited,
      orphans AS MATERIALIZED (
        SELECT start_id FROM up GROUP BY start_id HAVING NOT bool_or(cur IS NULL)
      ),
      checked AS (
        SELECT b.id, b.drive_id, b.parent_id,
               CASE WHEN b.parent_id IS NOT NULL AND p.drive_id <> b.drive_id THEN p.drive_id END
                 AS parent_drive_id,
               EXISTS (SELECT 1 FROM orphans o WHERE o.start_id = b.id) AS orphan_root,
               (NOT b.is_trashed AND COALESCE(p.is_trashed, false)
                 AND COALESCE(p.trashed_at, '-infinity'::timestamptz) <= ${options.trashedBefore}) AS live_under_trashed,
               p.trashed_at AS parent_trashed_at,
               b.path,
               CASE WHEN b.parent_id IS NULL THEN '/' || b.name ELSE p.path || '/' || b.name END AS expected_path,
               b.lpath,
               CASE WHEN b.parent_id IS NULL THEN storage.folder_label(b.id)
                    ELSE p.lpath || storage.folder_label(b.id) END AS expected_lpath
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
                        'lpath', c.lpath::text, 'expected_lpath', COALESCE(c.expected_lpath::text, ''),
                        'parent_drive_id', c.parent_drive_id, 'orphan_root', c.orphan_root) ORDER BY c.id)
                 FROM checked c
                WHERE c.live_under_trashed
                   OR c.parent_drive_id IS NOT NULL
                   OR c.orphan_root
                   OR c.path IS DISTINCT FROM c.expected_path
                   OR c.lpath IS DISTINCT FROM c.expected_lpath
             ), '[]'::json) AS anomalies`.execute(this.#db);
    return rows[0] as PageRow;
  }
}
