import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EmailMessage, JobAlerts } from '@oxicloud/alerts';
import { checkJob, PgFindingLedger, PgFindingStore } from '@oxicloud/consistency';
import { generateOxiCloudDataset, type OxiCloudDatasetReport } from '@oxicloud/dataset';
import { RecoverableEngine } from '@oxicloud/recoverable';
import type { Logger } from '@oxicloud/scheduler';
import { LocalFsBlobStorage } from '@oxicloud/storage';
import { type OxiCloudDatabase, OxiFileContentScan } from '@oxicloud/storage/oxicloud';
import { createFilesConsistencyCheck } from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The server's own findings mail ("a run finished: mail what it changed"), from its source. The closing
// before it is checkJob's own (its afterTerminal step): nothing here closes a run.
import { mailFindingChanges } from '../../../apps/server/src/findings/mail-finding-changes.js';
import { OXI_SMALL } from './oxicloud-domain-fixtures.js';

/**
 * Issue 18's "done when", on real Postgres and a generated OxiCloud dataset
 * (OxiCloud's domain, files_consistency on OxiFileContentScan): findings
 * live across runs (new, still open, fixed, reopened, accepted, worse), the
 * mail of a run lists only what changed, and a cancelled run closes nothing.
 */
describe('findings across runs on a seeded dataset', () => {
  let db: TestDatabase;
  let blobRoot: string;
  let report: OxiCloudDatasetReport;
  let engine: RecoverableEngine;
  let ledger: PgFindingLedger;
  const mails: EmailMessage[] = [];
  const JOB = 'files_consistency';

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    blobRoot = await mkdtemp(join(tmpdir(), 'oxicloud-findings-'));
    report = await generateOxiCloudDataset({
      pool: db.pool,
      blobs: new LocalFsBlobStorage({ root: blobRoot }),
      storageRoot: blobRoot,
      options: {
        ...OXI_SMALL,
        // No multi-chunk content: the faults here need none, and the bytes are the setup's time.
        multiChunkFileShare: 0,
        sharedChunkShare: 0,
        seed: 18,
        faults: ['missing_blob_row', 'blob_size_mismatch'],
        faultsPerKind: 2,
      },
    });
    const logger: Logger = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };
    const alerts = new JobAlerts({
      // The ports of the mail: an in-memory outbox, one admin.
      sender: { send: async (m: EmailMessage) => mails.push(m) },
      recipients: { adminEmails: async () => ['ops@example.org'] },
      logger,
      env: {},
    });
    ledger = new PgFindingLedger({ pool: db.pool });
    const findings = new PgFindingStore({ pool: db.pool });
    const kysely = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool: db.pool }) });
    const check = createFilesConsistencyCheck({ scan: new OxiFileContentScan(kysely) });
    const handler = checkJob(check, { findings, logger });
    engine = new RecoverableEngine({
      pool: db.pool,
      logger,
      onRunFinished: (event) =>
        mailFindingChanges(event, { ledger, alerts, raises: handler.capabilities?.alerts ?? [], logger }),
    });
    engine.register(handler);
  }, 120_000);
  afterAll(async () => {
    await engine?.shutdown({ timeoutMs: 1000 }).catch(() => undefined);
    await db?.drop();
    if (blobRoot) await rm(blobRoot, { recursive: true, force: true });
  });

  const run = async (params: Record<string, unknown> = {}) => {
    const outcome = await engine.runOrResume(JOB, { params });
    expect(outcome.kind).toBe('ok');
    const { rows } = await db.pool.query(
      'SELECT id, status FROM jobs.recoverable_runs WHERE job_name = $1 ORDER BY started_at DESC, id DESC LIMIT 1',
      [JOB],
    );
    return rows[0] as { id: string; status: string };
  };
  const states = async () =>
    Object.fromEntries(
      (
        await db.pool.query('SELECT resource_id, state FROM jobs.findings WHERE check_name = $1', [JOB])
      ).rows.map((r) => [r.resource_id, r.state]),
    ) as Record<string, string>;
  const lastMail = () => mails.at(-1)?.text ?? '';
  const sizeFaults = () => report.faults.find((f) => f.fault === 'blob_size_mismatch')?.resources ?? [];
  const missing = () => report.faults.find((f) => f.fault === 'missing_blob_row')?.resources ?? [];
  /** An old, consistent file to break. */
  let victim: string;

  it('first run: every injected fault is open and new, in one mail', async () => {
    const r1 = await run();
    expect(r1.status).toBe('Completed');
    const expected = [...sizeFaults().map((r) => r.id), ...missing().map((r) => r.id)].sort();
    const s = await states();
    expect(Object.keys(s).sort()).toEqual(expected);
    expect(Object.values(s).every((x) => x === 'open')).toBe(true);
    const changes = await ledger.runChanges(r1.id);
    expect(changes.counts).toMatchObject({ new: 4, reopened: 0, worse: 0, stillOpen: 4, fixed: 0 });
    expect(mails).toHaveLength(1);
    for (const id of expected) expect(lastMail()).toContain(id);
    expect(lastMail()).toContain('4 new');
  });

  it('fix one, inject one: one fixed, one new, the rest still open; the mail lists only the new one', async () => {
    const fixed = sizeFaults()[0]!;
    await db.pool.query('UPDATE storage.files SET size = $2 WHERE id = $1', [
      fixed.id,
      fixed.detail?.['contentSize'],
    ]);
    // A live file whose content (its manifest) resolves, of that size.
    const { rows } = await db.pool.query(
      `SELECT f.id FROM storage.files f JOIN storage.chunk_manifests m ON m.file_hash = f.blob_hash
        WHERE f.size = m.total_size AND f.size > 0 AND NOT f.is_trashed AND f.id <> ALL($1::uuid[])
        ORDER BY f.id LIMIT 1`,
      [sizeFaults().map((r) => r.id)],
    );
    victim = rows[0].id;
    await db.pool.query('UPDATE storage.files SET size = size + 100 WHERE id = $1', [victim]);
    const r2 = await run();
    const s = await states();
    expect(s[fixed.id]).toBe('fixed');
    expect(s[victim]).toBe('open');
    const changes = await ledger.runChanges(r2.id);
    expect(changes.counts).toMatchObject({ new: 1, reopened: 0, stillOpen: 4, fixed: 1 });
    expect(changes.fixed.map((f) => f.resourceId)).toEqual([fixed.id]);
    expect(mails).toHaveLength(2);
    expect(lastMail()).toContain(victim);
    expect(lastMail()).toContain('1 fixed by this run');
    for (const other of [...missing().map((r) => r.id), sizeFaults()[1]!.id]) {
      expect(lastMail()).not.toContain(other);
    }
  });

  it('re-inject the fixed one: reopened, and mailed as such', async () => {
    const again = sizeFaults()[0]!;
    await db.pool.query('UPDATE storage.files SET size = size + 7 WHERE id = $1', [again.id]);
    const r3 = await run();
    expect((await states())[again.id]).toBe('reopened');
    expect((await ledger.runChanges(r3.id)).counts).toMatchObject({ new: 0, reopened: 1 });
    expect(mails).toHaveLength(3);
    expect(lastMail()).toContain(`${again.id}  (reopened (was fixed))`);
  });

  it('accept one: not mailed again; made worse (its delta doubles): open again and mailed', async () => {
    const page = await ledger.list({ check: JOB, kind: 'blob_size_mismatch', state: 'open' });
    const accepted = page.items.find((f) => f.resourceId === victim)!;
    expect(accepted.magnitude).toBe(100);
    await ledger.decide(accepted.id, 'accept', { actor: 'admin', comment: 'known: re-upload pending' });
    await run();
    expect((await states())[victim]).toBe('accepted');
    expect(mails).toHaveLength(3); // nothing changed: no mail
    await db.pool.query('UPDATE storage.files SET size = size + 150 WHERE id = $1', [victim]);
    const r5 = await run();
    expect((await states())[victim]).toBe('open');
    expect((await ledger.runChanges(r5.id)).changed.map((c) => [c.resourceId, c.change])).toEqual([
      [victim, 'worse'],
    ]);
    expect(mails).toHaveLength(4);
    expect(lastMail()).toContain(victim);
  });

  it('a run cancelled midway closes nothing, even for what it walked', async () => {
    const repaired = sizeFaults()[1]!;
    await db.pool.query('UPDATE storage.files SET size = $2 WHERE id = $1', [
      repaired.id,
      repaired.detail?.['contentSize'],
    ]);
    const before = await states();
    const cancel = new AbortController();
    const running = engine.runOrResume(JOB, {
      params: { batch_size: 5, throttle_ms: 50 },
      signal: cancel.signal,
    });
    await new Promise((r) => setTimeout(r, 300));
    cancel.abort();
    await running;
    const { rows } = await db.pool.query(
      'SELECT id, status FROM jobs.recoverable_runs WHERE job_name = $1 ORDER BY started_at DESC LIMIT 1',
      [JOB],
    );
    expect(rows[0].status).toBe('Paused');
    // It walked part of the space (a checkpoint landed), past the repaired file or not: it closes nothing.
    const walked = await db.pool.query('SELECT cursor FROM jobs.recoverable_runs WHERE id = $1', [
      rows[0].id,
    ]);
    expect(walked.rows[0].cursor).not.toBeNull();
    expect(await ledger.closeRun(rows[0].id)).toMatchObject({ outcome: 'not_completed', fixed: 0 });
    expect(await states()).toEqual(before);
    expect(mails).toHaveLength(4);
    // Resumed to the end, the same run closes what it examined.
    const done = await run();
    expect(done.id).toBe(rows[0].id);
    expect((await states())[repaired.id]).toBe('fixed');
  }, 120_000);
});
