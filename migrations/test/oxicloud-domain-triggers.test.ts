import { randomBytes } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readOxiCloudDomainFiles } from '../src/index.js';
import { applyInTransactions } from './oxicloud-domain-fixtures.js';

/*
 * The triggers of the OxiCloud-compatible storage domain (oxicloud-domain/),
 * one behaviour per test, as the fact sheet (OXICLOUD.md §2–§9) gives them.
 * Most tests run in a transaction that is rolled back; the ones about what
 * happens at COMMIT commit rows of their own.
 */

type Row = Record<string, unknown>;

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase({ empty: true });
  const client = await db.pool.connect();
  try {
    await applyInTransactions(client, readOxiCloudDomainFiles());
  } finally {
    client.release();
  }
});
afterAll(async () => {
  await db?.drop();
});

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
/** A BLAKE3-shaped content hash: 64 lowercase hex characters. */
const hash = () => hex(32);
/** A folder's ltree label: its uuid with every `-` replaced by `_`. */
const label = (id: string) => id.replaceAll('-', '_');

async function rows(c: pg.PoolClient, sql: string, values: unknown[] = []): Promise<Row[]> {
  return (await c.query(sql, values)).rows as Row[];
}
async function one(c: pg.PoolClient, sql: string, values: unknown[] = []): Promise<Row> {
  const [row] = await rows(c, sql, values);
  if (!row) throw new Error(`no row from ${sql}`);
  return row;
}
async function id(c: pg.PoolClient, sql: string, values: unknown[] = []): Promise<string> {
  return String((await one(c, sql, values))['id']);
}

/** Runs `fn` in a transaction that is rolled back: its rows never reach another test (nor COMMIT). */
async function rolledBack(fn: (c: pg.PoolClient) => Promise<void>): Promise<void> {
  const c = await db.pool.connect();
  try {
    await c.query('BEGIN');
    await fn(c);
  } finally {
    await c.query('ROLLBACK').catch(() => undefined);
    c.release();
  }
}

/** Runs `fn` on a session of its own, for the tests that commit. */
async function session(fn: (c: pg.PoolClient) => Promise<void>): Promise<void> {
  const c = await db.pool.connect();
  try {
    await fn(c);
  } finally {
    await c.query('ROLLBACK').catch(() => undefined);
    c.release();
  }
}

async function createUser(c: pg.PoolClient, options: { external?: boolean } = {}): Promise<string> {
  const name = `u_${hex(4)}`;
  return id(
    c,
    `INSERT INTO auth.users (username, email, role, is_external) VALUES ($1, $1 || '@example.test', 'user', $2)
     RETURNING id`,
    [name, options.external ?? false],
  );
}

/**
 * OxiCloud's four writes of a new drive, in one transaction: the drive with
 * no root, its root folder, the drive's link to it, the owner grant. A
 * personal drive is the owner's default drive, its root named `Personal`.
 */
async function createDrive(
  c: pg.PoolClient,
  owner: string,
  kind: 'personal' | 'shared' = 'personal',
  rootName = kind === 'personal' ? 'Personal' : `Shared ${hex(3)}`,
): Promise<{ drive: string; root: string }> {
  const drive = await id(
    c,
    `INSERT INTO storage.drives (kind, default_for_user, policies)
     VALUES ($1, CASE WHEN $1 = 'personal' THEN $2::uuid END, '{}') RETURNING id`,
    [kind, owner],
  );
  const root = await id(
    c,
    `INSERT INTO storage.folders (name, drive_id, created_by, updated_by) VALUES ($1, $2, $3, $3) RETURNING id`,
    [rootName, drive, owner],
  );
  await c.query('UPDATE storage.drives SET root_folder_id = $1 WHERE id = $2', [root, drive]);
  await c.query(
    `INSERT INTO storage.role_grants (subject_type, subject_id, resource_type, resource_id, role, granted_by)
     VALUES ('user', $1, 'drive', $2, 'owner', $1)`,
    [owner, drive],
  );
  return { drive, root };
}

