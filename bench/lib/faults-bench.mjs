// Issue 19's figure at scale, on OxiCloud's domain: every ported fault of the OxiCloud generator
// (`seed --faults all` with OXICLOUD_STORAGE_DOMAIN=oxicloud) into a database of its own, then
// `consistency_batch` with force through the server; the children's findings must be exactly the
// ones the generator's records name (OXICLOUD_FAULT_EXPECTATIONS), no more and no fewer.
import { join } from 'node:path';
import { expectedFaultFindings, OXICLOUD_FAULT_NAMES } from '@oxicloud/dataset';
import pg from 'pg';
import { seedDatabase } from './dataset.mjs';
import { startServer } from './server.mjs';
import { sleep } from './stats.mjs';

const key = (f) => `${f.job} ${f.kind} ${f.severity} ${f.resourceId}`;

/** The findings one fault record must give, as the bench compares them (`job` = the check). */
export function expectedFindings(record) {
  return expectedFaultFindings(record).map(({ check, ...rest }) => ({ job: check, ...rest }));
}

/** Drives the faults need: most take one or two drives out of the others' reach, per resource. */
const drivesFor = (faultsPerKind) => 20 * faultsPerKind;
/**
 * The multi-chunk share the content faults need: six of them each take a multi-chunk content
 * (with every content sharing its chunks) per resource, out of about `blobs` contents.
 */
const multiChunkShareFor = (faultsPerKind, blobs, share) =>
  Math.min(0.5, Math.max(share, (15 * faultsPerKind) / Math.max(1, blobs)));

/** Triggers consistency_batch with force and waits until its outcome is newer than the trigger. */
async function runBatch(server, { timeoutMs = 3_600_000 } = {}) {
  const t0 = Date.now();
  await server.api('POST', '/api/admin/jobs/consistency_batch/trigger?force=true&wait=false', {});
  for (;;) {
    const jobs = await server.api('GET', '/api/admin/jobs');
    const batch = jobs.find((j) => j.name === 'consistency_batch');
    const at = batch?.last_outcome ? Date.parse(batch.last_outcome.at) : 0;
    if (batch && !batch.running && at >= t0 - 1000) return { batch, wallMs: Date.now() - t0 };
    if (Date.now() - t0 > timeoutMs) throw new Error(`consistency_batch still running after ${timeoutMs} ms`);
    await sleep(500);
  }
}

export async function faultsBench({
  adminUrl,
  createDatabase,
  workDir,
  files,
  blobs,
  blobSize,
  multiChunkShare,
  faultsPerKind,
  log,
}) {
  const url = await createDatabase(adminUrl, 'oxicloud_bench_faults');
  const dataDir = join(workDir, 'faults');
  log(`faults: seeding ${files} files with every OxiCloud fault (${faultsPerKind} each) …`);
  const seeded = await seedDatabase({
    databaseUrl: url,
    dataDir,
    files,
    blobs,
    blobSize,
    multiChunkShare: multiChunkShareFor(faultsPerKind, blobs, multiChunkShare),
    log,
    faults: [...OXICLOUD_FAULT_NAMES],
    faultsPerKind,
    minDrives: drivesFor(faultsPerKind),
  });
  log(`faults: seeded in ${(seeded.seedMs / 1000).toFixed(1)} s`);
  const server = await startServer({ databaseUrl: url, dataDir, adminUser: seeded.adminUser });
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  try {
    log('faults: consistency_batch with force …');
    const { batch, wallMs } = await runBatch(server);
    const outcome = batch.last_outcome.outcome;
    const perCheck = outcome.extra?.per_check ?? {};
    const checks = [];
    const found = [];
    for (const [job, entry] of Object.entries(perCheck)) {
      const run = entry.run_id
        ? (
            await pool.query(
              `SELECT status, started_at, completed_at, (stats->>'scanned_count')::bigint AS scanned
                 FROM jobs.recoverable_runs WHERE id = $1`,
              [entry.run_id],
            )
          ).rows[0]
        : undefined;
      const { rows } = entry.run_id
        ? await pool.query('SELECT kind, severity, resource_id FROM jobs.run_findings WHERE run_id = $1', [
            entry.run_id,
          ])
        : { rows: [] };
      for (const r of rows)
        found.push(key({ job, kind: r.kind, severity: r.severity, resourceId: r.resource_id }));
      checks.push({
        job,
        outcome: entry.outcome?.kind,
        status: run?.status ?? null,
        ms: run ? Date.parse(run.completed_at) - Date.parse(run.started_at) : null,
        scanned: run ? Number(run.scanned) : null,
        findings: rows.length,
      });
    }
    const expectedList = seeded.faults.flatMap(expectedFindings).map(key);
    const expected = new Set(expectedList);
    const foundSet = new Set(found);
    const missing = [...expected].filter((x) => !foundSet.has(x));
    const extra = [...foundSet].filter((x) => !expected.has(x));
    const perFault = seeded.faults.map((f) => ({
      fault: f.fault,
      check: f.expect.check,
      expected: expectedFindings(f).length,
      found: expectedFindings(f).filter((x) => foundSet.has(key(x))).length,
    }));
    log(
      `faults: batch ${outcome.kind} in ${(wallMs / 1000).toFixed(1)} s; expected ${expected.size}, found ${foundSet.size}, missing ${missing.length}, extra ${extra.length}`,
    );
    return {
      counts: seeded.counts,
      options: seeded.options,
      seedMs: seeded.seedMs,
      faultsPerKind,
      batch: { outcome: outcome.kind, count: outcome.count ?? null, wallMs },
      checks,
      expected: expected.size,
      expectedDuplicates: expectedList.length - expected.size,
      found: foundSet.size,
      missing: missing.slice(0, 50),
      missingCount: missing.length,
      extra: extra.slice(0, 50),
      extraCount: extra.length,
      perFault,
    };
  } finally {
    await pool.end();
    await server.stop();
  }
}
