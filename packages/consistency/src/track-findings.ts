import { type Kysely, sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { FindingKey, FindingWriteContext } from './finding-sink.js';
import {
  type FindingBefore,
  type FindingChange,
  isFindingState,
  transitionOnReport,
  worstSeverity,
} from './finding-state.js';
import type { Inconsistency } from './inconsistency.js';
import type { EngineFindingsTables } from './run-findings-table.js';
import { severityRank } from './severity.js';

/** The finding across runs a reported record now belongs to, and what the report changed. */
export interface TrackedFinding {
  readonly findingId: string;
  readonly change: FindingChange | null;
}

const keyOf = (k: FindingKey): string => `${k.kind}\u0000${k.resourceId}`;

const toNumber = (v: string | number | null): number | null => (v === null ? null : Number(v));

/** A finite magnitude or `null`. */
export function magnitudeOf(finding: Inconsistency): number | null {
  const m = finding.magnitude;
  return typeof m === 'number' && Number.isFinite(m) ? m : null;
}

/**
 * The job a run belongs to (the fingerprint's check when the writer was given no context).
 * `db` is placed in the engine schema (`FindingTables.on`), as for every function here.
 */
export async function checkNameOfRun(db: Kysely<EngineFindingsTables>, runId: string): Promise<string> {
  const row = await db
    .selectFrom('recoverable_runs')
    .select('job_name')
    .where('id', '=', runId)
    .executeTakeFirst();
  return row?.job_name ?? 'unknown';
}

/**
 * Upserts the findings across runs for one batch's records, inside the
 * checkpoint's transaction: locks the existing rows of the batch's
 * fingerprints, applies {@link transitionOnReport} to each, writes them back
 * in one `INSERT … ON CONFLICT DO UPDATE`, and records each change in
 * `jobs.finding_events`. A replayed batch (rolled back, run again) sees the
 * committed rows only, and a record already reported by this run changes
 * nothing: idempotent.
 */
export async function trackFindings(
  db: Kysely<EngineFindingsTables>,
  runId: string,
  context: FindingWriteContext,
  records: readonly Inconsistency[],
): Promise<Map<string, TrackedFinding>> {
  const out = new Map<string, TrackedFinding>();
  if (records.length === 0) return out;
  const unique = new Map<string, Inconsistency>();
  for (const r of records) unique.set(keyOf(r), r);
  const list = [...unique.values()];
  const nowRow = await sql<{ now: Date }>`SELECT now() AS now`.execute(db);
  const now = nowRow.rows[0]?.now ?? new Date();
  const boundary = context.graceBoundary ?? now;
  const existing = await db
    .selectFrom('findings')
    .selectAll()
    .where('check_name', '=', context.checkName)
    .where(
      sql<boolean>`(kind, resource_id) IN (SELECT * FROM unnest(${list.map((r) => r.kind)}::text[], ${list.map((r) => r.resourceId)}::text[]))`,
    )
    .forUpdate()
    .execute();
  const byKey = new Map(existing.map((row) => [`${row.kind}\u0000${row.resource_id}`, row]));
  const rows = [];
  const events = [];
  for (const record of list) {
    const key = keyOf(record);
    const old = byKey.get(key);
    const magnitude = magnitudeOf(record);
    const before: FindingBefore | null =
      old === undefined
        ? null
        : {
            state: isFindingState(old.state) ? old.state : 'open',
            lastSeenRunId: old.last_seen_run_id,
            firstSeenRunId: old.first_seen_run_id,
            highestSeverity: old.highest_severity,
            acceptUntil: old.accept_until,
            acceptedSeverity: old.accepted_severity,
            acceptedMagnitude: toNumber(old.accepted_magnitude),
          };
    const { state, change } = transitionOnReport(
      before,
      runId,
      { severity: record.severity, magnitude },
      now,
    );
    const id = old?.id ?? uuidv7();
    const changedState = old === undefined || state !== old.state;
    rows.push({
      id,
      check_name: context.checkName,
      kind: record.kind,
      resource_id: record.resourceId,
      severity: record.severity,
      severity_rank: severityRank(record.severity),
      highest_severity: old ? worstSeverity(old.highest_severity, record.severity) : record.severity,
      magnitude,
      detail: JSON.stringify(record.detail),
      state,
      first_seen_run_id: old ? old.first_seen_run_id : runId,
      first_seen_at: old ? old.first_seen_at : now,
      last_seen_run_id: runId,
      last_seen_at: now,
      last_seen_boundary: boundary,
      fixed_run_id: state === 'reopened' && old?.state === 'fixed' ? null : (old?.fixed_run_id ?? null),
      fixed_at: state === 'reopened' && old?.state === 'fixed' ? null : (old?.fixed_at ?? null),
      state_changed_by: changedState ? 'system' : (old?.state_changed_by ?? 'system'),
      state_changed_at: changedState ? now : (old?.state_changed_at ?? now),
      comment: old?.comment ?? null,
      accept_until: state === 'accepted' ? (old?.accept_until ?? null) : null,
      accepted_severity: state === 'accepted' ? (old?.accepted_severity ?? null) : null,
      accepted_magnitude: state === 'accepted' ? toNumber(old?.accepted_magnitude ?? null) : null,
    });
    if (changedState && change !== null) {
      events.push({
        finding_id: id,
        run_id: runId,
        actor: 'system',
        event: change,
        state,
        severity: record.severity,
        magnitude,
        comment: null,
      });
    }
    out.set(key, { findingId: id, change });
  }
  await db
    .insertInto('findings')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['check_name', 'kind', 'resource_id']).doUpdateSet((eb) => ({
        severity: eb.ref('excluded.severity'),
        severity_rank: eb.ref('excluded.severity_rank'),
        highest_severity: eb.ref('excluded.highest_severity'),
        magnitude: eb.ref('excluded.magnitude'),
        detail: eb.ref('excluded.detail'),
        state: eb.ref('excluded.state'),
        last_seen_run_id: eb.ref('excluded.last_seen_run_id'),
        last_seen_at: eb.ref('excluded.last_seen_at'),
        last_seen_boundary: eb.ref('excluded.last_seen_boundary'),
        fixed_run_id: eb.ref('excluded.fixed_run_id'),
        fixed_at: eb.ref('excluded.fixed_at'),
        state_changed_by: eb.ref('excluded.state_changed_by'),
        state_changed_at: eb.ref('excluded.state_changed_at'),
        accept_until: eb.ref('excluded.accept_until'),
        accepted_severity: eb.ref('excluded.accepted_severity'),
        accepted_magnitude: eb.ref('excluded.accepted_magnitude'),
      })),
    )
    .execute();
  if (events.length > 0) await db.insertInto('finding_events').values(events).execute();
  return out;
}

