import { randomBytes } from 'node:crypto';
import {
  type CheckJobHandler,
  type ConsistencyCheck,
  checkJob,
  PgFindingStore,
  type StoredFinding,
} from '@oxicloud/consistency';
import { RecoverableEngine } from '@oxicloud/recoverable';
import type { JobOutcome, Logger } from '@oxicloud/scheduler';
import type pg from 'pg';
import { categoryOrderFor } from '../content/category-order.js';

/**
 * Test fixtures on OxiCloud's storage domain (the tree, drives, grants and
 * trash adapters' tests): rows written the way OxiCloud writes them (fact
 * sheet §3, §4, §8), plus a runner that drives a real check end to end
 * through the recoverable engine and the findings store. Not exported from
 * the package: the tests import it by path.
 *
 * Every timestamp is given as "days ago" so rows sit outside the checks' 1 h
 * grace unless a test says otherwise.
 */

/** A drive made by the four-write transaction: the drive, its root folder, the link, the owner grant. */
export interface FixtureDrive {
  readonly driveId: string;
  readonly rootId: string;
  readonly ownerGrantId: string;
}

/** A share link: the share row (the token subject) and its one viewer grant. */
export interface FixtureShare {
  readonly shareId: string;
  readonly grantId: string;
}

/** Who owns a shared drive. */
export type FixtureOwner = { readonly type: 'user' | 'group'; readonly id: string };

const ago = (days: number) => `now() - make_interval(secs => ${days * 86_400})`;

/** A 64-hex BLAKE3-shaped hash (random: nothing here reads bytes). */
export const randomHash = (): string => randomBytes(32).toString('hex');

/** OxiCloud's ltree label of a folder: its uuid with every `-` replaced by `_`. */
export const folderLabel = (id: string): string => id.replaceAll('-', '_');

/**
 * Empties the domain's tables between tests (the seeded `Internal` group
 * stays): TRUNCATE, so no delete trigger runs.
 */
export async function resetDomain(pool: pg.Pool): Promise<void> {
  await pool.query(`TRUNCATE auth.users, storage.drives, storage.folders, storage.files, storage.blobs,
                             storage.chunk_manifests, storage.role_grants, storage.shares,
                             storage.nextcloud_object_ids CASCADE`);
  await pool.query('DELETE FROM auth.subject_groups WHERE NOT is_virtual');
}

