import { type Kysely, sql } from 'kysely';
import type { FindingTables } from './finding-tables.js';
import type { EngineFindingsTables } from './run-findings-table.js';

/** What closing one run did. */
export interface RunCloseResult {
  readonly runId: string;
  readonly checkName: string;
  /**
   * `closed`: this call closed it; `already_closed`: an earlier call did
   * (idempotent); `not_completed`: the run is not `Completed` (Paused,
   * Failed, cancelled, still running): it closes nothing.
   */
  readonly outcome: 'closed' | 'already_closed' | 'not_completed';
  /** Findings this run fixed (all calls: the stored count once closed). */
  readonly fixed: number;
  /** Accepted findings whose acceptance had expired, open again. */
  readonly expired: number;
}

/**
 * The closing step of a check run, in one transaction, once and only once
 * the run is `Completed` (a Paused, Failed or cancelled run closes nothing,
 * not even for the part it walked). A finding of the run's check becomes
 * `fixed` only on positive evidence that the run examined its resource and
 * found it consistent:
 *
 * 1. **Walked range.** A `Completed` run walked the check's whole key space
 *    (every phase; checks take no range params), so every resource that
 *    exists lay in it, and one that no longer exists is not reported: a
 *    deleted resource fixes its findings.
 * 2. **Grace window.** The finding's resource was old enough at the grace
 *    boundary (`startedAt − grace`) of the run that last reported it. It is
 *    old enough for this run only if this run's boundary is not earlier:
 *    `last_seen_boundary <= grace_boundary`. When the grace window exceeds
 *    the time between runs (a deep 24 h window on runs 12 h apart, or a
 *    forced run followed by a normal one) the boundary is earlier, the
 *    resource may have been skipped as young, and the finding stays open
 *    until a run whose boundary is later.
 *    A kind with a grace of its own (`ConsistencyCheck.kindGraceMs`: deep
 *    re-hashing's 24 h) is judged against that boundary; a kind the run did
 *    not examine at all (a deep-only kind in a normal run) is never fixed.
 * 3. **Pass 2.** The resource is not in `jobs.run_unexamined` for this run
 *    (pass 2 dropped it: it changed mid-scan).
 * 4. **Not reported again.** The run has no `jobs.run_findings` row for it,
 *    and did not report it (`last_seen_run_id`).
 *
 * `open`, `reopened` and `accepted` findings can be fixed; a
 * `false_positive` is left as the operator decided. Accepted findings whose
 * `accept_until` passed are `open` again first. Each change is a
 * `jobs.finding_events` row. Idempotent: `jobs.finding_runs.closed_at`.
 * Resolves `null` for a run that has no `jobs.finding_runs` row (not a check
 * run, or written before this schema).
 *
 * `db` is placed in the engine schema (`tables.on`); `tables` are the same
 * schema's, for the raw statements.
 */
