import { blake3Hex, LocalFsBlobStorage } from '@oxicloud/storage';
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
 * Issue 11: a real `oxijobs serve` process runs `dedup_gc` (small batches)
 * over 1,500 orphan blobs while the test inserts files referencing orphans
 * from another connection, and is killed with SIGKILL at random moments of
 * the run, 10 times. After every kill, and after a final uninterrupted run:
 * no file is left without its blob row and bytes; after the final run, no
 * row is left marked as being deleted.
 */
describe('kill -9 of the server during dedup_gc', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof scratchDir>;
  let storage: LocalFsBlobStorage;
  let server: CliProcess | undefined;
  let drive: string;
  let serial = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = scratchDir('fault-kill-gc');
    storage = new LocalFsBlobStorage({ root: serverStorageRoot(dir.path) });
    const user = await db.pool.query<{ id: string }>(
      "INSERT INTO auth.users (username) VALUES ('gc-owner') RETURNING id",
    );
    const d = await db.pool.query<{ id: string }>(
      "INSERT INTO storage.drives (owner_id, name) VALUES ($1, 'main') RETURNING id",
      [user.rows[0]!.id],
    );
    drive = d.rows[0]!.id;
    for (let i = 0; i < LIVE_BLOBS; i++) {
      const blob = await addBlob(db.pool, `live ${i}`, false);
      await db.pool.query(
        'INSERT INTO storage.files (drive_id, name, blob_hash, size) VALUES ($1, $2, $3, $4), ($1, $5, $3, $4)',
        [drive, `live-${i}-a`, blob.hash, blob.size, `live-${i}-b`],
      );
    }
  }, 120_000);

  afterAll(async () => {
    if (server) await killHard(server);
    await db?.drop();
    dir?.remove();
  });

  /** A blob row with its bytes; an orphan past the grace when `orphan`. */
  async function addBlob(
    pool: pg.Pool,
    content: string,
    orphan: boolean,
  ): Promise<{ hash: string; size: number }> {
    const bytes = new TextEncoder().encode(content);
    const hash = blake3Hex(bytes);
    await storage.put(hash, bytes, bytes.byteLength);
    await pool.query(
      `INSERT INTO storage.blobs (hash, size, orphaned_at) VALUES ($1, $2, CASE WHEN $3 THEN now() - interval '2 hours' END)`,
      [hash, bytes.byteLength, orphan],
    );
    return { hash, size: bytes.byteLength };
  }

  /** Tops the orphans up to {@link ORPHANS} (rows and bytes), one multi-row insert. */
  async function refillOrphans(): Promise<void> {
    const { rows } = await db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM storage.blobs WHERE ref_count = 0 AND deleting_at IS NULL',
    );
    const missing = ORPHANS - rows[0]!.n;
    const hashes: string[] = [];
    const sizes: number[] = [];
    for (let i = 0; i < missing; i++) {
      const bytes = new TextEncoder().encode(`orphan ${serial++} ${'o'.repeat(serial % 50)}`);
      const hash = blake3Hex(bytes);
      await storage.put(hash, bytes, bytes.byteLength);
      hashes.push(hash);
      sizes.push(bytes.byteLength);
    }
    await db.pool.query(
      `INSERT INTO storage.blobs (hash, size, orphaned_at)
       SELECT * , now() - interval '2 hours' FROM unnest($1::text[], $2::bigint[]) ON CONFLICT DO NOTHING`,
      [hashes, sizes],
    );
  }

  async function countBlobs(): Promise<number> {
    const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM storage.blobs');
    return rows[0]!.n;
  }

  /** Every file has an unmarked blob row and bytes; returns how many distinct blobs files reference. */
  async function expectNoLiveFileWithoutBytes(when: string): Promise<number> {
    const { rows } = await db.pool.query<{ blob_hash: string; has_row: boolean; marked: boolean }>(
      `SELECT DISTINCT f.blob_hash, b.hash IS NOT NULL AS has_row, b.deleting_at IS NOT NULL AS marked
         FROM storage.files f LEFT JOIN storage.blobs b ON b.hash = f.blob_hash`,
    );
    const broken: string[] = [];
    for (const r of rows) {
      if (!r.has_row) broken.push(`${r.blob_hash}: no row`);
      else if (r.marked) broken.push(`${r.blob_hash}: marked`);
      else if (!(await storage.exists(r.blob_hash))) broken.push(`${r.blob_hash}: no bytes`);
    }
    expect(broken, when).toEqual([]);
    return rows.length;
  }

  /** Inserts files referencing random orphans until `stop()` says so (plain INSERTs; refusals are expected). */
  async function insertWhile(stop: () => boolean): Promise<{ inserted: number; refused: number }> {
    let inserted = 0;
    let refused = 0;
    while (!stop()) {
      try {
        const result = await db.pool.query(
          `INSERT INTO storage.files (drive_id, name, blob_hash, size)
           SELECT $1, $2, b.hash, b.size FROM storage.blobs b
            WHERE b.ref_count = 0 AND b.hash > $3 ORDER BY b.hash LIMIT 1`,
          [
            drive,
            `racer-${serial++}`,
            Math.floor(Math.random() * 0xffffffff)
              .toString(16)
              .padStart(8, '0'),
          ],
        );
        inserted += result.rowCount ?? 0;
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code === undefined) break; // the pool itself failed
        expect(['OXB01', 'OXB02']).toContain(code);
        refused += 1;
      }
      await sleep(5);
    }
    return { inserted, refused };
  }

  it(`${KILLS} kills at random moments of a GC run, then a full run: no live file without bytes, no row left marked`, async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = serverEnv({
      domain: 'engine',
      databaseUrl: db.url,
      dataDir: dir.path,
      httpPort: port,
      extra: { OXICLOUD_DEDUP_GC_BATCH_SIZE: '5' },
    });
    server = await startServer(env);
    const token = await adminToken(db.pool);
    const trigger = async (query: string) => {
      const res = await fetch(`${base}/api/admin/jobs/dedup_gc/trigger?${query}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      });
      const body = (await res.json()) as Record<string, unknown>;
      return { status: res.status, body };
    };
    let markedAfterKills = 0;
    let markedAtLastKill = 0;
    let raced = { inserted: 0, refused: 0 };

    for (let kill = 0; kill < KILLS; kill++) {
      await refillOrphans();
      const accepted = await trigger(`wait=false${kill % 2 === 0 ? '&force=true' : ''}`);
      expect(accepted.status).toBe(202);
      let stopped = false;
      const racer = insertWhile(() => stopped);
      // Kill at a random moment of the run itself: once GC has started deleting.
      const before = await countBlobs();
      const deadline = Date.now() + 20_000;
      while ((await countBlobs()) >= before && Date.now() < deadline) await sleep(5);
      await sleep(Math.floor(Math.random() * 300));
      await killHard(server);
      stopped = true;
      const r = await racer;
      raced = { inserted: raced.inserted + r.inserted, refused: raced.refused + r.refused };
      // Right after the crash, before any recovery: nothing live has lost its bytes.
      await expectNoLiveFileWithoutBytes(`after kill ${kill + 1}`);
      const marked = await db.pool.query(
        'SELECT count(*)::int AS n FROM storage.blobs WHERE deleting_at IS NOT NULL',
      );
      markedAtLastKill = (marked.rows[0] as { n: number }).n;
      markedAfterKills += markedAtLastKill;
      server = await startServer(env);
    }

    // Another run, uninterrupted: it finishes the rows the kills left marked and collects the rest.
    const final = await trigger('force=true');
    expect(final.status, JSON.stringify(final.body)).toBe(200);
    const outcome = final.body['outcome'] as { kind: string; extra: Record<string, number> };
    expect(outcome.kind, JSON.stringify(outcome)).toBe('ok');
    // The rows the last kill left marked are finished first (the earlier ones by the runs in between).
    expect(outcome.extra['resumed']).toBe(markedAtLastKill);

    const referenced = await expectNoLiveFileWithoutBytes('after the final run');
    expect(referenced).toBeGreaterThanOrEqual(LIVE_BLOBS);
    const left = await db.pool.query('SELECT hash FROM storage.blobs WHERE deleting_at IS NOT NULL');
    expect(left.rows).toEqual([]);
    const orphans = await db.pool.query('SELECT hash FROM storage.blobs WHERE ref_count = 0');
    expect(orphans.rows).toEqual([]);
    // Every remaining row has its bytes, and its ref_count is its files.
    const drift = await db.pool.query(
      `SELECT b.hash FROM storage.blobs b
        WHERE b.ref_count <> (SELECT count(*) FROM storage.files f WHERE f.blob_hash = b.hash)`,
    );
    expect(drift.rows).toEqual([]);
    // The kills did hit mid-run at least once (rows left marked), and the race ran.
    expect(markedAfterKills + raced.refused).toBeGreaterThan(0);
    expect(raced.inserted).toBeGreaterThan(0);
  }, 300_000);
});