/** Writers of OxiCloud-shaped rows on one pool. */
export function oxiTreeFixtures(pool: pg.Pool) {
  const one = async <T = { id: string }>(text: string, values: unknown[] = []): Promise<T> =>
    (await pool.query(text, values)).rows[0] as T;

  async function fourWrites(
    kind: 'personal' | 'shared',
    rootName: string,
    owner: FixtureOwner,
    options: { defaultForUser: string | null; quotaBytes: number | null; policies: object; daysAgo: number },
  ): Promise<FixtureDrive> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const q = async (text: string, values: unknown[]) => (await client.query(text, values)).rows[0];
      const drive = await q(
        `INSERT INTO storage.drives (kind, default_for_user, quota_bytes, policies, created_at, updated_at)
         VALUES ($1, $2, $3, $4::jsonb, ${ago(options.daysAgo)}, ${ago(options.daysAgo)}) RETURNING id`,
        [kind, options.defaultForUser, options.quotaBytes, JSON.stringify(options.policies)],
      );
      const creator = owner.type === 'user' ? owner.id : null;
      const root = await q(
        `INSERT INTO storage.folders (name, parent_id, drive_id, created_by, updated_by, created_at)
         VALUES ($1, NULL, $2, $3, $3, ${ago(options.daysAgo)}) RETURNING id`,
        [rootName, drive.id, creator],
      );
      await client.query('UPDATE storage.drives SET root_folder_id = $1 WHERE id = $2', [root.id, drive.id]);
      const grant = await q(
        `INSERT INTO storage.role_grants (subject_type, subject_id, resource_type, resource_id, role, granted_by, granted_at)
         VALUES ($1, $2, 'drive', $3, 'owner', $4, ${ago(options.daysAgo)}) RETURNING id`,
        [owner.type, owner.id, drive.id, creator ?? owner.id],
      );
      await client.query('COMMIT');
      return { driveId: drive.id, rootId: root.id, ownerGrantId: grant.id };
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }

  return {
    /** An internal (default) or external user. */
    async user(name: string, options: { external?: boolean } = {}): Promise<string> {
      return (
        await one(
          `INSERT INTO auth.users (username, email, role, is_external, created_at)
           VALUES ($1, $1 || '@example.test', 'user', $2, ${ago(2)}) RETURNING id`,
          [name, options.external ?? false],
        )
      ).id;
    },

    /** A subject group (direct members optional). */
    async group(name: string, members: readonly string[] = [], addedBy?: string): Promise<string> {
      const { id } = await one('INSERT INTO auth.subject_groups (name) VALUES ($1) RETURNING id', [name]);
      for (const member of members) {
        await pool.query(
          'INSERT INTO auth.subject_group_members (group_id, member_user_id, added_by) VALUES ($1, $2, $3)',
          [id, member, addedBy ?? member],
        );
      }
      return id;
    },

    /**
     * A personal drive (root `Personal`, quota NULL, the photo/music index
     * policies) with its one user owner grant; `default: false` makes a
     * secondary personal drive (`default_for_user` NULL, known by its grant only).
     */
    personalDrive(userId: string, options: { default?: boolean; daysAgo?: number } = {}) {
      return fourWrites(
        'personal',
        'Personal',
        { type: 'user', id: userId },
        {
          defaultForUser: options.default === false ? null : userId,
          quotaBytes: null,
          policies: { include_in_photo_index: true, include_in_music_index: true },
          daysAgo: options.daysAgo ?? 2,
        },
      );
    },

    /** A shared drive: root folder named `name`, an owner grant to a user or a group. */
    sharedDrive(
      name: string,
      owner: FixtureOwner,
      options: { quotaBytes?: number | null; policies?: object; daysAgo?: number } = {},
    ) {
      return fourWrites('shared', name, owner, {
        defaultForUser: null,
        quotaBytes: options.quotaBytes ?? null,
        policies: options.policies ?? {},
        daysAgo: options.daysAgo ?? 2,
      });
    },

    /** A folder under `parentId` (path and lpath come from OxiCloud's trigger). */
    async folder(driveId: string, parentId: string, name: string): Promise<string> {
      return (
        await one(
          `INSERT INTO storage.folders (name, parent_id, drive_id, created_at)
           VALUES ($1, $2, $3, ${ago(2)}) RETURNING id`,
          [name, parentId, driveId],
        )
      ).id;
    },

    /** A file in `folderId` (with a legacy blob row for its hash unless `blob: false`). */
    async file(
      driveId: string,
      folderId: string,
      name: string,
      size: number,
      options: { hash?: string; blob?: boolean } = {},
    ): Promise<{ id: string; hash: string }> {
      const hash = options.hash ?? randomHash();
      if (options.blob !== false) {
        await pool.query(
          `INSERT INTO storage.blobs (hash, size, ref_count, created_at) VALUES ($1, $2, 1, ${ago(2)})
           ON CONFLICT (hash) DO UPDATE SET ref_count = storage.blobs.ref_count + 1`,
          [hash, size],
        );
      }
      const { id } = await one(
        `INSERT INTO storage.files (name, folder_id, blob_hash, size, drive_id, created_at, media_sort_date,
                                    category_order)
         VALUES ($1, $2, $3, $4, $5, ${ago(2)}, ${ago(2)}, $6) RETURNING id`,
        [name, folderId, hash, size, driveId, categoryOrderFor(name, 'application/octet-stream')],
      );
      return { id, hash };
    },

    /** Trashes one file as OxiCloud does: flag, `trashed_at`, `original_folder_id`; `folder_id` kept. */
    async trashFile(fileId: string, daysAgo = 2): Promise<void> {
      await pool.query(
        `UPDATE storage.files SET is_trashed = true, trashed_at = ${ago(daysAgo)}, original_folder_id = folder_id
          WHERE id = $1`,
        [fileId],
      );
    },

    /**
     * Trashes a folder subtree as OxiCloud does, in one statement: the root
     * gets the flag, `trashed_at` and `original_parent_id` (parent, path and
     * lpath unchanged); every descendant folder and file not already trashed
     * gets the flag and the same `trashed_at`, its `original_*` left NULL.
     */
    async trashFolder(folderId: string, daysAgo = 2): Promise<void> {
      await pool.query(
        `WITH sub AS (
           SELECT d.id FROM storage.folders d
            WHERE d.lpath OPERATOR(public.<@) (SELECT r.lpath FROM storage.folders r WHERE r.id = $1)
         ),
         folders AS (
           UPDATE storage.folders f
              SET is_trashed = true, trashed_at = ${ago(daysAgo)},
                  original_parent_id = CASE WHEN f.id = $1 THEN f.parent_id END
            WHERE f.id IN (SELECT id FROM sub) AND (f.id = $1 OR NOT f.is_trashed)
           RETURNING f.id
         )
         UPDATE storage.files fi SET is_trashed = true, trashed_at = ${ago(daysAgo)}
          WHERE fi.folder_id IN (SELECT id FROM sub) AND NOT fi.is_trashed`,
        [folderId],
      );
    },

    /** A grant (no FK: any ids), `granted_at` `daysAgo` back, `expires` an SQL expression or null. */
    async grant(
      subject: { type: 'user' | 'group' | 'token'; id: string },
      resource: { type: string; id: string },
      options: { role?: string; expires?: string | null; daysAgo?: number; grantedBy?: string } = {},
    ): Promise<string> {
      return (
        await one(
          `INSERT INTO storage.role_grants
             (subject_type, subject_id, resource_type, resource_id, role, granted_by, granted_at, expires_at)
           VALUES ($1, $2, $3, $4, $5::storage.grant_role, $6, ${ago(options.daysAgo ?? 2)}, ${options.expires ?? 'NULL'})
           RETURNING id`,
          [
            subject.type,
            subject.id,
            resource.type,
            resource.id,
            options.role ?? 'viewer',
            options.grantedBy ?? subject.id,
          ],
        )
      ).id;
    },

    /**
     * A share link as OxiCloud makes it, in two statements: the share row
     * (item_id as text, created_at in unix seconds), then its token grant
     * `('token', share, item_type, item_id, 'viewer', expires_at)`.
     */
    async share(
      item: { type: 'file' | 'folder'; id: string; name?: string },
      createdBy: string,
      options: { expires?: string | null; daysAgo?: number } = {},
    ): Promise<FixtureShare> {
      const { id } = await one(
        `INSERT INTO storage.shares (item_id, item_name, item_type, token, created_at, created_by)
         VALUES ($1::text, $2, $3, $4, extract(epoch FROM ${ago(options.daysAgo ?? 2)})::bigint, $5) RETURNING id`,
        [item.id, item.name ?? null, item.type, randomBytes(16).toString('hex'), createdBy],
      );
      const grantId = await this.grant(
        { type: 'token', id },
        { type: item.type, id: item.id },
        {
          role: 'viewer',
          expires: options.expires ?? null,
          daysAgo: options.daysAgo ?? 2,
          grantedBy: createdBy,
        },
      );
      return { shareId: id, grantId };
    },

    /**
     * Runs `statements` in one transaction with every trigger off
     * (`session_replication_role = replica`: the path triggers, the deferred
     * root check, the foreign keys): how a test writes a drift OxiCloud's
     * own writes would never commit.
     */
    async drift(...statements: readonly (string | [string, unknown[]])[]): Promise<void> {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('SET LOCAL session_replication_role = replica');
        for (const s of statements) {
          if (typeof s === 'string') await client.query(s);
          else await client.query(s[0], s[1]);
        }
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      } finally {
        client.release();
      }
    },
  };
}

