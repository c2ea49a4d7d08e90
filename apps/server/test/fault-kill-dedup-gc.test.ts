import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { blake3Hex, categoryOrderFor, LocalFsBlobStorage } from '@oxicloud/storage';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminToken,
  type CliProcess,
  freePort,
  killHard,
  scratchDir,
  serverEnv,
  serverStorageRoot,
  sleep,
  startServer,
} from './fault-support.js';

/** Kills of the server process during dedup_gc runs (issue 11: 10 random moments). */
const KILLS = Number(process.env['OXICLOUD_FAULT_KILLS'] ?? 10);
/** Orphans kept available for each run, so every run spans many GC batches. */
const ORPHANS = 1500;
const LIVE_BLOBS = 60;

/**
 * Issue 11 on OxiCloud's domain: a real `oxijobs serve` process runs
 * `dedup_gc` (small batches) over 1,500 orphan blob rows (legacy whole-file
 * blobs at `ref_count` 0, past the grace) while the test, from another
 * connection, adopts orphans the way OxiCloud's upload does (the bytes first,
 * "already exists" taken as identical; then the blob row upserted +1 with
 * `orphaned_at` cleared; then the file row), and is killed with SIGKILL at
 * random moments of the run, 10 times. After every kill no byte is lost: each
 * file's bytes are under `.blobs` or in the engine's quarantine (where the
 * next run restores them from); after a final uninterrupted run every file's
 * bytes are under `.blobs` again, hashing to its `blob_hash`, no orphan row
 * is left, and every row's count is its files.
 */