export async function closeRun(
  db: Kysely<EngineFindingsTables>,
  tables: FindingTables,
  runId: string,
): Promise<RunCloseResult | null> {
  return db.transaction().execute(async (tx) => {
    const run = await tx
      .selectFrom('finding_runs as fr')
      .innerJoin('recoverable_runs as r', 'r.id', 'fr.run_id')
      .select([
        'fr.check_name',
        'fr.grace_boundary',
        'fr.kind_grace',
        'fr.started_at',
        'fr.closed_at',
        'fr.fixed_count',
        'r.status',
      ])
      .where('fr.run_id', '=', runId)
      .forUpdate('fr')
      .executeTakeFirst();
    if (run === undefined) return null;
    const base = { runId, checkName: run.check_name };
    if (run.status !== 'Completed') return { ...base, outcome: 'not_completed', fixed: 0, expired: 0 };
    if (run.closed_at !== null) {
      return { ...base, outcome: 'already_closed', fixed: run.fixed_count ?? 0, expired: 0 };
    }
    const expired = await sql<{ id: string; severity: string; magnitude: string | null }>`
      UPDATE ${tables.findings}
         SET state = 'open', state_changed_by = 'system', state_changed_at = now(),
             accept_until = NULL, accepted_severity = NULL, accepted_magnitude = NULL
       WHERE check_name = ${run.check_name} AND state = 'accepted' AND accept_until <= now()
      RETURNING id, severity, magnitude`.execute(tx);
    const kindGrace = JSON.stringify(run.kind_grace ?? {});
    const fixed = await sql<{ id: string; severity: string; magnitude: string | null }>`
      UPDATE ${tables.findings} f
         SET state = 'fixed', fixed_run_id = ${runId}, fixed_at = now(),
             state_changed_by = 'system', state_changed_at = now(),
             accept_until = NULL, accepted_severity = NULL, accepted_magnitude = NULL
       WHERE f.check_name = ${run.check_name}
         AND f.state IN ('open', 'reopened', 'accepted')
         AND f.last_seen_run_id IS DISTINCT FROM ${runId}
         AND NOT (${kindGrace}::jsonb ? f.kind AND ${kindGrace}::jsonb -> f.kind = 'null'::jsonb)
         AND f.last_seen_boundary <= CASE
               WHEN ${kindGrace}::jsonb ? f.kind
               THEN ${run.started_at}::timestamptz - ((${kindGrace}::jsonb ->> f.kind)::bigint * interval '1 millisecond')
               ELSE ${run.grace_boundary}::timestamptz END
         AND NOT EXISTS (SELECT 1 FROM ${tables.runFindings} rf
                          WHERE rf.run_id = ${runId} AND rf.kind = f.kind AND rf.resource_id = f.resource_id)
         AND NOT EXISTS (SELECT 1 FROM ${tables.runUnexamined} u
                          WHERE u.run_id = ${runId} AND u.kind = f.kind AND u.resource_id = f.resource_id)
      RETURNING id, severity, magnitude`.execute(tx);
    const events = [
      ...expired.rows.map((r) => ({ ...r, event: 'expired', state: 'open' })),
      ...fixed.rows.map((r) => ({ ...r, event: 'fixed', state: 'fixed' })),
    ];
    for (let i = 0; i < events.length; i += 1000) {
      await tx
        .insertInto('finding_events')
        .values(
          events.slice(i, i + 1000).map((e) => ({
            finding_id: e.id,
            run_id: runId,
            actor: 'system',
            event: e.event,
            state: e.state,
            severity: e.severity,
            magnitude: e.magnitude === null ? null : Number(e.magnitude),
            comment: null,
          })),
        )
        .execute();
    }
    await tx
      .updateTable('finding_runs')
      .set({ closed_at: sql<Date>`now()`, fixed_count: fixed.rows.length })
      .where('run_id', '=', runId)
      .execute();
    return { ...base, outcome: 'closed', fixed: fixed.rows.length, expired: expired.rows.length };
  });
}

/**
 * Closes every `Completed` check run not closed yet (a crash between the
 * terminal write and the closing step), oldest first; only the runs of
 * `checkName` when it is given. Idempotent.
 */
export async function closePendingRuns(
  db: Kysely<EngineFindingsTables>,
  tables: FindingTables,
  checkName?: string,
): Promise<RunCloseResult[]> {
  let query = db
    .selectFrom('finding_runs as fr')
    .innerJoin('recoverable_runs as r', 'r.id', 'fr.run_id')
    .select('fr.run_id')
    .where('fr.closed_at', 'is', null)
    .where('r.status', '=', 'Completed');
  if (checkName !== undefined) query = query.where('fr.check_name', '=', checkName);
  const pending = await query.orderBy('fr.started_at').execute();
  const out: RunCloseResult[] = [];
  for (const { run_id } of pending) {
    const result = await closeRun(db, tables, run_id);
    if (result) out.push(result);
  }
  return out;
}
