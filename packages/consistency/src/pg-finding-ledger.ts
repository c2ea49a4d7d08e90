import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import { closePendingRuns, closeRun, type RunCloseResult } from './close-run.js';
import { ConsistencyError } from './consistency-error.js';
import { type FindingChange, type FindingState, isFindingState } from './finding-state.js';
import { type FindingTables, findingTables, kyselyOf, type PgConsistencyOptions } from './finding-tables.js';
import type { EngineFindingsTables, FindingsTable } from './run-findings-table.js';
import { isSeverity, SEVERITIES, type Severity, severityRank } from './severity.js';

/** A finding across runs (`jobs.findings`). */
export interface TrackedFindingView {
  readonly id: string;
  readonly check: string;
  readonly kind: string;
  readonly resourceId: string;
  readonly severity: Severity;
  readonly highestSeverity: Severity;
  readonly magnitude: number | null;
  readonly detail: Readonly<Record<string, unknown>>;
  readonly state: FindingState;
  readonly firstSeenRunId: string | null;
  readonly firstSeenAt: Date;
  readonly lastSeenRunId: string | null;
  readonly lastSeenAt: Date;
  readonly fixedRunId: string | null;
  readonly fixedAt: Date | null;
  readonly stateChangedBy: string;
  readonly stateChangedAt: Date;
  readonly comment: string | null;
  readonly acceptUntil: Date | null;
}

/** One state change of a finding (`jobs.finding_events`). */
export interface FindingEventView {
  readonly at: Date;
  readonly runId: string | null;
  readonly actor: string;
  readonly event: string;
  readonly state: string;
  readonly severity: string | null;
  readonly magnitude: number | null;
  readonly comment: string | null;
}

/** One run that reported a finding (`jobs.run_findings`). */
export interface FindingSightingView {
  readonly runId: string;
  readonly foundAt: Date;
  readonly severity: string;
  readonly change: string | null;
  readonly detail: Readonly<Record<string, unknown>>;
}

/** A finding with its history. */
export interface FindingDetailView extends TrackedFindingView {
  /** State changes, oldest first. */
  readonly events: readonly FindingEventView[];
  /** Runs that reported it, newest first (at most 100; retention prunes old runs). */
  readonly sightings: readonly FindingSightingView[];
}

/** Filters and keyset paging of {@link PgFindingLedger.list}. */
export interface LedgerListOptions {
  readonly state?: FindingState;
  readonly severity?: Severity;
  readonly kind?: string;
  readonly check?: string;
  /** The `nextCursor` of the previous page. */
  readonly cursor?: string;
  /** 1..1000. @defaultValue 100 */
  readonly limit?: number;
}

/** One page: `nextCursor` is `null` on the last. */
export interface LedgerPage {
  readonly items: readonly TrackedFindingView[];
  readonly nextCursor: string | null;
}

/** An operator's decision. */
export type FindingDecision = 'accept' | 'false_positive' | 'reopen';

/** Who decided, why, and (accept) until when. */
export interface DecisionInput {
  readonly actor: string;
  readonly comment: string;
  /** accept only: after this instant the finding is `open` again. Must lie in the future. */
  readonly acceptUntil?: Date | null;
}

/** What a run changed: what it found new (or reopened, or worse) and what it fixed. */
export interface RunChanges {
  readonly runId: string;
  readonly check: string | null;
  /** New, reopened, worse and expired findings of the run that are not accepted nor false positives: what a mail lists. */
  readonly changed: readonly (TrackedFindingView & { readonly change: FindingChange })[];
  readonly fixed: readonly TrackedFindingView[];
  readonly counts: {
    readonly new: number;
    readonly reopened: number;
    readonly worse: number;
    readonly expired: number;
    /** Findings of the check still `open` or `reopened` (this run's included). */
    readonly stillOpen: number;
    /** Findings this run fixed. */
    readonly fixed: number;
  };
}

/** Per check, for the health view. */
export interface CheckHealth {
  readonly check: string;
  readonly lastCompletedRun: { readonly runId: string; readonly completedAt: Date | null } | null;
  /** `open` + `reopened` findings per severity. */
  readonly openBySeverity: Readonly<Record<Severity, number>>;
  readonly accepted: number;
  /** New in the last completed run (since the previous one). */
  readonly newSincePrevious: number;
  /** Fixed by the last completed run. */
  readonly fixedSincePrevious: number;
  /** The last completed runs, oldest first: findings reported, new, fixed. */
  readonly trend: readonly {
    readonly runId: string;
    readonly at: Date | null;
    readonly reported: number;
    readonly new: number;
    readonly fixed: number;
  }[];
}