/** A user with a personal drive. */
async function createWorld(c: pg.PoolClient): Promise<{ user: string; drive: string; root: string }> {
  const user = await createUser(c);
  return { user, ...(await createDrive(c, user)) };
}

async function createFolder(c: pg.PoolClient, drive: string, parent: string, name: string): Promise<string> {
  return id(c, 'INSERT INTO storage.folders (name, parent_id, drive_id) VALUES ($1, $2, $3) RETURNING id', [
    name,
    parent,
    drive,
  ]);
}

async function createFile(
  c: pg.PoolClient,
  drive: string,
  folder: string,
  options: { name?: string; blobHash?: string; trashed?: boolean; createdAt?: string } = {},
): Promise<string> {
  return id(
    c,
    `INSERT INTO storage.files (name, folder_id, blob_hash, size, mime_type, drive_id, is_trashed, trashed_at, created_at)
     VALUES ($1, $2, $3, 10, 'image/jpeg', $4, $5, CASE WHEN $5 THEN now() END, COALESCE($6::timestamptz, now()))
     RETURNING id`,
    [
      options.name ?? `f_${hex(3)}.jpg`,
      folder,
      options.blobHash ?? hash(),
      drive,
      options.trashed ?? false,
      options.createdAt ?? null,
    ],
  );
}

async function createBlob(
  c: pg.PoolClient,
  refCount: number,
  blobHash = hash(),
  orphanedAt: string | null = null,
): Promise<string> {
  await c.query('INSERT INTO storage.blobs (hash, size, ref_count, orphaned_at) VALUES ($1, 10, $2, $3)', [
    blobHash,
    refCount,
    orphanedAt,
  ]);
  return blobHash;
}

async function blob(c: pg.PoolClient, blobHash: string): Promise<Row> {
  return one(
    c,
    `SELECT ref_count, orphaned_at IS NOT NULL AS orphaned, orphaned_at = now() AS stamped_now
       FROM storage.blobs WHERE hash = $1`,
    [blobHash],
  );
}

async function folder(c: pg.PoolClient, folderId: string): Promise<Row> {
  return one(c, 'SELECT path, lpath::text AS lpath, drive_id FROM storage.folders WHERE id = $1', [folderId]);
}

describe('trg_files_decrement_blob_ref (AFTER DELETE on files, per row)', () => {
  it('deleting the last file of a legacy blob sets ref_count 0 and stamps orphaned_at', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      const legacy = await createBlob(c, 1);
      const file = await createFile(c, w.drive, w.root, { blobHash: legacy });
      await c.query('DELETE FROM storage.files WHERE id = $1', [file]);
      expect(await blob(c, legacy)).toEqual({ ref_count: 0, orphaned: true, stamped_now: true });
    });
  });

  it('deleting one of two files takes one reference and leaves orphaned_at NULL', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      const legacy = await createBlob(c, 2);
      const first = await createFile(c, w.drive, w.root, { blobHash: legacy });
      await createFile(c, w.drive, w.root, { blobHash: legacy });
      await c.query('DELETE FROM storage.files WHERE id = $1', [first]);
      expect(await blob(c, legacy)).toEqual({ ref_count: 1, orphaned: false, stamped_now: null });
    });
  });

  it('never goes below 0: a drifted row already at 0 stays 0 and gets orphaned_at', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      const drifted = await createBlob(c, 0);
      const file = await createFile(c, w.drive, w.root, { blobHash: drifted });
      await c.query('DELETE FROM storage.files WHERE id = $1', [file]);
      expect(await blob(c, drifted)).toEqual({ ref_count: 0, orphaned: true, stamped_now: true });
    });
  });

  it('deleting a multi-chunk file changes no blob row and leaves its manifest alone', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      const chunks = [await createBlob(c, 1), await createBlob(c, 1)];
      const fileHash = hash();
      await c.query(
        `INSERT INTO storage.chunk_manifests (file_hash, chunk_hashes, chunk_sizes, total_size, chunk_count)
         VALUES ($1, $2, '{5,5}', 10, 2)`,
        [fileHash, chunks],
      );
      const file = await createFile(c, w.drive, w.root, { blobHash: fileHash });
      const blobsBefore = await rows(c, 'SELECT * FROM storage.blobs ORDER BY hash');
      await c.query('DELETE FROM storage.files WHERE id = $1', [file]);
      expect(await rows(c, 'SELECT * FROM storage.blobs ORDER BY hash')).toEqual(blobsBefore);
      expect(
        await one(c, 'SELECT ref_count FROM storage.chunk_manifests WHERE file_hash = $1', [fileHash]),
      ).toEqual({ ref_count: 1 });
    });
  });

  it('inserting a file takes no reference (OxiCloud’s app does that, not a trigger)', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      const legacy = await createBlob(c, 1);
      await createFile(c, w.drive, w.root, { blobHash: legacy });
      await createFile(c, w.drive, w.root, { blobHash: legacy });
      expect(await blob(c, legacy)).toEqual({ ref_count: 1, orphaned: false, stamped_now: null });
    });
  });

  it('fires for the file rows a folder cascade deletes, once per row', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      const legacy = await createBlob(c, 3);
      const docs = await createFolder(c, w.drive, w.root, 'docs');
      await createFile(c, w.drive, docs, { blobHash: legacy });
      await createFile(c, w.drive, docs, { blobHash: legacy });
      await c.query('DELETE FROM storage.folders WHERE id = $1', [docs]);
      expect(await blob(c, legacy)).toEqual({ ref_count: 1, orphaned: false, stamped_now: null });
    });
  });
});