/**
 * The drops of a batch: each resource is recorded in `jobs.run_unexamined`
 * (pass 2 saw it change mid-scan: this run has no evidence about it and
 * closes none of its findings), and a finding first seen by this very run
 * (an entry nobody else reported) goes away with its sighting.
 */
export async function untrackDrops(
  db: Kysely<EngineFindingsTables>,
  runId: string,
  checkName: string,
  drops: readonly FindingKey[],
): Promise<void> {
  if (drops.length === 0) return;
  const unique = [...new Map(drops.map((d) => [keyOf(d), d])).values()];
  await db
    .insertInto('run_unexamined')
    .values(
      unique.map((d) => ({
        run_id: runId,
        kind: d.kind,
        resource_id: d.resourceId,
        reason: 'pass2_dropped',
      })),
    )
    .onConflict((oc) => oc.columns(['run_id', 'kind', 'resource_id']).doNothing())
    .execute();
  await db
    .deleteFrom('findings')
    .where('check_name', '=', checkName)
    .where('first_seen_run_id', '=', runId)
    .where('last_seen_run_id', '=', runId)
    .where(
      sql<boolean>`(kind, resource_id) IN (SELECT * FROM unnest(${unique.map((d) => d.kind)}::text[], ${unique.map((d) => d.resourceId)}::text[]))`,
    )
    .execute();
}
