/**
 * Restoring blob bytes from the other configured backend, on OxiCloud's
 * domain (`OxiRepairStore`, legacy whole-file blobs) and real Postgres,
 * the real LocalFsBlobStorage and the real S3BlobStorage against s3rver (a
 * real S3-protocol server in its own process), with the real BLAKE3 worker
 * hashers, in both directions: the server serving from local with a copy on
 * S3, and serving from S3 with a copy on local.
 *
 * The faults are found by the real storage_consistency check, planned,
 * approved and applied by the real repair run, and checked again by the
 * check: nothing left. A copy with other bytes is never restored; a copy
 * that disappears or changes between plan and apply makes the item skip,
 * with the source's bytes untouched.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ConsistencyCheck, PgRepairPlans } from '@oxicloud/consistency';
import { RecoverableEngine } from '@oxicloud/recoverable';
import {
  Blake3WorkerPool,
  blake3Hex,
  categoryOrderFor,
  createBlobHasher,
  LocalFsBlobStorage,
  S3BlobStorage,
} from '@oxicloud/storage';
import { OxiBlobIndexScan, OxiRepairStore } from '@oxicloud/storage/oxicloud';
import {
  type ActionLine,
  type BlobStorage,
  createRepairActions,
  createRepairJob,
  createRepairPlanner,
  createStorageConsistencyCheck,
  REPAIR_JOB_NAME,
  type RepairActions,
  type RepairFinding,
  type RepairLine,
} from '@oxicloud/tenants';
import {
  createTestDatabase,
  type S3rverProcess,
  startS3rver,
  type TestDatabase,
} from '@oxicloud/test-support';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsistencyHarness, consistencyHarness } from './consistency-fixtures.js';
import {
  insertOxiDrive as insertDrive,
  insertOxiUser as insertUser,
  oxiKysely as storageDb,
} from './oxicloud-domain-fixtures.js';

/** Bytes, their files' BLAKE3 key and the rows naming them. */
interface TestBlob {
  readonly hash: string;
  readonly bytes: Buffer;
  readonly fileIds: string[];
}

/**
 * A legacy whole-file blob of OxiCloud's domain (§5): the bytes on
 * `storage`, its row counting its `files` files (`ref_count` = the files:
 * OxiCloud has no insert trigger), the files in the drive's root folder.
 */
async function putBlob(
  pool: pg.Pool,
  world: { readonly driveId: string; readonly storage: BlobStorage },
  options: { readonly files?: number } = {},
): Promise<TestBlob> {
  const bytes = randomBytes(64 + Math.floor(Math.random() * 512));
  const hash = blake3Hex(bytes);
  await world.storage.put(hash, bytes, bytes.length);
  const files = options.files ?? 1;
  await pool.query(
    `INSERT INTO storage.blobs (hash, size, ref_count, content_type, created_at)
     VALUES ($1, $2, $3, 'application/octet-stream', now() - interval '2 days')`,
    [hash, bytes.length, files],
  );
  const fileIds: string[] = [];
  for (let i = 0; i < files; i++) {
    const { rows } = await pool.query(
      `INSERT INTO storage.files (drive_id, folder_id, name, blob_hash, size, created_at, media_sort_date, category_order)
       SELECT d.id, d.root_folder_id, $2, $3, $4, now() - interval '2 days', now() - interval '2 days', ${categoryOrderFor('f', 'application/octet-stream')}
         FROM storage.drives d WHERE d.id = $1
       RETURNING id`,
      [world.driveId, `f-${hash.slice(0, 8)}-${i}`, hash, bytes.length],
    );
    fileIds.push(rows[0].id);
  }
  return { hash, bytes, fileIds };
}

let server: S3rverProcess;
let workers: Blake3WorkerPool;

beforeAll(async () => {
  server = await startS3rver();
  workers = new Blake3WorkerPool({ size: 2 });
}, 60_000);
afterAll(async () => {
  await workers?.close();
  await server?.stop();
});

async function readAll(storage: BlobStorage, hash: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await storage.get(hash)) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

let seq = 0;
function finding(kind: string, resourceId: string): RepairFinding {
  seq += 1;
  return {
    id: `f-${seq}`,
    checkName: kind === 'missing_blob' ? 'files_consistency' : 'storage_consistency',
    kind,
    resourceId,
    lastSeenRunId: null,
    detail: {},
  };
}