describe('trg_folders_path (BEFORE INSERT OR UPDATE OF name, parent_id)', () => {
  it('gives a root folder its name as path, with no leading slash, and its label as lpath', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      expect(await folder(c, w.root)).toEqual({ path: 'Personal', lpath: label(w.root), drive_id: w.drive });
    });
  });

  it('gives a child its parent’s path and lpath extended, overwriting what the insert supplied', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      const a = await createFolder(c, w.drive, w.root, 'a b');
      const b = await id(
        c,
        `INSERT INTO storage.folders (name, parent_id, drive_id, path, lpath)
         VALUES ('b', $1, $2, '/elsewhere', 'x.y') RETURNING id`,
        [a, w.drive],
      );
      expect(await folder(c, b)).toEqual({
        path: 'Personal/a b/b',
        lpath: `${label(w.root)}.${label(a)}.${label(b)}`,
        drive_id: w.drive,
      });
    });
  });

  it('does not fire for an update of path alone; SET name = name recomputes the row', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      const a = await createFolder(c, w.drive, w.root, 'a');
      await c.query(`UPDATE storage.folders SET path = 'drifted' WHERE id = $1`, [a]);
      expect((await folder(c, a))['path']).toBe('drifted');
      await c.query('UPDATE storage.folders SET name = name WHERE id = $1', [a]);
      expect((await folder(c, a))['path']).toBe('Personal/a');
    });
  });
});

