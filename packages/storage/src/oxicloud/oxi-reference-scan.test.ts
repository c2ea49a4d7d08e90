import { randomUUID } from 'node:crypto';
import { REFERENCES_CONSISTENCY_CHECK_NAME } from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { OxiCloudDatabase } from './database.js';
import { OxiReferenceScan } from './oxi-reference-scan.js';
import { checkRunner, oxiTreeFixtures, resetDomain, summary } from './tree-fixtures.js';

let db: TestDatabase;
let runner: ReturnType<typeof checkRunner>;
let fx: ReturnType<typeof oxiTreeFixtures>;
let check: ReturnType<OxiReferenceScan['consistencyChecks']>[number];

interface World {
  alice: string;
  fileId: string;
  folderId: string;
}
let w: World;

const q = (text: string, values: unknown[] = []) => db.pool.query(text, values);
const AGO = "now() - interval '2 days'";

/** Alice favors a file and a folder, has both in her recent items, a magic link to the folder, a share of the file. */
async function seed(): Promise<World> {
  const alice = await fx.user('alice');
  const drive = await fx.personalDrive(alice);
  const folderId = await fx.folder(drive.driveId, drive.rootId, 'docs');
  const { id: fileId } = await fx.file(drive.driveId, folderId, 'a.txt', 10);
  await q(
    `INSERT INTO auth.user_favorites (user_id, item_id, item_type, created_at)
     VALUES ($1, $2, 'file', ${AGO}), ($1, $3, 'folder', ${AGO})`,
    [alice, fileId, folderId],
  );
  await q(
    `INSERT INTO auth.user_recent_files (user_id, item_id, item_type, accessed_at)
     VALUES ($1, $2, 'file', ${AGO}), ($1, $3, 'folder', ${AGO})`,
    [alice, fileId, folderId],
  );
  await magicLink(alice, 'folder', folderId);
  await magicLink(alice, null, null);
  await fx.share({ type: 'file', id: fileId }, alice);
  await q(
    `INSERT INTO storage.nextcloud_object_ids (object_type, object_id) VALUES ('file', $1), ('folder', $2)`,
    [fileId, folderId],
  );
  return { alice, fileId, folderId };
}

async function magicLink(userId: string, type: string | null, id: string | null): Promise<string> {
  const { rows } = await q(
    `INSERT INTO auth.magic_link_tokens (token, user_id, issued_at, expires_at, resource_type, resource_id)
     VALUES ($1, $2, ${AGO}, now() + interval '1 day', $3, $4) RETURNING id`,
    [randomUUID(), userId, type, id],
  );
  return rows[0].id as string;
}

beforeAll(async () => {
  db = await createTestDatabase({ domain: 'oxicloud' });
  const kysely = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool: db.pool }) });
  runner = checkRunner(db.pool);
  fx = oxiTreeFixtures(db.pool);
  check = new OxiReferenceScan(kysely).consistencyChecks()[0]!;
});
afterAll(async () => {
  await runner?.shutdown().catch(() => undefined);
  await db?.drop();
});
beforeEach(async () => {
  await resetDomain(db.pool);
  await q('TRUNCATE auth.user_favorites, auth.user_recent_files, auth.magic_link_tokens');
  w = await seed();
});

