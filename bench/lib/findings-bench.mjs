// Findings across runs (issue 18): the keyset listing of GET /api/admin/findings, first page against a
// deep page, on TOTAL findings over 20 runs. The bar: the deep page within 1.5x of the first.

import { PgFindingLedger } from '@oxicloud/consistency';
import { migrate } from '@oxicloud/migrations';
import pg from 'pg';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function findingsListingBench({
  databaseUrl,
  total = 100_000,
  pageSize = 100,
  repeats = 21,
  log,
}) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  // A client still closing when the bench's Postgres stops reports 'terminating connection' on the
  // pool; without a listener that event kills the process before the results are written.
  pool.on('error', () => undefined);
  try {
    const migrated = await migrate(pool, { domain: 'oxicloud' });
    if (migrated.error) throw migrated.error;
    await pool.query(`
      INSERT INTO jobs.recoverable_runs (id, job_name, status, started_at, last_progress_at, completed_at)
      SELECT ('00000000-0000-7000-8000-' || lpad(to_hex(n), 12, '0'))::uuid, 'files_consistency', 'Completed',
             timestamptz '2026-11-01' + n * interval '1 day', timestamptz '2026-11-01' + n * interval '1 day',
             timestamptz '2026-11-01' + n * interval '1 day' + interval '1 hour'
        FROM generate_series(1, 20) AS n`);
    await pool.query(`
      INSERT INTO jobs.findings (id, check_name, kind, resource_id, severity, severity_rank, highest_severity,
                                 state, first_seen_run_id, first_seen_at, last_seen_run_id, last_seen_at,
                                 last_seen_boundary, detail)
      SELECT gen_random_uuid(), 'files_consistency', 'kind_' || (i % 5), 'r' || i,
             (ARRAY['DataLoss','Reclaimable','Regenerable','Drift'])[1 + (i * 7919) % 4], (i * 7919) % 4,
             (ARRAY['DataLoss','Reclaimable','Regenerable','Drift'])[1 + (i * 7919) % 4],
             (ARRAY['open','fixed','reopened','accepted','false_positive'])[1 + (i * 31) % 5],
             ('00000000-0000-7000-8000-' || lpad(to_hex(1 + i % 20), 12, '0'))::uuid, timestamptz '2026-11-01',
             ('00000000-0000-7000-8000-' || lpad(to_hex(1 + i % 20), 12, '0'))::uuid,
             timestamptz '2026-11-01' + (1 + i % 20) * interval '1 day' + ((i / 20) % 500) * interval '1 millisecond',
             timestamptz '2026-11-01', '{"delta": 1}'::jsonb
        FROM generate_series(1, ${total}) AS i`);
    await pool.query('VACUUM ANALYZE jobs.findings');
    const ledger = new PgFindingLedger({ pool });
    // The cursor of the page at 90 % of the listing.
    let cursor = null;
    let walked = 0;
    while (walked < total * 0.9) {
      const page = await ledger.list({ limit: 1000, ...(cursor ? { cursor } : {}) });
      walked += page.items.length;
      cursor = page.nextCursor;
      if (!cursor) break;
    }
    const time = async (c) => {
      const started = performance.now();
      await ledger.list({ limit: pageSize, ...(c ? { cursor: c } : {}) });
      return performance.now() - started;
    };
    const first = [];
    const deep = [];
    for (let i = 0; i < repeats; i++) {
      first.push(await time(null));
      deep.push(await time(cursor));
    }
    const firstMs = median(first);
    const deepMs = median(deep);
    const ratio = deepMs / firstMs;
    log?.(
      `findings listing: first page ${firstMs.toFixed(2)} ms, page at ${walked} ${deepMs.toFixed(2)} ms (×${ratio.toFixed(2)})`,
    );
    return { total, pageSize, deepOffset: walked, firstMs, deepMs, ratio, pass: ratio <= 1.5 };
  } finally {
    await pool.end();
  }
}