describe('trg_folders_cascade_path (AFTER UPDATE OF name, parent_id, path, lpath, drive_id)', () => {
  it('carries a rename down the subtree by prefix substitution, once per descendant', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      const a = await createFolder(c, w.drive, w.root, 'a');
      const b = await createFolder(c, w.drive, a, 'b');
      const d = await createFolder(c, w.drive, b, 'd');
      // A longer name: were the nested updates to cascade again, d's prefix would be substituted twice.
      await c.query(`UPDATE storage.folders SET name = 'a much longer name' WHERE id = $1`, [a]);
      expect(await folder(c, b)).toEqual({
        path: 'Personal/a much longer name/b',
        lpath: `${label(w.root)}.${label(a)}.${label(b)}`,
        drive_id: w.drive,
      });
      expect((await folder(c, d))['path']).toBe('Personal/a much longer name/b/d');
    });
  });

  it('carries a move down the subtree: lpath and path follow the new parent, whatever the search_path', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      const a = await createFolder(c, w.drive, w.root, 'a');
      const b = await createFolder(c, w.drive, a, 'b');
      const d = await createFolder(c, w.drive, b, 'd');
      const target = await createFolder(c, w.drive, w.root, 'target');
      // ltree's operators live in public: the trigger functions set their own search_path.
      await c.query(`SET LOCAL search_path = ''`);
      await c.query('UPDATE storage.folders SET parent_id = $1 WHERE id = $2', [target, b]);
      expect(await folder(c, d)).toEqual({
        path: 'Personal/target/b/d',
        lpath: [w.root, target, b, d].map(label).join('.'),
        drive_id: w.drive,
      });
    });
  });

  it('gives the subtree’s folders and files the new drive on a cross-drive move, except a third drive’s', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      const shared = await createDrive(c, w.user, 'shared', 'Team');
      const third = await createDrive(c, w.user, 'shared', 'Third');
      const moved = await createFolder(c, w.drive, w.root, 'moved');
      const inner = await createFolder(c, w.drive, moved, 'inner');
      const stray = await createFolder(c, w.drive, moved, 'stray');
      await c.query('UPDATE storage.folders SET drive_id = $1 WHERE id = $2', [third.drive, stray]);
      const top = await createFile(c, w.drive, moved);
      const deep = await createFile(c, w.drive, inner);
      const stays = await createFile(c, w.drive, w.root);

      // As OxiCloud's folder move writes it: the new parent and that parent's drive.
      await c.query('UPDATE storage.folders SET parent_id = $1, drive_id = $2 WHERE id = $3', [
        shared.root,
        shared.drive,
        moved,
      ]);
      expect(await folder(c, inner)).toEqual({
        path: 'Team/moved/inner',
        lpath: [shared.root, moved, inner].map(label).join('.'),
        drive_id: shared.drive,
      });
      expect((await folder(c, stray))['drive_id']).toBe(third.drive);
      const drives = await rows(c, 'SELECT id, drive_id FROM storage.files WHERE id = ANY($1) ORDER BY id', [
        [top, deep, stays],
      ]);
      expect(Object.fromEntries(drives.map((r) => [r['id'], r['drive_id']]))).toEqual({
        [top]: shared.drive,
        [deep]: shared.drive,
        [stays]: w.drive,
      });
    });
  });
});

describe('trg_no_orphan_root_folder (constraint trigger, checked at COMMIT)', () => {
  it('lets the four writes of a new drive commit', async () => {
    await session(async (c) => {
      await c.query('BEGIN');
      const w = await createWorld(c);
      await c.query('COMMIT');
      expect(await folder(c, w.root)).toMatchObject({ path: 'Personal', drive_id: w.drive });
    });
  });

  it('rejects at COMMIT, not before, a root folder whose drive does not point at it', async () => {
    await session(async (c) => {
      await c.query('BEGIN');
      const user = await createUser(c);
      const drive = await id(c, `INSERT INTO storage.drives (kind) VALUES ('shared') RETURNING id`);
      const root = await id(
        c,
        `INSERT INTO storage.folders (name, drive_id) VALUES ('Loose', $1) RETURNING id`,
        [drive],
      );
      await expect(c.query('COMMIT')).rejects.toMatchObject({
        code: '23514',
        message: expect.stringMatching(/^Orphan root folder rejected/),
      });
      expect(await rows(c, 'SELECT 1 FROM storage.folders WHERE id = $1', [root])).toEqual([]);
      expect(await rows(c, 'SELECT 1 FROM auth.users WHERE id = $1', [user])).toEqual([]);
    });
  });

  it('rejects at COMMIT any update of a live root whose drive link is broken; a trashed root passes', async () => {
    await session(async (c) => {
      await c.query('BEGIN');
      const w = await createWorld(c);
      await c.query('COMMIT');
      // Drift: the drive no longer points at its root (no folder row changes, so this commits).
      await c.query('UPDATE storage.drives SET root_folder_id = NULL WHERE id = $1', [w.drive]);

      await c.query('BEGIN');
      await c.query('UPDATE storage.folders SET updated_at = now() WHERE id = $1', [w.root]);
      await expect(c.query('COMMIT')).rejects.toMatchObject({ code: '23514' });

      await c.query('BEGIN');
      await c.query('UPDATE storage.folders SET is_trashed = true, trashed_at = now() WHERE id = $1', [
        w.root,
      ]);
      await c.query('COMMIT');
      expect(await one(c, 'SELECT is_trashed FROM storage.folders WHERE id = $1', [w.root])).toEqual({
        is_trashed: true,
      });
    });
  });

  it('passes a root that is deleted later in the same transaction (a user delete cascading through the drive)', async () => {
    await session(async (c) => {
      await c.query('BEGIN');
      const w = await createWorld(c);
      await c.query('COMMIT');

      await c.query('BEGIN');
      await c.query('UPDATE storage.folders SET updated_at = now() WHERE id = $1', [w.root]);
      await c.query('DELETE FROM auth.users WHERE id = $1', [w.user]);
      await c.query('COMMIT');
      const left = await one(
        c,
        `SELECT (SELECT count(*)::int FROM storage.drives WHERE id = $1) AS drives,
                (SELECT count(*)::int FROM storage.folders WHERE drive_id = $1) AS folders`,
        [w.drive],
      );
      expect(left).toEqual({ drives: 0, folders: 0 });
    });
  });
});