function asAction(line: RepairLine): ActionLine {
  if (line.type !== 'action') throw new Error(`expected an action line, got: ${JSON.stringify(line)}`);
  return line;
}

describe.each([
  { sourceName: 'local', otherName: 's3' },
  { sourceName: 's3', otherName: 'local' },
] as const)('restore bytes: the server serves from $sourceName, the copy is on $otherName', ({
  sourceName,
  otherName,
}) => {
  let db: TestDatabase;
  let root: string;
  let s3: S3BlobStorage;
  let source: BlobStorage;
  let other: BlobStorage;
  let actions: RepairActions;
  let h: ConsistencyHarness;
  let check: ConsistencyCheck;
  let plans: PgRepairPlans;
  let store: OxiRepairStore;
  let engine: RecoverableEngine;
  let user: string;
  let drive: string;

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    root = await mkdtemp(join(tmpdir(), 'oxicloud-restore-'));
    const local = new LocalFsBlobStorage({ root });
    s3 = new S3BlobStorage({
      bucket: server.bucket,
      region: 'us-east-1',
      endpoint: server.endpoint,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
      prefix: `restore-from-${otherName}/blobs/`,
    });
    source = sourceName === 'local' ? local : s3;
    other = sourceName === 'local' ? s3 : local;
    const sourceHasher = createBlobHasher(source, workers);
    store = new OxiRepairStore(storageDb(db.pool));
    plans = new PgRepairPlans({ pool: db.pool });
    // Wired as the server wires them: both blob action families know the other backend.
    const copy = { blobs: other, hasher: createBlobHasher(other, workers) };
    actions = createRepairActions({
      store,
      blobs: { blobs: source, hasher: sourceHasher, other: copy },
      restore: { source, sourceHasher, other: copy },
    });
    h = consistencyHarness(db.pool);
    check = createStorageConsistencyCheck({
      blobs: source,
      index: new OxiBlobIndexScan(storageDb(db.pool)),
      hasher: sourceHasher,
    });
    engine = new RecoverableEngine({ pool: db.pool });
    engine.register(createRepairJob({ plans, actions, store, blobs: source }));
    user = await insertUser(db.pool, `owner-${sourceName}`);
    drive = await insertDrive(db.pool, user, 'main');
  }, 60_000);
  afterAll(async () => {
    await h?.engine.shutdown({ timeoutMs: 1000 }).catch(() => undefined);
    await engine?.shutdown({ timeoutMs: 1000 }).catch(() => undefined);
    s3?.close();
    await db?.drop();
    await rm(root, { recursive: true, force: true });
  });

  /** A blob on the source with its row and `files` files, and the same bytes on the other backend. */
  async function copied(files = 1): Promise<TestBlob> {
    const blob = await putBlob(db.pool, { driveId: drive, storage: source }, { files });
    await other.put(blob.hash, blob.bytes, blob.bytes.length);
    return blob;
  }

  /** The open findings of storage_consistency for these hashes: `kind hash`. */
  async function openFindings(hashes: readonly string[]) {
    const { rows } = await db.pool.query<{ id: string; kind: string; resource_id: string }>(
      `SELECT id, kind, resource_id FROM jobs.findings
        WHERE check_name = 'storage_consistency' AND state = 'open' AND resource_id = ANY($1)
        ORDER BY kind`,
      [hashes],
    );
    return rows;
  }

  it('finds lost and corrupt bytes, plans restores, applies them as a run with audit rows, and the check finds nothing after', async () => {
    const lost = await copied(2);
    const corrupt = await copied(1);
    // A sound object beside them: the store canary's proof that this store is the rows' own.
    await copied(1);
    await source.delete(lost.hash);
    const wrong = randomBytes(corrupt.bytes.length);
    await source.put(corrupt.hash, wrong, wrong.length);

    await h.run(check, { force: true, deep: true });
    const found = await openFindings([lost.hash, corrupt.hash]);
    expect(found.map((f) => `${f.kind} ${f.resource_id}`)).toEqual([
      `blob_hash_mismatch ${corrupt.hash}`,
      `missing_blob_bytes ${lost.hash}`,
    ]);

    const planner = createRepairPlanner({ actions, plans });
    const plan = await planner.plan({ selection: { findingIds: found.map((f) => f.id) }, actor: 'admin-1' });
    const byHash = new Map(plan.lines.map((l) => [l.fingerprint.resourceId, asAction(l)]));
    const lostLine = byHash.get(lost.hash) as ActionLine;
    const corruptLine = byHash.get(corrupt.hash) as ActionLine;
    expect(lostLine.action).toBe(`restore_bytes_from_${otherName}`);
    expect(lostLine.before).toMatchObject({
      row: { size: lost.bytes.length, ref_count: 2, deleting: false },
      referenced_by: 2,
      source: { backend: sourceName, size: null, hash: null },
      copy: { backend: otherName, size: lost.bytes.length, hash: lost.hash },
    });
    expect(lostLine.after).toEqual({
      source: { backend: sourceName, size: lost.bytes.length, hash: lost.hash },
    });
    expect(lostLine.summary).toContain(`bytes missing on ${sourceName} → restore`);
    expect(corruptLine.action).toBe(`restore_bytes_from_${otherName}`);
    expect(corruptLine.before).toMatchObject({
      source: { backend: sourceName, size: wrong.length, hash: expect.not.stringMatching(corrupt.hash) },
    });
    // Planning wrote nothing.
    expect(await source.exists(lost.hash)).toBe(false);
    expect((await readAll(source, corrupt.hash)).equals(wrong)).toBe(true);

    await plans.approve(plan.id, plan.hash, 'admin-2');
    const outcome = await engine.runOrResume(REPAIR_JOB_NAME, { params: { plan_id: plan.id } });
    expect(outcome).toMatchObject({ kind: 'ok', extra: { completed: true } });
    const run = await engine.latestRun(REPAIR_JOB_NAME);
    expect(run?.stats).toMatchObject({ applied_items: 2, skipped_items: 0, needs_person_items: 0 });

    expect((await readAll(source, lost.hash)).equals(lost.bytes)).toBe(true);
    expect((await readAll(source, corrupt.hash)).equals(corrupt.bytes)).toBe(true);
    // The copies are left as they were.
    expect((await readAll(other, lost.hash)).equals(lost.bytes)).toBe(true);

    const audit = await db.pool.query(
      'SELECT finding_id, approved_by, action, before, after FROM jobs.repair_audit WHERE plan_id = $1 ORDER BY position',
      [plan.id],
    );
    expect(audit.rows).toHaveLength(2);
    const lostAudit = audit.rows.find((r) => r.finding_id === lostLine.findingId);
    expect(lostAudit).toMatchObject({
      approved_by: 'admin-2',
      action: `restore_bytes_from_${otherName}`,
      before: { source: { size: null }, copy: { backend: otherName, hash: lost.hash } },
      after: {
        source: { backend: sourceName, size: lost.bytes.length, hash: lost.hash },
        restored_from: otherName,
      },
    });

    // Re-verification fixed both findings; a new deep check agrees.
    const stored = await planner.get(plan.id);
    expect(stored?.lines.map((l) => [l.status, l.verified])).toEqual([
      ['applied', 'passed'],
      ['applied', 'passed'],
    ]);
    const states = await db.pool.query<{ state: string }>(
      'SELECT state FROM jobs.findings WHERE id = ANY($1)',
      [found.map((f) => f.id)],
    );
    expect(states.rows.map((r) => r.state)).toEqual(['fixed', 'fixed']);
    const again = await h.run(check, { force: true, deep: true });
    expect(again.findings.filter((f) => [lost.hash, corrupt.hash].includes(f.resourceId))).toEqual([]);
  }, 60_000);

  it('a copy with other bytes under the key: needs a person with the files and owners, nothing written', async () => {
    const blob = await putBlob(db.pool, { driveId: drive, storage: source }, { files: 2 });
    const impostor = randomBytes(blob.bytes.length);
    await other.put(blob.hash, impostor, impostor.length);
    await source.delete(blob.hash);
    const line = await actions.plan(finding('missing_blob_bytes', blob.hash));
    expect(line.type).toBe('needs_person');
    if (line.type !== 'needs_person') return;
    expect(line.reason).toContain(`the ${sourceName} backend has no bytes for it`);
    expect(line.reason).toMatch(
      new RegExp(`the copy on the ${otherName} backend hashes to [0-9a-f]{64} .* not to the key`),
    );
    expect(line.affected.map((a) => [a['file_id'], a['owner_id'], a['owner']]).sort()).toEqual(
      blob.fileIds.map((id) => [id, user, `owner-${sourceName}`]).sort(),
    );
    expect(await source.exists(blob.hash)).toBe(false);
  });

  it('no copy on the other backend: needs a person saying so', async () => {
    const blob = await putBlob(db.pool, { driveId: drive, storage: source }, { files: 1 });
    const wrong = randomBytes(50);
    await source.put(blob.hash, wrong, wrong.length);
    const line = await actions.plan(finding('blob_hash_mismatch', blob.hash));
    expect(line).toMatchObject({
      type: 'needs_person',
      reason: expect.stringMatching(
        new RegExp(
          `bytes on the ${sourceName} backend hash to [0-9a-f]{64} \\(50 bytes\\).*the ${otherName} backend holds no copy`,
        ),
      ),
      affected: [expect.objectContaining({ file_id: blob.fileIds[0], owner_id: user })],
    });
  });

  it('the copy deleted between plan and apply: skipped with the reason, nothing written', async () => {
    const blob = await copied();
    await source.delete(blob.hash);
    const line = asAction(await actions.plan(finding('missing_blob_bytes', blob.hash)));
    await other.delete(blob.hash);
    const outcome = await actions.apply(line);
    expect(outcome).toMatchObject({
      status: 'skipped',
      reason: expect.stringMatching(
        new RegExp(`the copy on the ${otherName} backend is gone since the plan`),
      ),
    });
    expect(await source.exists(blob.hash)).toBe(false);
  });

  it('the copy replaced by other bytes between plan and apply: skipped, the corrupt bytes stay (never replaced by unverified ones)', async () => {
    const blob = await copied();
    const corrupt = randomBytes(blob.bytes.length);
    await source.put(blob.hash, corrupt, corrupt.length);
    const line = asAction(await actions.plan(finding('blob_hash_mismatch', blob.hash)));
    const impostor = randomBytes(blob.bytes.length);
    await other.put(blob.hash, impostor, impostor.length);
    const outcome = await actions.apply(line);
    expect(outcome).toMatchObject({
      status: 'skipped',
      reason: expect.stringMatching(/now hashes to [0-9a-f]{64} .* not to the key; nothing was written/),
    });
    expect((await readAll(source, blob.hash)).equals(corrupt)).toBe(true);
  });

  it('the source changed between plan and apply (other bytes appeared): skipped, naming what changed', async () => {
    const blob = await copied();
    await source.delete(blob.hash);
    const line = asAction(await actions.plan(finding('missing_blob_bytes', blob.hash)));
    const wrong = randomBytes(blob.bytes.length);
    await source.put(blob.hash, wrong, wrong.length);
    const outcome = await actions.apply(line);
    expect(outcome).toMatchObject({
      status: 'skipped',
      reason: expect.stringMatching(/changed since the plan \(source: planned .*"size":null/),
    });
    expect((await readAll(source, blob.hash)).equals(wrong)).toBe(true);
  });

  it('a replay after the copy landed (the bytes already hash to the key): applied without copying again', async () => {
    const blob = await copied();
    await source.delete(blob.hash);
    const line = asAction(await actions.plan(finding('missing_blob_bytes', blob.hash)));
    // The earlier attempt copied the bytes, then its transaction was killed.
    await source.put(blob.hash, blob.bytes, blob.bytes.length);
    await other.delete(blob.hash); // nothing is copied again
    expect(await actions.apply(line)).toMatchObject({
      status: 'applied',
      after: {
        source: { size: blob.bytes.length, hash: blob.hash },
        note: expect.stringMatching(/already hashed to the key/),
      },
    });
    expect(await actions.verify(line)).toBeNull();
  });

  it('a replay of restore_bytes_and_row after the copy landed: inserts the row instead of skipping for good', async () => {
    const blob = await copied(2);
    await db.pool.query('DELETE FROM storage.blobs WHERE hash = $1', [blob.hash]);
    await source.delete(blob.hash);
    const size = blob.bytes.length;
    const line = asAction(await actions.plan(finding('missing_blob', blob.hash)));
    expect(line.action).toBe(`restore_bytes_and_row_from_${otherName}`);
    await source.put(blob.hash, blob.bytes, size); // the earlier attempt's copy, its row rolled back
    await other.delete(blob.hash);
    expect(await actions.apply(line)).toMatchObject({
      status: 'applied',
      after: { reserve: 'created', row: { size, ref_count: 2 }, note: expect.stringMatching(/already/) },
    });
    const row = await db.pool.query('SELECT size, ref_count FROM storage.blobs WHERE hash = $1', [blob.hash]);
    expect(row.rows).toEqual([{ size: String(size), ref_count: 2 }]);
    expect(await actions.verify(line)).toBeNull();
  });

  it('a replay of restore_bytes_and_row finding other bytes of the same size: skipped, no row', async () => {
    const blob = await copied(1);
    await db.pool.query('DELETE FROM storage.blobs WHERE hash = $1', [blob.hash]);
    await source.delete(blob.hash);
    const line = asAction(await actions.plan(finding('missing_blob', blob.hash)));
    const impostor = randomBytes(blob.bytes.length);
    await source.put(blob.hash, impostor, impostor.length);
    expect(await actions.apply(line)).toMatchObject({
      status: 'skipped',
      reason: expect.stringMatching(/changed since the plan \(bytes_size/),
    });
    const row = await db.pool.query('SELECT 1 FROM storage.blobs WHERE hash = $1', [blob.hash]);
    expect(row.rowCount).toBe(0);
  });
  it('missing_blob with the bytes lost too: the verified copy comes back first, then the row through reserve with the real ref_count', async () => {
    const blob = await copied(2);
    await db.pool.query('DELETE FROM storage.blobs WHERE hash = $1', [blob.hash]);
    await source.delete(blob.hash);
    const size = blob.bytes.length;
    const line = asAction(await actions.plan(finding('missing_blob', blob.hash)));
    expect(line.action).toBe(`restore_bytes_and_row_from_${otherName}`);
    expect(line.before).toEqual({
      row: null,
      referenced_by: 2,
      bytes_size: null,
      copy: { backend: otherName, size, hash: blob.hash },
    });
    expect(line.after).toEqual({ row: { size, ref_count: 2, deleting: false }, bytes_size: size });
    expect(await source.exists(blob.hash)).toBe(false); // planning wrote nothing
    expect(await actions.apply(line)).toMatchObject({
      status: 'applied',
      after: { reserve: 'created', restored_from: otherName, row: { size, ref_count: 2 } },
    });
    expect((await readAll(source, blob.hash)).equals(blob.bytes)).toBe(true);
    const row = await db.pool.query(
      'SELECT size, ref_count, orphaned_at FROM storage.blobs WHERE hash = $1',
      [blob.hash],
    );
    expect(row.rows).toEqual([{ size: String(size), ref_count: 2, orphaned_at: null }]);
    expect(await actions.verify(line)).toBeNull();
  });

  it('missing_blob with no bytes anywhere: needs a person, listing the files and owners', async () => {
    const blob = await putBlob(db.pool, { driveId: drive, storage: source }, { files: 1 });
    await db.pool.query('DELETE FROM storage.blobs WHERE hash = $1', [blob.hash]);
    await source.delete(blob.hash);
    expect(await actions.plan(finding('missing_blob', blob.hash))).toMatchObject({
      type: 'needs_person',
      reason: expect.stringMatching(
        new RegExp(
          `no bytes for this hash on the ${sourceName} backend .* the ${otherName} backend holds no copy either`,
        ),
      ),
      affected: [expect.objectContaining({ file_id: blob.fileIds[0], owner: `owner-${sourceName}` })],
    });
  });
});

describe('restore bytes without another backend', () => {
  let db: TestDatabase;
  let root: string;

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    root = await mkdtemp(join(tmpdir(), 'oxicloud-restore-alone-'));
  });
  afterAll(async () => {
    await db?.drop();
    await rm(root, { recursive: true, force: true });
  });

  it('needs a person: no other backend is configured to restore from', async () => {
    const source = new LocalFsBlobStorage({ root });
    const sourceHasher = createBlobHasher(source, workers);
    const actions = createRepairActions({
      store: new OxiRepairStore(storageDb(db.pool)),
      restore: { source, sourceHasher, other: null },
    });
    const user = await insertUser(db.pool, 'alone');
    const drive = await insertDrive(db.pool, user, 'main');
    const blob = await putBlob(db.pool, { driveId: drive, storage: source }, { files: 1 });
    await source.delete(blob.hash);
    expect(actions.kinds).toEqual(expect.arrayContaining(['blob_hash_mismatch', 'missing_blob_bytes']));
    expect(await actions.plan(finding('missing_blob_bytes', blob.hash))).toMatchObject({
      type: 'needs_person',
      reason: expect.stringMatching(/no other backend is configured to restore from/),
    });
  });
});