const MAX_COMMENT = 2000;

type FindingRow = {
  [K in keyof FindingsTable]: FindingsTable[K] extends import('kysely').ColumnType<infer S, unknown, unknown>
    ? S
    : FindingsTable[K];
};

function toView(r: FindingRow): TrackedFindingView {
  return {
    id: r.id,
    check: r.check_name,
    kind: r.kind,
    resourceId: r.resource_id,
    severity: isSeverity(r.severity) ? r.severity : 'Drift',
    highestSeverity: isSeverity(r.highest_severity) ? r.highest_severity : 'Drift',
    magnitude: r.magnitude === null ? null : Number(r.magnitude),
    detail: r.detail,
    state: isFindingState(r.state) ? r.state : 'open',
    firstSeenRunId: r.first_seen_run_id,
    firstSeenAt: r.first_seen_at,
    lastSeenRunId: r.last_seen_run_id,
    lastSeenAt: r.last_seen_at,
    fixedRunId: r.fixed_run_id,
    fixedAt: r.fixed_at,
    stateChangedBy: r.state_changed_by,
    stateChangedAt: r.state_changed_at,
    comment: r.comment,
    acceptUntil: r.accept_until,
  };
}

/** `rank|iso|id` as base64url: opaque to clients. */
function encodeCursor(f: TrackedFindingView): string {
  return Buffer.from(`${severityRank(f.severity)}|${f.lastSeenAt.toISOString()}|${f.id}`).toString(
    'base64url',
  );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function decodeCursor(cursor: string): { rank: number; seen: Date; id: string } {
  const bad = () =>
    new ConsistencyError(
      'INVALID_CURSOR',
      'cursor is not one this API handed out: pass the next_cursor of the previous page unchanged',
    );
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw bad();
  const [rank, iso, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const seen = new Date(iso ?? '');
  const r = Number(rank);
  if (
    !Number.isInteger(r) ||
    r < 0 ||
    r > SEVERITIES.length ||
    Number.isNaN(seen.getTime()) ||
    !UUID.test(id ?? '')
  ) {
    throw bad();
  }
  return { rank: r, seen, id: id as string };
}

/** One line of {@link PgFindingLedger.openCounts}. */
export interface OpenFindingCount {
  readonly check: string;
  readonly kind: string;
  readonly severity: string;
  readonly count: number;
}

/**
 * Findings across runs on `jobs.findings`: the closing step, the operators'
 * decisions, the keyset listing, a finding's history, what a run changed
 * (the findings mail), and the per-check health view.
 *
 * @example
 * ```ts
 * const ledger = new PgFindingLedger({ pool });
 * await ledger.closeRun(runId); // idempotent: checkJob already closed each Completed run after its terminal write
 * const page = await ledger.list({ state: 'open', limit: 50 });
 * ```
 */
export class PgFindingLedger {
  /** The caller's Kysely (or one on the pool), placed in the engine schema. */
  readonly #db: Kysely<EngineFindingsTables>;
  readonly #t: FindingTables;

  /**
   * `pool` or your own `db`, and the engine `schema` (the one given to
   * `migrate()`; @defaultValue `jobs`): see {@link PgConsistencyOptions}.
   *
   * @throws Error when `schema` is not a schema name the engine takes (see `engineSchema`).
   */
  constructor(options: PgConsistencyOptions) {
    this.#t = findingTables(options.schema);
    this.#db = this.#t.on(kyselyOf(options));
  }

  /** The closing step of one run (see `closeRun`): idempotent, nothing for a run that is not `Completed`. */
  closeRun(runId: string): Promise<RunCloseResult | null> {
    return closeRun(this.#db, this.#t, runId);
  }

  /** Closes every `Completed` check run a crash left unclosed (only `checkName`'s when given), oldest first. */
  closePendingRuns(checkName?: string): Promise<RunCloseResult[]> {
    return closePendingRuns(this.#db, this.#t, checkName);
  }

  /**
   * The open findings (state `open` or `reopened`: neither fixed, by a run or
   * a repair, nor decided by an operator), counted by check, kind and severity.
   */
  async openCounts(): Promise<OpenFindingCount[]> {
    const rows = await this.#db
      .selectFrom('findings')
      .select(['check_name', 'kind', 'severity', (eb) => eb.fn.countAll<string>().as('n')])
      .where('state', 'in', ['open', 'reopened'])
      .groupBy(['check_name', 'kind', 'severity'])
      .orderBy('check_name')
      .orderBy('kind')
      .orderBy('severity')
      .execute();
    return rows.map((r) => ({ check: r.check_name, kind: r.kind, severity: r.severity, count: Number(r.n) }));
  }

  /**
   * One page, worst severity first, then most recently seen, then id (newest
   * first): a keyset walk (`(severity_rank, last_seen_at, id)` after the
   * cursor), as fast on page 1000 as on page 1.
   *
   * @throws {ConsistencyError} `INVALID_OPTIONS` (limit), `INVALID_CURSOR`.
   */
  async list(options: LedgerListOptions = {}): Promise<LedgerPage> {
    const limit = options.limit ?? 100;
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      throw new ConsistencyError('INVALID_OPTIONS', `limit must be an integer in 1..1000, got ${limit}`);
    }
    const after = options.cursor === undefined ? null : decodeCursor(options.cursor);
    const filtered = () => {
      let q: SelectQueryBuilder<EngineFindingsTables, 'findings', object> = this.#db.selectFrom('findings');
      if (options.state) q = q.where('state', '=', options.state);
      if (options.severity) q = q.where('severity', '=', options.severity);
      if (options.kind) q = q.where('kind', '=', options.kind);
      if (options.check) q = q.where('check_name', '=', options.check);
      return q
        .selectAll()
        .orderBy('severity_rank')
        .orderBy('last_seen_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit + 1);
    };
    let rows: FindingRow[];
    if (after === null) {
      rows = (await filtered().execute()) as FindingRow[];
    } else {
      // Two index range scans instead of one OR: the rest of the cursor's severity, then the worse-ranked ones.
      const [same, later] = await Promise.all([
        filtered()
          .where('severity_rank', '=', after.rank)
          .where(sql<boolean>`(last_seen_at, id) < (${after.seen}, ${after.id}::uuid)`)
          .execute(),
        filtered().where('severity_rank', '>', after.rank).execute(),
      ]);
      rows = [...same, ...later].slice(0, limit + 1) as FindingRow[];
    }
    const items = rows.slice(0, limit).map(toView);
    const last = items.at(-1);
    return { items, nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
  }

  /** A finding with its state changes and the runs that saw it; `null` when there is none. */
  async get(id: string): Promise<FindingDetailView | null> {
    if (!UUID.test(id)) return null;
    const row = (await this.#db.selectFrom('findings').selectAll().where('id', '=', id).executeTakeFirst()) as
      | FindingRow
      | undefined;
    if (row === undefined) return null;
    const [events, sightings] = await Promise.all([
      this.#db.selectFrom('finding_events').selectAll().where('finding_id', '=', id).orderBy('id').execute(),
      this.#db
        .selectFrom('run_findings')
        .select(['run_id', 'found_at', 'severity', 'change', 'detail'])
        .where('finding_id', '=', id)
        .orderBy('found_at', 'desc')
        .limit(100)
        .execute(),
    ]);
    return {
      ...toView(row),
      events: events.map((e) => ({
        at: e.at,
        runId: e.run_id,
        actor: e.actor,
        event: e.event,
        state: e.state,
        severity: e.severity,
        magnitude: e.magnitude === null ? null : Number(e.magnitude),
        comment: e.comment,
      })),
      sightings: sightings.map((s) => ({
        runId: s.run_id,
        foundAt: s.found_at,
        severity: s.severity,
        change: s.change,
        detail: s.detail,
      })),
    };
  }

  /**
   * An operator's decision, audited in `jobs.finding_events` (actor,
   * comment): `accept` (open, reopened, or accepted again to change the
   * comment or expiry: remembers the severity and magnitude it was accepted
   * at, so getting worse opens it again), `false_positive` (any state but
   * fixed), `reopen` (accepted or false positive → `open`; fixed →
   * `reopened`). Resolves with the finding after the decision.
   *
   * @throws {ConsistencyError} `FINDING_NOT_FOUND`, `INVALID_OPTIONS` (comment
   * empty or over 2000 characters, an expiry not in the future, an expiry on
   * something else than accept), `INVALID_TRANSITION` (the state does not allow it).
   */
  async decide(id: string, decision: FindingDecision, input: DecisionInput): Promise<TrackedFindingView> {
    const comment = input.comment.trim();
    if (comment.length === 0 || comment.length > MAX_COMMENT) {
      throw new ConsistencyError(
        'INVALID_OPTIONS',
        `comment must be 1..${MAX_COMMENT} characters (say why), got ${comment.length}`,
      );
    }
    const until = input.acceptUntil ?? null;
    if (until !== null && decision !== 'accept') {
      throw new ConsistencyError(
        'INVALID_OPTIONS',
        `an expiry (until) goes with accept only, not ${decision}`,
      );
    }
    if (until !== null && (Number.isNaN(until.getTime()) || until.getTime() <= Date.now())) {
      throw new ConsistencyError('INVALID_OPTIONS', 'until must be a date-time in the future');
    }
    if (!UUID.test(id)) throw new ConsistencyError('FINDING_NOT_FOUND', `no finding with id ${id}`);
    return this.#db.transaction().execute(async (tx) => {
      const row = (await tx
        .selectFrom('findings')
        .selectAll()
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst()) as FindingRow | undefined;
      if (row === undefined) throw new ConsistencyError('FINDING_NOT_FOUND', `no finding with id ${id}`);
      const from = row.state;
      let to: FindingState;
      if (decision === 'accept') {
        if (from === 'fixed') {
          throw new ConsistencyError(
            'INVALID_TRANSITION',
            'a fixed finding needs no acceptance; reopen it first',
          );
        }
        to = 'accepted';
      } else if (decision === 'false_positive') {
        if (from === 'fixed') {
          throw new ConsistencyError(
            'INVALID_TRANSITION',
            'a fixed finding cannot be marked a false positive',
          );
        }
        to = 'false_positive';
      } else {
        if (from === 'open' || from === 'reopened') {
          throw new ConsistencyError('INVALID_TRANSITION', `the finding is already ${from}`);
        }
        to = from === 'fixed' ? 'reopened' : 'open';
      }
      const updated = (await tx
        .updateTable('findings')
        .set({
          state: to,
          state_changed_by: input.actor,
          state_changed_at: sql<Date>`now()`,
          comment,
          accept_until: to === 'accepted' ? until : null,
          accepted_severity: to === 'accepted' ? row.severity : null,
          accepted_magnitude:
            to === 'accepted' ? (row.magnitude === null ? null : Number(row.magnitude)) : null,
          ...(to === 'reopened' ? { fixed_run_id: null, fixed_at: null } : {}),
        })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow()) as FindingRow;
      await tx
        .insertInto('finding_events')
        .values({
          finding_id: id,
          run_id: null,
          actor: input.actor,
          event: decision,
          state: to,
          severity: row.severity,
          magnitude: row.magnitude === null ? null : Number(row.magnitude),
          comment,
        })
        .execute();
      return toView(updated);
    });
  }

  /**
   * What run `runId` changed: its new, reopened, worse and expired findings
   * that are still neither accepted nor false positives (what a findings mail
   * lists; at most `limit` of them, worst first), the findings it fixed, and
   * the counts.
   */
  async runChanges(runId: string, options: { readonly limit?: number } = {}): Promise<RunChanges> {
    const limit = options.limit ?? 100;
    const run = await this.#db
      .selectFrom('recoverable_runs')
      .select('job_name')
      .where('id', '=', runId)
      .executeTakeFirst();
    if (run === undefined) throw new ConsistencyError('FINDING_NOT_FOUND', `no run with id ${runId}`);
    const check = run.job_name;
    const [changedRows, countRows, fixedRows, openRow] = await Promise.all([
      this.#db
        .selectFrom('run_findings as rf')
        .innerJoin('findings as f', 'f.id', 'rf.finding_id')
        .selectAll('f')
        .select('rf.change')
        .where('rf.run_id', '=', runId)
        .where('rf.change', 'is not', null)
        .where('f.state', 'not in', ['accepted', 'false_positive'])
        .orderBy('f.severity_rank')
        .orderBy('f.magnitude', (ob) => ob.desc().nullsLast())
        .orderBy('f.id')
        .limit(limit)
        .execute(),
      this.#db
        .selectFrom('run_findings as rf')
        .innerJoin('findings as f', 'f.id', 'rf.finding_id')
        .select(['rf.change', (eb) => eb.fn.countAll<string>().as('n')])
        .where('rf.run_id', '=', runId)
        .where('rf.change', 'is not', null)
        .where('f.state', 'not in', ['accepted', 'false_positive'])
        .groupBy('rf.change')
        .execute(),
      this.#db
        .selectFrom('findings')
        .selectAll()
        .where('fixed_run_id', '=', runId)
        .orderBy('severity_rank')
        .orderBy('id')
        .limit(limit)
        .execute(),
      this.#db
        .selectFrom('findings')
        .select([
          (eb) => eb.fn.countAll<string>().filterWhere('state', 'in', ['open', 'reopened']).as('open'),
          (eb) => eb.fn.countAll<string>().filterWhere('fixed_run_id', '=', runId).as('fixed'),
        ])
        .where('check_name', '=', check)
        .executeTakeFirst(),
    ]);
    const count = (c: string) => Number(countRows.find((r) => r.change === c)?.n ?? 0);
    return {
      runId,
      check,
      changed: changedRows.map((r) => ({ ...toView(r as FindingRow), change: r.change as FindingChange })),
      fixed: fixedRows.map((r) => toView(r as FindingRow)),
      counts: {
        new: count('new'),
        reopened: count('reopened'),
        worse: count('worse'),
        expired: count('expired'),
        stillOpen: Number(openRow?.open ?? 0),
        fixed: Number(openRow?.fixed ?? 0),
      },
    };
  }

  /**
   * The health view per check (`checks`: the catalog's check names): last
   * completed run, open findings by severity, new and fixed by the last
   * completed run, and the trend over the last `trendRuns` completed runs.
   */
  async health(
    checks: readonly string[],
    options: { readonly trendRuns?: number } = {},
  ): Promise<CheckHealth[]> {
    const trendRuns = options.trendRuns ?? 14;
    if (checks.length === 0) return [];
    const [openRows, runs] = await Promise.all([
      this.#db
        .selectFrom('findings')
        .select(['check_name', 'severity', 'state', (eb) => eb.fn.countAll<string>().as('n')])
        .where('check_name', 'in', [...checks])
        .where('state', 'in', ['open', 'reopened', 'accepted'])
        .groupBy(['check_name', 'severity', 'state'])
        .execute(),
      sql<{
        job_name: string;
        id: string;
        completed_at: Date | null;
        reported: string;
        new: string;
        fixed: string;
      }>`
        SELECT r.job_name, r.id, r.completed_at,
               (SELECT count(*) FROM ${this.#t.runFindings} rf WHERE rf.run_id = r.id) AS reported,
               (SELECT count(*) FROM ${this.#t.runFindings} rf WHERE rf.run_id = r.id AND rf.change = 'new') AS new,
               COALESCE(fr.fixed_count, 0) AS fixed
          FROM (SELECT id, job_name, completed_at,
                       row_number() OVER (PARTITION BY job_name ORDER BY completed_at DESC NULLS LAST, id DESC) AS n
                  FROM ${this.#t.runs}
                 WHERE status = 'Completed' AND job_name IN (${sql.join([...checks])})) r
          LEFT JOIN ${this.#t.findingRuns} fr ON fr.run_id = r.id
         WHERE r.n <= ${trendRuns}
         ORDER BY r.job_name, r.completed_at ASC NULLS FIRST, r.id`.execute(this.#db),
    ]);
    return checks.map((check) => {
      const openBySeverity = Object.fromEntries(SEVERITIES.map((s) => [s, 0])) as Record<Severity, number>;
      let accepted = 0;
      for (const r of openRows) {
        if (r.check_name !== check) continue;
        if (r.state === 'accepted') accepted += Number(r.n);
        else if (isSeverity(r.severity)) openBySeverity[r.severity] += Number(r.n);
      }
      const trend = runs.rows
        .filter((r) => r.job_name === check)
        .map((r) => ({
          runId: r.id,
          at: r.completed_at,
          reported: Number(r.reported),
          new: Number(r.new),
          fixed: Number(r.fixed),
        }));
      const last = trend.at(-1);
      return {
        check,
        lastCompletedRun: last ? { runId: last.runId, completedAt: last.at } : null,
        openBySeverity,
        accepted,
        newSincePrevious: last?.new ?? 0,
        fixedSincePrevious: last?.fixed ?? 0,
        trend,
      };
    });
  }
}