describe('trg_drives_touch_updated_at (BEFORE UPDATE on drives)', () => {
  it('sets updated_at to now() on every update, even one that writes updated_at itself', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      await c.query(`UPDATE storage.drives SET used_bytes = 5, updated_at = '2001-01-01' WHERE id = $1`, [
        w.drive,
      ]);
      expect(
        await one(c, 'SELECT used_bytes, updated_at = now() AS touched FROM storage.drives WHERE id = $1', [
          w.drive,
        ]),
      ).toEqual({ used_bytes: '5', touched: true });
    });
  });
});

describe('grant cleanup triggers', () => {
  const grant = async (
    c: pg.PoolClient,
    subjectType: string,
    subject: string,
    resourceType: string,
    resource: string,
  ): Promise<string> =>
    id(
      c,
      `INSERT INTO storage.role_grants (subject_type, subject_id, resource_type, resource_id, role, granted_by)
       VALUES ($1, $2, $3, $4, 'viewer', $2) RETURNING id`,
      [subjectType, subject, resourceType, resource],
    );
  const grantsLeft = async (c: pg.PoolClient, ids: string[]) =>
    (await rows(c, 'SELECT id FROM storage.role_grants WHERE id = ANY($1)', [ids]))
      .map((r) => r['id'])
      .sort();
  const createShare = async (c: pg.PoolClient, owner: string, item: string) =>
    id(
      c,
      `INSERT INTO storage.shares (item_id, item_type, token, created_at, created_by)
       VALUES ($1, 'file', $2, extract(epoch FROM now())::bigint, $3) RETURNING id`,
      [item, hex(16), owner],
    );

  it('deleting a user deletes the grants whose subject is that user, and no other', async () => {
    await rolledBack(async (c) => {
      const guest = await createUser(c, { external: true });
      const other = await createUser(c, { external: true });
      const resource = await id(c, 'SELECT gen_random_uuid() AS id');
      const mine = await grant(c, 'user', guest, 'folder', resource);
      const sameIdAsGroup = await grant(c, 'group', guest, 'folder', resource);
      const theirs = await grant(c, 'user', other, 'folder', resource);
      await c.query('DELETE FROM auth.users WHERE id = $1', [guest]);
      expect(await grantsLeft(c, [mine, sameIdAsGroup, theirs])).toEqual([sameIdAsGroup, theirs].sort());
    });
  });

  it('deleting a share deletes its token grant', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      const file = await createFile(c, w.drive, w.root);
      const share = await createShare(c, w.user, file);
      const token = await grant(c, 'token', share, 'file', file);
      const sameIdAsUser = await grant(c, 'user', share, 'file', file);
      await c.query('DELETE FROM storage.shares WHERE id = $1', [share]);
      expect(await grantsLeft(c, [token, sameIdAsUser])).toEqual([sameIdAsUser]);
    });
  });

  it('deleting a token’s last grant deletes its share; while a grant is left the share stays', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      const file = await createFile(c, w.drive, w.root);
      const share = await createShare(c, w.user, file);
      const first = await grant(c, 'token', share, 'file', file);
      const second = await grant(c, 'token', share, 'folder', w.root);
      const shareCount = async () =>
        (await one(c, 'SELECT count(*)::int AS n FROM storage.shares WHERE id = $1', [share]))['n'];
      await c.query('DELETE FROM storage.role_grants WHERE id = $1', [first]);
      expect(await shareCount()).toBe(1);
      await c.query('DELETE FROM storage.role_grants WHERE id = $1', [second]);
      expect(await shareCount()).toBe(0);
    });
  });

  it('deleting a folder deletes the grants on it and on what the cascade deletes below it', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      const a = await createFolder(c, w.drive, w.root, 'a');
      const b = await createFolder(c, w.drive, a, 'b');
      const file = await createFile(c, w.drive, b);
      const onA = await grant(c, 'user', w.user, 'folder', a);
      const onB = await grant(c, 'user', w.user, 'folder', b);
      const onFile = await grant(c, 'user', w.user, 'file', file);
      const onRoot = await grant(c, 'user', w.user, 'folder', w.root);
      await c.query('DELETE FROM storage.folders WHERE id = $1', [a]);
      expect(await grantsLeft(c, [onA, onB, onFile, onRoot])).toEqual([onRoot]);
    });
  });

  it('deleting a file deletes the grants on it, not a grant of another resource type with its id', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      const file = await createFile(c, w.drive, w.root);
      const onFile = await grant(c, 'user', w.user, 'file', file);
      const sameIdAsFolder = await grant(c, 'user', w.user, 'folder', file);
      await c.query('DELETE FROM storage.files WHERE id = $1', [file]);
      expect(await grantsLeft(c, [onFile, sameIdAsFolder])).toEqual([sameIdAsFolder]);
    });
  });
});