describe('references_consistency on OxiCloud’s domain (OxiReferenceScan)', () => {
  it('is references_consistency of the item_references subsystem', () => {
    expect(check.name).toBe(REFERENCES_CONSISTENCY_CHECK_NAME);
    expect(check.subsystem).toBe('item_references');
  });

  it('rows naming items that exist (trashed ones too) → 0 findings, every source walked across pages', async () => {
    await fx.trashFile(w.fileId);
    const run = await runner.run(check, { batch_size: 1 });
    expect(run.status).toBe('Completed');
    expect(run.findings).toEqual([]);
    // 2 favorites, 2 recent items, 2 magic links, 1 share, 2 NextCloud ids.
    expect(run.stats['scanned_count']).toBe(9);
  });

  it('a deleted file and folder leave a dangling favorite, recent item, magic link and share', async () => {
    const { rows: favs } = await q("SELECT id::text FROM auth.user_favorites WHERE item_type = 'file'");
    const { rows: recents } = await q('SELECT id::text, item_type FROM auth.user_recent_files ORDER BY id');
    const { rows: nextcloud } = await q('SELECT id::text FROM storage.nextcloud_object_ids ORDER BY id');
    const { rows: links } = await q(
      'SELECT id::text FROM auth.magic_link_tokens WHERE resource_id IS NOT NULL',
    );
    // A share row whose grant was never written (creation is two statements, fact sheet §8).
    const { rows: shares } = await q(
      `INSERT INTO storage.shares (item_id, item_type, token, created_at, created_by)
       VALUES ($1, 'file', 'no-grant-token', extract(epoch FROM now())::bigint, $2) RETURNING id::text`,
      [w.fileId, w.alice],
    );
    // Nothing deletes these rows when the item goes (fact sheet §10). The linked share goes with its
    // grant (the reverse-cascade trigger); the one without a grant stays.
    await q('DELETE FROM storage.files WHERE id = $1', [w.fileId]);
    await q('DELETE FROM storage.folders WHERE id = $1', [w.folderId]);
    const run = await runner.run(check, { batch_size: 2 });
    expect(summary(run.findings)).toEqual(
      [
        `dangling_favorite Reclaimable ${favs[0].id}`,
        `dangling_favorite Reclaimable ${Number(favs[0].id) + 1}`,
        ...recents.map((r) => `dangling_recent_item Reclaimable ${r.id}`),
        `dangling_magic_link Reclaimable ${links[0].id}`,
        `dangling_share Reclaimable ${shares[0].id}`,
        ...nextcloud.map((r) => `dangling_nextcloud_id Reclaimable ${r.id}`),
      ].sort(),
    );
    const share = run.findings.find((f) => f.kind === 'dangling_share');
    expect(share?.detail).toEqual({
      user_id: w.alice,
      item_type: 'file',
      item_id: w.fileId,
      reason: 'missing',
    });
  });

  it('a share of a file that exists without its one viewer grant on it → share_grant_mismatch (DataLoss), by reason', async () => {
    const {
      rows: [docs],
    } = await q('SELECT drive_id FROM storage.folders WHERE id = $1', [w.folderId]);
    const { id: other } = await fx.file(docs.drive_id, w.folderId, 'b.txt', 10);
    // No grant at all (the second write never ran).
    const {
      rows: [bare],
    } = await q(
      `INSERT INTO storage.shares (item_id, item_type, token, created_at, created_by)
       VALUES ($1, 'file', 'no-grant-token', extract(epoch FROM now())::bigint, $2) RETURNING id::text`,
      [w.fileId, w.alice],
    );
    // A grant that is not a viewer (the link edits), and one on another file than the share names.
    const editor = await fx.share({ type: 'file', id: w.fileId }, w.alice);
    await q("UPDATE storage.role_grants SET role = 'editor' WHERE id = $1", [editor.grantId]);
    const elsewhere = await fx.share({ type: 'file', id: w.fileId }, w.alice);
    await q('UPDATE storage.role_grants SET resource_id = $2 WHERE id = $1', [elsewhere.grantId, other]);
    // Two grants (a second viewer grant on the folder as well).
    const twice = await fx.share({ type: 'file', id: w.fileId }, w.alice);
    await fx.grant(
      { type: 'token', id: twice.shareId },
      { type: 'folder', id: w.folderId },
      { role: 'viewer' },
    );
    // A share whose grant has expired still has it (the purge's): no finding.
    await fx.share({ type: 'file', id: w.fileId }, w.alice, { expires: "now() - interval '1 day'" });

    const run = await runner.run(check, { batch_size: 2 });
    expect(summary(run.findings)).toEqual(
      [bare.id, editor.shareId, elsewhere.shareId, twice.shareId]
        .map((id) => `share_grant_mismatch DataLoss ${id}`)
        .sort(),
    );
    const reasons = Object.fromEntries(run.findings.map((f) => [f.resourceId, f.detail['reason']]));
    expect(reasons).toEqual({
      [bare.id]: 'no_token_grant',
      [editor.shareId]: 'token_grant_mismatch',
      [elsewhere.shareId]: 'token_grant_mismatch',
      [twice.shareId]: 'token_grant_mismatch',
    });
    expect(check.kinds?.find((k) => k.kind === 'share_grant_mismatch')?.severity).toBe('DataLoss');
  });

  it('an id that is no uuid and a type OxiCloud does not have are named as such', async () => {
    await q(
      `INSERT INTO auth.user_favorites (user_id, item_id, item_type, created_at)
       VALUES ($1, 'not-a-uuid', 'file', ${AGO}), ($1, $2, 'album', ${AGO})`,
      [w.alice, w.fileId],
    );
    const run = await runner.run(check);
    const reasons = run.findings.map((f) => [f.kind, f.detail['item_id'], f.detail['reason']]);
    expect(reasons.sort()).toEqual(
      [
        ['dangling_favorite', 'not-a-uuid', 'not_a_uuid'],
        ['dangling_favorite', w.fileId, 'unknown_type'],
      ].sort(),
    );
  });

  it('a young dangling favorite is left to the grace unless forced; one healed before pass 2 is dropped', async () => {
    await q(
      `INSERT INTO auth.user_favorites (user_id, item_id, item_type, created_at) VALUES ($1, $2, 'file', now())`,
      [w.alice, randomUUID()],
    );
    expect((await runner.run(check)).findings).toEqual([]);
    expect(summary((await runner.run(check, { force: true })).findings)).toHaveLength(1);
  });

  describe('faces (faces.faces) against their file’s content hash', () => {
    /** A face of `fileId` found in `hash` (the indexer stores the file's blob_hash), `created` an SQL time. */
    async function face(fileId: string, hash: string | null, created = AGO): Promise<string> {
      const { rows } = await q(
        `INSERT INTO faces.faces (file_id, user_id, bbox, det_score, embedding, blob_hash, created_at)
         VALUES ($1, $2, ARRAY[0.1, 0.2, 0.3, 0.3]::real[], 0.9, $3, $4, ${created}) RETURNING id::text`,
        [fileId, w.alice, Buffer.alloc(16), hash],
      );
      return rows[0].id as string;
    }
    const hashOf = async (fileId: string) =>
      (await q('SELECT blob_hash FROM storage.files WHERE id = $1', [fileId])).rows[0].blob_hash as string;
    /** OxiCloud's content swap (file_blob_write_repository.rs): the new hash, `updated_at` at `when`. */
    const swap = (fileId: string, hash: string, when = AGO) =>
      q(`UPDATE storage.files SET blob_hash = $2, updated_at = ${when} WHERE id = $1`, [fileId, hash]);
    const drive = async () =>
      (await q('SELECT drive_id FROM storage.folders WHERE id = $1', [w.folderId])).rows[0]
        .drive_id as string;

    it('a face of old content (stored or not) → stale_face_hash (Drift); of the current content, or of none, no finding', async () => {
      await q(`UPDATE storage.files SET updated_at = ${AGO}`);
      const before = await hashOf(w.fileId);
      const current = await face(w.fileId, before);
      await face(w.fileId, null);
      // The photo was overwritten: its old content is still stored (no GC yet), and the reindex failed.
      const { id: photo } = await fx.file(await drive(), w.folderId, 'photo.jpg', 10);
      const old = await hashOf(photo);
      const stale = await face(photo, old);
      const { hash: next } = await fx.file(await drive(), w.folderId, 'copy-of-new.jpg', 12);
      await swap(photo, next);
      // A hash that names no content at all.
      const unknown = await face(w.fileId, 'f'.repeat(64));
      // A face of its file's hash whose content does not resolve: the file's finding, not the face's.
      const { id: lost } = await fx.file(await drive(), w.folderId, 'lost.jpg', 10, { blob: false });
      await q(`UPDATE storage.files SET updated_at = ${AGO} WHERE id = $1`, [lost]);
      await face(lost, await hashOf(lost));

      const run = await runner.run(check, { batch_size: 1 });
      expect(run.status).toBe('Completed');
      expect(summary(run.findings)).toEqual(
        [`stale_face_hash Drift ${stale}`, `stale_face_hash Drift ${unknown}`].sort(),
      );
      const detail = Object.fromEntries(run.findings.map((f) => [f.resourceId, f.detail]));
      expect(detail[stale]).toEqual({
        user_id: w.alice,
        item_type: 'file',
        item_id: photo,
        reason: 'stale_hash',
        face_hash: old,
        file_hash: next,
      });
      expect(detail[unknown]).toMatchObject({ item_id: w.fileId, reason: 'unknown_hash', file_hash: before });
      expect(run.findings.map((f) => f.resourceId)).not.toContain(current);
      expect(check.kinds?.find((k) => k.kind === 'stale_face_hash')?.severity).toBe('Drift');
    });

    it('a face younger than the grace, or of a file whose content was swapped within it, is left to the reindex unless forced', async () => {
      await q(`UPDATE storage.files SET updated_at = ${AGO}`);
      const { id: photo } = await fx.file(await drive(), w.folderId, 'photo.jpg', 10);
      const { id: other } = await fx.file(await drive(), w.folderId, 'other.jpg', 10);
      // Found just now in content the file no longer has.
      const young = await face(other, 'e'.repeat(64), 'now()');
      // An old face whose file's content was swapped a moment ago: the reindex is still queued.
      const queued = await face(photo, await hashOf(photo));
      await swap(photo, await hashOf(w.fileId), 'now()');
      expect((await runner.run(check)).findings).toEqual([]);
      expect(summary((await runner.run(check, { force: true })).findings)).toEqual(
        [`stale_face_hash Drift ${young}`, `stale_face_hash Drift ${queued}`].sort(),
      );
      // The reindex ran (old faces deleted, new ones found in the new content): fixed.
      await q('DELETE FROM faces.faces WHERE id = $1', [queued]);
      await face(photo, await hashOf(photo));
      expect(summary((await runner.run(check, { force: true })).findings)).toEqual([
        `stale_face_hash Drift ${young}`,
      ]);
    });
  });
});
