import { randomBytes } from 'node:crypto';
import type { StoredFinding } from '@oxicloud/consistency';
import { PgBlobRowScan } from '@oxicloud/storage';
import { BLOBS_CONSISTENCY_CHECK_NAME, ORPHANED_AT_MISMATCH, REF_COUNT_MISMATCH } from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ConsistencyHarness, consistencyHarness } from './consistency-fixtures.js';

let db: TestDatabase;
let h: ConsistencyHarness;
let driveId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  h = consistencyHarness(db.pool);
  const { rows: users } = await db.pool.query(
    "INSERT INTO auth.users (username) VALUES ('blob-rows') RETURNING id",
  );
  const { rows: drives } = await db.pool.query(
    "INSERT INTO storage.drives (owner_id, name) VALUES ($1, 'main') RETURNING id",
    [users[0].id],
  );
  driveId = drives[0].id;
});
afterAll(async () => {
  await h?.engine.shutdown({ timeoutMs: 1000 }).catch(() => undefined);
  await db?.drop();
});
beforeEach(async () => {
  await db.pool.query('DELETE FROM storage.files; DELETE FROM storage.blobs');
});

const check = () => new PgBlobRowScan(h.db).consistencyChecks()[0]!;
const kinds = (findings: readonly StoredFinding[]) =>
  findings.map((f) => `${f.kind} ${f.severity} ${f.resourceId}`).sort();

/** A blob row two days old with `files` files referencing it (the triggers keep ref_count and orphaned_at). */
async function blob(
  files: number,
  createdAgo = "interval '2 days'",
): Promise<{ hash: string; fileIds: string[] }> {
  const hash = randomBytes(32).toString('hex');
  await db.pool.query(
    `INSERT INTO storage.blobs (hash, size, content_type, created_at) VALUES ($1, 100, 'text/plain', now() - ${createdAgo})`,
    [hash],
  );
  const fileIds: string[] = [];
  for (let i = 0; i < files; i++) {
    const { rows } = await db.pool.query(
      `INSERT INTO storage.files (drive_id, name, blob_hash, size, mime_type, created_at)
       VALUES ($1, $2, $3, 100, 'text/plain', now() - interval '2 days') RETURNING id`,
      [driveId, `f-${hash.slice(0, 8)}-${i}`, hash],
    );
    fileIds.push(rows[0].id);
  }
  return { hash, fileIds };
}

describe('blobs_consistency: storage.blobs rows against the files referencing them', () => {
  it('is the check of the blob rows under its job name, with a 1 h grace', () => {
    const c = check();
    expect(c.name).toBe(BLOBS_CONSISTENCY_CHECK_NAME);
    expect(c.name).toBe('blobs_consistency');
    expect(c.subsystem).toBe('blob_rows');
    expect(c.graceWindowMs({ force: false, deep: false })).toBe(3_600_000);
  });

  it('clean rows (referenced, and unreferenced but marked) → completed, no findings, every row scanned', async () => {
    for (let i = 0; i < 5; i++) await blob(i % 3);
    const run = await h.run(check(), { batch_size: 2 });
    expect(run.status).toBe('Completed');
    expect(run.findings).toEqual([]);
    expect(run.stats['scanned_count']).toBe(5);
  });

  it('ref_count lowered to 0 by hand under a live file, orphaned_at backdated → one ref_count_mismatch; a wrong orphaned_at alone → one orphaned_at_mismatch', async () => {
    for (let i = 0; i < 4; i++) await blob(1 + (i % 2));
    const lowered = await blob(1);
    await db.pool.query(
      `UPDATE storage.blobs SET ref_count = 0, orphaned_at = now() - interval '30 days' WHERE hash = $1`,
      [lowered.hash],
    );
    const markedWhileReferenced = await blob(2);
    await db.pool.query(`UPDATE storage.blobs SET orphaned_at = now() - interval '30 days' WHERE hash = $1`, [
      markedWhileReferenced.hash,
    ]);
    const neverMarked = await blob(0);
    await db.pool.query('UPDATE storage.blobs SET orphaned_at = NULL WHERE hash = $1', [neverMarked.hash]);

    const run = await h.run(check(), { batch_size: 3 });
    expect(run.status).toBe('Completed');
    expect(kinds(run.findings)).toEqual(
      [
        `${REF_COUNT_MISMATCH} Drift ${lowered.hash}`,
        `${ORPHANED_AT_MISMATCH} Drift ${markedWhileReferenced.hash}`,
        `${ORPHANED_AT_MISMATCH} Drift ${neverMarked.hash}`,
      ].sort(),
    );
    const byHash = new Map(run.findings.map((f) => [f.resourceId, f]));
    expect(byHash.get(lowered.hash)?.detail).toMatchObject({ ref_count: 0, file_count: 1, delta: -1 });
    expect(byHash.get(lowered.hash)?.detail['orphaned_at']).not.toBeNull();
    expect(byHash.get(markedWhileReferenced.hash)?.detail).toMatchObject({
      ref_count: 2,
      reason: 'set_while_referenced',
    });
    expect(byHash.get(neverMarked.hash)?.detail).toMatchObject({
      ref_count: 0,
      orphaned_at: null,
      reason: 'unreferenced_never_marked',
    });
    expect(run.outcome).toMatchObject({ kind: 'ok', count: 3 });

    // A second run finds the same three, once each.
    const again = await h.run(check(), { batch_size: 3 });
    expect(kinds(again.findings)).toEqual(kinds(run.findings));
  });

  it('a counter left too high (files deleted with the trigger off) → ref_count_mismatch with a positive delta', async () => {
    const high = await blob(1);
    await db.pool.query('UPDATE storage.blobs SET ref_count = 3 WHERE hash = $1', [high.hash]);
    const run = await h.run(check());
    expect(kinds(run.findings)).toEqual([`${REF_COUNT_MISMATCH} Drift ${high.hash}`]);
    expect(run.findings[0]?.detail).toMatchObject({ ref_count: 3, file_count: 1, delta: 2 });
  });

  it('a row younger than the grace is skipped unless force', async () => {
    const young = await blob(1, "interval '5 minutes'");
    await db.pool.query('UPDATE storage.blobs SET ref_count = 0 WHERE hash = $1', [young.hash]);
    expect((await h.run(check())).findings).toEqual([]);
    const forced = await h.run(check(), { force: true });
    expect(kinds(forced.findings)).toEqual([`${REF_COUNT_MISMATCH} Drift ${young.hash}`]);
  });

  it('a mismatch healed between two runs drops nothing wrongly and records nothing stale', async () => {
    const healed = await blob(1);
    await db.pool.query('UPDATE storage.blobs SET ref_count = 0 WHERE hash = $1', [healed.hash]);
    expect(kinds((await h.run(check())).findings)).toEqual([`${REF_COUNT_MISMATCH} Drift ${healed.hash}`]);
    await db.pool.query('UPDATE storage.blobs SET ref_count = 1, orphaned_at = NULL WHERE hash = $1', [
      healed.hash,
    ]);
    expect((await h.run(check())).findings).toEqual([]);
  });
});