describe('the tree-ETag and search queues (statement triggers on files and folders)', () => {
  /** The rows each queue got after `mark`. */
  const queued = async (c: pg.PoolClient, mark: { tree: number; search: number }) => ({
    tree: await rows(
      c,
      `SELECT lpath::text AS lpath, folder_id, drive_id FROM storage.tree_etag_dirty
        WHERE id > $1 ORDER BY lpath, folder_id`,
      [mark.tree],
    ),
    search: await rows(c, 'SELECT file_id, op FROM storage.search_index_dirty WHERE id > $1 ORDER BY id', [
      mark.search,
    ]),
  });
  const markNow = async (c: pg.PoolClient) => {
    const row = await one(
      c,
      `SELECT (SELECT coalesce(max(id), 0) FROM storage.tree_etag_dirty)::int AS tree,
              (SELECT coalesce(max(id), 0) FROM storage.search_index_dirty)::int AS search`,
    );
    return { tree: Number(row['tree']), search: Number(row['search']) };
  };
  const entry = async (c: pg.PoolClient, folderId: string) => {
    const f = await folder(c, folderId);
    return { lpath: f['lpath'], folder_id: folderId, drive_id: f['drive_id'] };
  };

  it('a file update of name enqueues its folder for a tree-ETag bump and the file for a search upsert', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      const docs = await createFolder(c, w.drive, w.root, 'docs');
      const file = await createFile(c, w.drive, docs);
      const mark = await markNow(c);
      await c.query(`UPDATE storage.files SET name = 'renamed.jpg' WHERE id = $1`, [file]);
      expect(await queued(c, mark)).toEqual({
        tree: [await entry(c, docs)],
        search: [{ file_id: file, op: 'upsert' }],
      });
    });
  });

  it('a file move enqueues the old and the new folder; trashing enqueues a search delete', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      const from = await createFolder(c, w.drive, w.root, 'from');
      const to = await createFolder(c, w.drive, w.root, 'to');
      const file = await createFile(c, w.drive, from);
      let mark = await markNow(c);
      await c.query('UPDATE storage.files SET folder_id = $1 WHERE id = $2', [to, file]);
      expect((await queued(c, mark)).tree).toEqual(
        [await entry(c, from), await entry(c, to)].sort((x, y) =>
          String(x.lpath).localeCompare(String(y.lpath)),
        ),
      );
      mark = await markNow(c);
      await c.query('UPDATE storage.files SET is_trashed = true, trashed_at = now() WHERE id = $1', [file]);
      expect((await queued(c, mark)).search).toEqual([{ file_id: file, op: 'delete' }]);
    });
  });

  it('an update of a column neither queue watches enqueues nothing', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      const file = await createFile(c, w.drive, w.root);
      const mark = await markNow(c);
      await c.query('UPDATE storage.files SET category_order = 100, media_sort_date = now() WHERE id = $1', [
        file,
      ]);
      expect(await queued(c, mark)).toEqual({ tree: [], search: [] });
    });
  });

  it('inserting files enqueues their folder once and each live file for search; deleting enqueues deletes', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      const docs = await createFolder(c, w.drive, w.root, 'docs');
      let mark = await markNow(c);
      const inserted = await rows(
        c,
        `INSERT INTO storage.files (name, folder_id, blob_hash, drive_id, is_trashed)
         VALUES ('live.txt', $1, $3, $2, false), ('gone.txt', $1, $3, $2, true) RETURNING id, is_trashed`,
        [docs, w.drive, hash()],
      );
      const live = inserted.find((r) => r['is_trashed'] === false)?.['id'];
      expect(await queued(c, mark)).toEqual({
        tree: [await entry(c, docs)],
        search: [{ file_id: live, op: 'upsert' }],
      });
      mark = await markNow(c);
      await c.query('DELETE FROM storage.files WHERE folder_id = $1', [docs]);
      const after = await queued(c, mark);
      expect(after.tree).toEqual([await entry(c, docs)]);
      expect(after.search.map((r) => r['op'])).toEqual(['delete', 'delete']);
    });
  });

  it('a folder insert, rename and delete enqueue its parent; what an FK cascade deletes is enqueued too', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      let mark = await markNow(c);
      const a = await createFolder(c, w.drive, w.root, 'a');
      expect((await queued(c, mark)).tree).toEqual([await entry(c, w.root)]);

      const b = await createFolder(c, w.drive, a, 'b');
      const file = await createFile(c, w.drive, b);
      mark = await markNow(c);
      // The rename's cascade rewrites b's path only, a column the queue does not watch.
      await c.query(`UPDATE storage.folders SET name = 'a2' WHERE id = $1`, [a]);
      expect((await queued(c, mark)).tree).toEqual([await entry(c, w.root)]);

      const aEntry = await entry(c, a);
      mark = await markNow(c);
      await c.query('DELETE FROM storage.folders WHERE id = $1', [a]);
      // ON DELETE CASCADE runs its deletes with their triggers queued on the outer statement (depth 1), so the
      // depth guard lets them through: b's delete enqueues a (already gone; the flusher bumps what is left).
      expect(await queued(c, mark)).toEqual({
        tree: [await entry(c, w.root), aEntry],
        search: [{ file_id: file, op: 'delete' }],
      });
    });
  });

  it('a statement run by another trigger (depth > 1) reaches the search queue but not the tree-ETag queue', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      const file = await createFile(c, w.drive, w.root);
      const legacy = await createBlob(c, 1);
      // A trigger of the test's own (rolled back with it) that renames the file from inside a trigger.
      await c.query(`CREATE FUNCTION storage.test_rename_file() RETURNS trigger LANGUAGE plpgsql AS $$
                     BEGIN UPDATE storage.files SET name = 'nested.jpg' WHERE id = '${file}'; RETURN NULL; END $$`);
      await c.query(`CREATE TRIGGER test_rename_file AFTER UPDATE ON storage.blobs
                     FOR EACH ROW EXECUTE FUNCTION storage.test_rename_file()`);
      const mark = await markNow(c);
      await c.query('UPDATE storage.blobs SET size = 11 WHERE hash = $1', [legacy]);
      expect(await one(c, 'SELECT name FROM storage.files WHERE id = $1', [file])).toEqual({
        name: 'nested.jpg',
      });
      expect(await queued(c, mark)).toEqual({ tree: [], search: [{ file_id: file, op: 'upsert' }] });
    });
  });
});