/** What {@link checkRunner}'s `run` returns: the run row and its findings. */
export interface CheckRun {
  readonly outcome: JobOutcome;
  readonly runId: string;
  readonly status: string;
  readonly stats: Record<string, unknown>;
  readonly findings: StoredFinding[];
}

/** `kind severity resource_id` of each finding, sorted: what a test compares. */
export const summary = (findings: readonly StoredFinding[]): string[] =>
  findings.map((f) => `${f.kind} ${f.severity} ${f.resourceId}`).sort();

/**
 * Runs checks end to end as the server does: `checkJob` on the findings
 * store, registered with a `RecoverableEngine` on the test database, run to
 * its end with `runOrResume`; findings read back from `jobs.run_findings`.
 * A check is registered once per name (the first object given wins).
 */
export function checkRunner(pool: pg.Pool) {
  const logger: Logger = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };
  const findings = new PgFindingStore({ pool });
  const engine = new RecoverableEngine({ pool, logger });
  const registered = new Map<string, CheckJobHandler>();
  return {
    engine,
    async run(check: ConsistencyCheck, params: Record<string, unknown> = {}): Promise<CheckRun> {
      if (!registered.has(check.name)) {
        const handler = checkJob(check, { findings, logger });
        engine.register(handler);
        registered.set(check.name, handler);
      }
      const outcome = await engine.runOrResume(check.name, { params });
      const { rows } = await pool.query(
        `SELECT id, status, stats FROM jobs.recoverable_runs
          WHERE job_name = $1 ORDER BY started_at DESC, id DESC LIMIT 1`,
        [check.name],
      );
      const row = rows[0];
      return {
        outcome,
        runId: row.id,
        status: row.status,
        stats: row.stats,
        findings: await findings.list(row.id, { limit: 10_000 }),
      };
    },
    shutdown: () => engine.shutdown({ timeoutMs: 1000 }),
  };
}