describe('kill -9 of the server during dedup_gc', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof scratchDir>;
  let storage: LocalFsBlobStorage;
  let server: CliProcess | undefined;
  let userId: string;
  let driveId: string;
  let rootFolderId: string;
  let serial = 0;
  /** The plaintext of every blob the test made, by hash (what an upload would write again). */
  const contents = new Map<string, Uint8Array>();

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    dir = scratchDir('fault-kill-gc');
    storage = new LocalFsBlobStorage({ root: serverStorageRoot(dir.path) });
    const user = await db.pool.query<{ id: string }>(
      "INSERT INTO auth.users (username, email, role) VALUES ('gc-owner', 'gc-owner@example.test', 'user') RETURNING id",
    );
    userId = user.rows[0]!.id;
    // OxiCloud's four writes of a personal drive, in one transaction (the root check is deferred to COMMIT).
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      const d = await client.query<{ id: string }>(
        "INSERT INTO storage.drives (kind, default_for_user) VALUES ('personal', $1) RETURNING id",
        [userId],
      );
      driveId = d.rows[0]!.id;
      const root = await client.query<{ id: string }>(
        "INSERT INTO storage.folders (name, parent_id, drive_id, created_by, updated_by) VALUES ('Personal', NULL, $1, $2, $2) RETURNING id",
        [driveId, userId],
      );
      rootFolderId = root.rows[0]!.id;
      await client.query('UPDATE storage.drives SET root_folder_id = $1 WHERE id = $2', [
        rootFolderId,
        driveId,
      ]);
      await client.query(
        `INSERT INTO storage.role_grants (subject_type, subject_id, resource_type, resource_id, role, granted_by)
         VALUES ('user', $1, 'drive', $2, 'owner', $1)`,
        [userId, driveId],
      );
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    for (let i = 0; i < LIVE_BLOBS; i++) {
      const blob = await addBlob(`live ${i}`, 2);
      await insertFile(`live-${i}-a`, blob.hash, blob.size);
      await insertFile(`live-${i}-b`, blob.hash, blob.size);
    }
  }, 120_000);

  afterAll(async () => {
    if (server) await killHard(server);
    await db?.drop();
    dir?.remove();
  });

  /** A legacy blob row with its bytes: `refCount` files' worth, or an orphan past the grace at 0. */
  async function addBlob(content: string, refCount: number): Promise<{ hash: string; size: number }> {
    const bytes = new TextEncoder().encode(content);
    const hash = blake3Hex(bytes);
    contents.set(hash, bytes);
    await storage.put(hash, bytes, bytes.byteLength);
    await db.pool.query(
      `INSERT INTO storage.blobs (hash, size, ref_count, content_type, orphaned_at)
       VALUES ($1, $2, $3, 'application/octet-stream', CASE WHEN $3 = 0 THEN now() - interval '2 hours' END)`,
      [hash, bytes.byteLength, refCount],
    );
    return { hash, size: bytes.byteLength };
  }

  async function insertFile(
    name: string,
    hash: string,
    size: number,
    pool: pg.Pool = db.pool,
  ): Promise<void> {
    await pool.query(
      `INSERT INTO storage.files (name, folder_id, blob_hash, size, mime_type, drive_id, created_by, updated_by,
                                  category_order)
       VALUES ($1, $2, $3, $4, 'application/octet-stream', $5, $6, $6, ${categoryOrderFor('f', 'application/octet-stream')})`,
      [name, rootFolderId, hash, size, driveId, userId],
    );
  }

  /** Tops the orphans up to {@link ORPHANS} (rows and bytes), one multi-row insert. */
  async function refillOrphans(): Promise<void> {
    const { rows } = await db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM storage.blobs WHERE ref_count = 0',
    );
    const missing = ORPHANS - rows[0]!.n;
    const hashes: string[] = [];
    const sizes: number[] = [];
    for (let i = 0; i < missing; i++) {
      const bytes = new TextEncoder().encode(`orphan ${serial++} ${'o'.repeat(serial % 50)}`);
      const hash = blake3Hex(bytes);
      contents.set(hash, bytes);
      await storage.put(hash, bytes, bytes.byteLength);
      hashes.push(hash);
      sizes.push(bytes.byteLength);
    }
    await db.pool.query(
      `INSERT INTO storage.blobs (hash, size, ref_count, content_type, orphaned_at)
       SELECT h, s, 0, 'application/octet-stream', now() - interval '2 hours'
         FROM unnest($1::text[], $2::bigint[]) AS t(h, s) ON CONFLICT DO NOTHING`,
      [hashes, sizes],
    );
  }

  async function countBlobs(): Promise<number> {
    const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM storage.blobs');
    return rows[0]!.n;
  }

  const quarantined = (hash: string) =>
    existsSync(join(serverStorageRoot(dir.path), '.oxijobs-quarantine', hash.slice(0, 2), `${hash}.blob`));

  /**
   * Every file has its blob row, and its bytes under `.blobs` (or, with
   * `orQuarantined`, in the quarantine, from where the next run restores
   * them); returns how many distinct blobs files reference.
   */
  async function expectNoFileLosesBytes(when: string, orQuarantined: boolean): Promise<number> {
    const { rows } = await db.pool.query<{ blob_hash: string; has_row: boolean }>(
      `SELECT DISTINCT f.blob_hash, b.hash IS NOT NULL AS has_row
         FROM storage.files f LEFT JOIN storage.blobs b ON b.hash = f.blob_hash`,
    );
    const broken: string[] = [];
    for (const r of rows) {
      if (!r.has_row) broken.push(`${r.blob_hash}: no row`);
      else if (await storage.exists(r.blob_hash)) continue;
      else if (!(orQuarantined && quarantined(r.blob_hash))) broken.push(`${r.blob_hash}: no bytes`);
    }
    expect(broken, when).toEqual([]);
    return rows.length;
  }

  /** Adopts random orphans in OxiCloud's upload order until `stop()` says so; returns the files written. */
  async function uploadWhile(stop: () => boolean): Promise<number> {
    let uploaded = 0;
    while (!stop()) {
      const { rows } = await db.pool.query<{ hash: string; size: string }>(
        'SELECT hash, size::text FROM storage.blobs WHERE ref_count = 0 AND hash > $1 ORDER BY hash LIMIT 1',
        [
          Math.floor(Math.random() * 0xffffffff)
            .toString(16)
            .padStart(8, '0'),
        ],
      );
      const row = rows[0];
      if (row !== undefined) {
        const bytes = contents.get(row.hash)!;
        // 1. The bytes, at their final path; an object that exists is taken as identical.
        if (!(await storage.exists(row.hash))) await storage.put(row.hash, bytes, bytes.byteLength);
        // 2. The blob row: +1, orphaned_at cleared (a new row if the GC deleted it meanwhile).
        await db.pool.query(
          `INSERT INTO storage.blobs (hash, size, ref_count, content_type) VALUES ($1, $2, 1, 'application/octet-stream')
           ON CONFLICT (hash) DO UPDATE SET ref_count = storage.blobs.ref_count + 1, orphaned_at = NULL`,
          [row.hash, bytes.byteLength],
        );
        // 3. The file row.
        await insertFile(`racer-${serial++}`, row.hash, bytes.byteLength);
        uploaded += 1;
      }
      await sleep(5);
    }
    return uploaded;
  }

  it(`${KILLS} kills at random moments of a GC run, then a full run: no file loses its bytes`, async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = serverEnv({
      databaseUrl: db.url,
      dataDir: dir.path,
      httpPort: port,
      extra: { OXICLOUD_DEDUP_GC_BATCH_SIZE: '5' },
    });
    server = await startServer(env);
    const token = await adminToken(db.pool, { username: 'admin' });
    const trigger = async (query: string) => {
      const res = await fetch(`${base}/api/admin/jobs/dedup_gc/trigger?${query}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      });
      const body = (await res.json()) as Record<string, unknown>;
      return { status: res.status, body };
    };
    let uploaded = 0;

    for (let kill = 0; kill < KILLS; kill++) {
      await refillOrphans();
      const accepted = await trigger(`wait=false${kill % 2 === 0 ? '&force=true' : ''}`);
      expect(accepted.status).toBe(202);
      let stopped = false;
      const racer = uploadWhile(() => stopped);
      // Kill at a random moment of the run itself: once GC has started collecting.
      const before = await countBlobs();
      const deadline = Date.now() + 20_000;
      while ((await countBlobs()) >= before && Date.now() < deadline) await sleep(5);
      await sleep(Math.floor(Math.random() * 300));
      await killHard(server);
      stopped = true;
      uploaded += await racer;
      // Right after the crash, before any recovery: no byte of a file is gone (at worst it waits in the quarantine).
      await expectNoFileLosesBytes(`after kill ${kill + 1}`, true);
      server = await startServer(env);
    }

    // Another run, uninterrupted: it restores what files want from the quarantine and collects the rest.
    const final = await trigger('force=true');
    expect(final.status, JSON.stringify(final.body)).toBe(200);
    const outcome = final.body['outcome'] as { kind: string; extra: Record<string, number> };
    expect(outcome.kind, JSON.stringify(outcome)).toBe('ok');

    const referenced = await expectNoFileLosesBytes('after the final run', false);
    expect(referenced).toBeGreaterThanOrEqual(LIVE_BLOBS);
    // Every file's bytes are its content.
    const { rows: files } = await db.pool.query<{ blob_hash: string }>(
      'SELECT DISTINCT blob_hash FROM storage.files',
    );
    for (const { blob_hash } of files) {
      const chunks: Uint8Array[] = [];
      for await (const chunk of await storage.get(blob_hash)) chunks.push(chunk);
      expect(blake3Hex(Buffer.concat(chunks)), blob_hash).toBe(blob_hash);
    }
    const orphans = await db.pool.query('SELECT hash FROM storage.blobs WHERE ref_count = 0');
    expect(orphans.rows).toEqual([]);
    const drift = await db.pool.query(
      `SELECT b.hash FROM storage.blobs b
        WHERE b.ref_count <> (SELECT count(*) FROM storage.files f WHERE f.blob_hash = b.hash)`,
    );
    expect(drift.rows).toEqual([]);
    // The race ran.
    expect(uploaded).toBeGreaterThan(0);
  }, 300_000);
});