describe('trg_sync_media_sort_date (AFTER INSERT OR UPDATE OF captured_at on storage.file_metadata)', () => {
  it('sets files.media_sort_date to captured_at, or created_at without one; a delete changes nothing', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      const file = await createFile(c, w.drive, w.root, { createdAt: '2020-01-01T00:00:00Z' });
      const sortDate = async () =>
        (
          await one(
            c,
            `SELECT to_char(media_sort_date AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS d FROM storage.files
                         WHERE id = $1`,
            [file],
          )
        )['d'];
      await c.query(
        `INSERT INTO storage.file_metadata (file_id, captured_at, width) VALUES ($1, '2015-06-01T12:00:00Z', 640)`,
        [file],
      );
      expect(await sortDate()).toBe('2015-06-01');
      await c.query('UPDATE storage.file_metadata SET captured_at = NULL WHERE file_id = $1', [file]);
      expect(await sortDate()).toBe('2020-01-01');
      await c.query(
        `UPDATE storage.file_metadata SET captured_at = '2016-02-03T00:00:00Z' WHERE file_id = $1`,
        [file],
      );
      await c.query('DELETE FROM storage.file_metadata WHERE file_id = $1', [file]);
      expect(await sortDate()).toBe('2016-02-03');
    });
  });
});

describe('storage.caller_group_ids and storage.trash_items', () => {
  it('caller_group_ids gives the direct and transitive groups, through a cycle, without Internal', async () => {
    await rolledBack(async (c) => {
      const user = await createUser(c);
      const group = async (name: string) =>
        id(c, 'INSERT INTO auth.subject_groups (name) VALUES ($1) RETURNING id', [name]);
      const [direct, outer, unrelated] = [
        await group('direct'),
        await group('outer'),
        await group('unrelated'),
      ];
      const member = `INSERT INTO auth.subject_group_members (group_id, member_user_id, member_group_id, added_by)
                      VALUES ($1, $2, $3, $4)`;
      await c.query(member, [direct, user, null, user]);
      await c.query(member, [outer, null, direct, user]);
      await c.query(member, [direct, null, outer, user]);
      const found = await rows(c, 'SELECT g AS id FROM storage.caller_group_ids($1) g ORDER BY 1', [user]);
      expect(found.map((r) => r['id'])).toEqual([direct, outer].sort());
      expect(found.map((r) => r['id'])).not.toContain(unrelated);
    });
  });

  it('trash_items lists the top-level trashed items only', async () => {
    await rolledBack(async (c) => {
      const w = await createWorld(c);
      // Trashing a folder as OxiCloud does: the folder, and below it every item, with no original_* there.
      const binned = await createFolder(c, w.drive, w.root, 'binned');
      const below = await createFolder(c, w.drive, binned, 'below');
      await createFile(c, w.drive, below, { trashed: true });
      await c.query('UPDATE storage.folders SET is_trashed = true, trashed_at = now() WHERE id = $1', [
        below,
      ]);
      await c.query(
        `UPDATE storage.folders SET is_trashed = true, trashed_at = now(), original_parent_id = parent_id
          WHERE id = $1`,
        [binned],
      );
      const loose = await createFile(c, w.drive, w.root, { trashed: true });
      await c.query('UPDATE storage.files SET original_folder_id = folder_id WHERE id = $1', [loose]);
      const listed = await rows(
        c,
        `SELECT id, item_type, original_parent_id, drive_id FROM storage.trash_items
          WHERE drive_id = $1 ORDER BY item_type`,
        [w.drive],
      );
      expect(listed).toEqual([
        { id: loose, item_type: 'file', original_parent_id: w.root, drive_id: w.drive },
        { id: binned, item_type: 'folder', original_parent_id: w.root, drive_id: w.drive },
      ]);
    });
  });
});
