import type { ConsistencyCheck } from '@oxicloud/consistency';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type ConsistencyHarness,
  consistencyHarness,
  seedWorld,
  summary,
  type World,
} from './consistency-fixtures.js';

let db: TestDatabase;
let h: ConsistencyHarness;
let world: World;

beforeEach(async () => {
  db = await createTestDatabase();
  h = consistencyHarness(db.pool);
  world = await seedWorld(db.pool);
});
afterEach(async () => {
  await h.engine.shutdown({ timeoutMs: 1000 }).catch(() => undefined);
  await db.drop();
});

const sql = (text: string, values: unknown[] = []) => db.pool.query(text, values);
const foldersCheck = () => h.folders.consistencyChecks()[0] as ConsistencyCheck;
const filesCheck = () => h.files.consistencyChecks()[0] as ConsistencyCheck;
const folder = async (driveId: string, parentId: string | null, name: string): Promise<string> =>
  (
    await sql(
      `INSERT INTO storage.folders (drive_id, parent_id, name, created_at) VALUES ($1, $2, $3, now() - interval '2 days')
       RETURNING id`,
      [driveId, parentId, name],
    )
  ).rows[0].id;

describe('folders_consistency: drive_id_parent_mismatch and orphan_root', () => {
  it('a folder hung under another drive: drive_id_parent_mismatch on it, orphan_root on its descendants', async () => {
    const otherRoot = await folder(world.otherDriveId, null, 'theirs');
    const moved = await folder(world.driveId, otherRoot, 'moved');
    const below = await folder(world.driveId, moved, 'below');
    const run = await h.run(foldersCheck(), { batch_size: 2 });
    expect(run.status).toBe('Completed');
    expect(summary(run.findings)).toEqual(
      [`drive_id_parent_mismatch DataLoss ${moved}`, `orphan_root DataLoss ${below}`].sort(),
    );
    expect(run.findings.find((f) => f.kind === 'drive_id_parent_mismatch')?.detail).toMatchObject({
      drive_id: world.driveId,
      parent_id: otherRoot,
      parent_drive_id: world.otherDriveId,
    });
  });

  it('a parent cycle (path triggers bypassed): orphan_root on every folder of the cycle and below it, no path findings', async () => {
    const a = await folder(world.driveId, world.docs, 'a');
    const b = await folder(world.driveId, a, 'b');
    const c = await folder(world.driveId, b, 'c');
    // A cycle a → b → a, written the way a bad restore would (no cascade of paths).
    await sql('ALTER TABLE storage.folders DISABLE TRIGGER folders_cascade_path');
    await sql('UPDATE storage.folders SET parent_id = $2 WHERE id = $1', [a, b]);
    await sql('ALTER TABLE storage.folders ENABLE TRIGGER folders_cascade_path');
    const run = await h.run(foldersCheck());
    expect(run.status).toBe('Completed');
    expect(summary(run.findings)).toEqual(
      [`orphan_root DataLoss ${a}`, `orphan_root DataLoss ${b}`, `orphan_root DataLoss ${c}`].sort(),
    );
  });
});

describe('files_consistency: drive_id_parent_mismatch and mime_mismatch', () => {
  it("a file in another drive's folder and a file whose mime contradicts its blob → one finding each", async () => {
    const [misplaced, typed, unknown, paramsOnly] = world.liveFiles;
    await sql('UPDATE storage.files SET drive_id = $2 WHERE id = $1', [misplaced!.id, world.secondDriveId]);
    await sql("UPDATE storage.blobs SET content_type = 'image/png' WHERE hash = $1", [typed!.hash]);
    await sql("UPDATE storage.files SET mime_type = 'text/plain' WHERE id = $1", [typed!.id]);
    // Unknown on one side (the column default) or equal up to case and parameters: not a mismatch.
    await sql("UPDATE storage.blobs SET content_type = 'image/jpeg' WHERE hash = $1", [unknown!.hash]);
    await sql("UPDATE storage.blobs SET content_type = 'text/plain' WHERE hash = $1", [paramsOnly!.hash]);
    await sql("UPDATE storage.files SET mime_type = 'Text/Plain; charset=utf-8' WHERE id = $1", [
      paramsOnly!.id,
    ]);
    // Keep the accounting right, so only the two findings remain.
    await sql(`UPDATE storage.drives d SET used_bytes = COALESCE((SELECT sum(size) FROM storage.files f
                WHERE f.drive_id = d.id), 0)`);
    const run = await h.run(filesCheck(), { batch_size: 3 });
    expect(run.status).toBe('Completed');
    expect(summary(run.findings)).toEqual(
      [`drive_id_parent_mismatch DataLoss ${misplaced!.id}`, `mime_mismatch Drift ${typed!.id}`].sort(),
    );
    expect(run.findings.find((f) => f.kind === 'mime_mismatch')?.detail).toMatchObject({
      mime_type: 'text/plain',
      blob_content_type: 'image/png',
    });
    expect(run.findings.find((f) => f.kind === 'drive_id_parent_mismatch')?.detail).toMatchObject({
      drive_id: world.secondDriveId,
      folder_drive_id: world.driveId,
    });
  });

  it('young files are skipped unless forced', async () => {
    const [typed] = world.liveFiles;
    await sql("UPDATE storage.blobs SET content_type = 'image/png' WHERE hash = $1", [typed!.hash]);
    await sql("UPDATE storage.files SET mime_type = 'text/plain', created_at = now() WHERE id = $1", [
      typed!.id,
    ]);
    expect((await h.run(filesCheck())).findings).toEqual([]);
    expect(summary((await h.run(filesCheck(), { force: true })).findings)).toEqual([
      `mime_mismatch Drift ${typed!.id}`,
    ]);
  });
});
