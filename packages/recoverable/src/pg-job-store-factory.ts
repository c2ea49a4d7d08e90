import { type Kysely, sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { type EngineRunsTables, inEngineRuns, type RecoverableTables } from './db/recoverable-runs-table.js';
import type { JobStore } from './job-store.js';
import type { RunFence } from './job-store-factory.js';
import { DEFAULT_LEASE_MS } from './lease/lease-settings.js';
import { createNodeId } from './lease/node-id.js';
import { fenceCondition, leaseEnd, leaseLost, PgJobStore } from './pg-job-store.js';
import { MAX_RESUME_MARKS } from './progress.js';
import type { RunOptions } from './run-options.js';
import type { RunOutcome } from './run-outcome.js';
import { type RunRecord, toRunRecord } from './run-record.js';
import type { RunRepository } from './run-repository.js';
import { ACTIVE_STATUSES } from './run-status.js';
import { engineSchema, engineTable } from './schema/engine-schema.js';

const TABLE = 'recoverable_runs';

/** How many pauses a run's history keeps. */
export const MAX_PAUSE_HISTORY = 32;

/** The pause reason the boot sweep writes. */
export const RESTART_PAUSE_REASON = 'server restart mid-run';

/** `pauses` with `{ at: now(), reason }` appended, the last {@link MAX_PAUSE_HISTORY} kept. */
function appendPause(reason: string) {
  return appendPauseOf(sql<string>`${reason}::text`);
}

/** {@link appendPause} with the reason as an SQL expression (one per row). */
function appendPauseOf(reason: ReturnType<typeof sql<string>>) {
  return sql<string>`(SELECT COALESCE(jsonb_agg(e ORDER BY o), '[]'::jsonb)
    FROM (SELECT e, o, count(*) OVER () AS n
            FROM jsonb_array_elements(
                   CASE WHEN jsonb_typeof(pauses) = 'array' THEN pauses ELSE '[]'::jsonb END
                   || jsonb_build_array(jsonb_build_object('at', to_jsonb(now()), 'reason', ${reason}))
                 ) WITH ORDINALITY AS t(e, o)) history
   WHERE o > n - ${MAX_PAUSE_HISTORY}::int)`;
}

/** `active_ms` with the running segment that ends at `until` added. */
function closeSegment(until: 'now' | 'last_progress') {
  const end = until === 'now' ? sql`now()` : sql`GREATEST(last_progress_at, running_since)`;
  return sql<number>`active_ms + COALESCE((extract(epoch FROM (${end} - running_since)) * 1000)::bigint, 0)`;
}

/**
 * {@link JobStoreFactory} on `jobs.recoverable_runs` (or `recoverable_runs`
 * of the engine schema given as `schema`), plus the queries the engine's
 * admin operations need (cancel, listing, boot sweep).
 *
 * @example
 * ```ts
 * const db = new Kysely<RecoverableTables>({ dialect: new PostgresDialect({ pool }) });
 * const outcome = await runOrResume(myJob, new PgJobStoreFactory(db));
 * ```
 */
export class PgJobStoreFactory implements RunRepository {
  /** The caller's Kysely, untouched: the stores' checkpoint transactions (a job's own writes) run on it. */
  readonly #db: Kysely<RecoverableTables>;
  /** The same Kysely placed in the engine schema: this factory's own queries. */
  readonly #runs: Kysely<EngineRunsTables>;
  readonly #schema: string;
  /** `<schema>.recoverable_runs`, for raw SQL and messages. */
  readonly #table: string;
  readonly #connectionRetryMs: number | undefined;
  readonly nodeId: string;
  readonly #leaseMs: number;

  /**
   * `connectionRetryMs` is handed to every store (`JobStore.connectionRetryMs`);
   * `nodeId` is written as the owner of the runs this factory starts or resumes
   * (default: a fresh {@link createNodeId}), with a lease of `leaseMs` (default 30 s).
   * `schema` is the engine schema the runs table lives in (default `jobs`; the
   * one given to `migrate()`), handed to every store.
   *
   * @throws Error when `schema` is not a schema name the engine takes (see `engineSchema`).
   */
  constructor(
    db: Kysely<RecoverableTables>,
    options: { connectionRetryMs?: number; nodeId?: string; leaseMs?: number; schema?: string } = {},
  ) {
    this.#schema = engineSchema(options.schema);
    this.#table = engineTable(this.#schema, TABLE);
    this.#db = db;
    this.#runs = inEngineRuns(db, this.#schema);
    this.#connectionRetryMs = options.connectionRetryMs;
    this.nodeId = options.nodeId ?? createNodeId();
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  }

  async latestRun(jobName: string): Promise<RunRecord | null> {
    const row = await this.#runs
      .selectFrom(TABLE)
      .selectAll()
      .where('job_name', '=', jobName)
      .orderBy(sql`(status IN (${sql.join(ACTIVE_STATUSES)}))`, 'desc')
      .orderBy('started_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? toRunRecord(row) : null;
  }

  async insertRunning(jobName: string, params: Readonly<Record<string, unknown>>): Promise<RunRecord | null> {
    const row = await this.#runs
      .insertInto(TABLE)
      .values({
        id: uuidv7(),
        job_name: jobName,
        status: 'Running',
        started_at: sql<Date>`now()`,
        last_progress_at: sql<Date>`now()`,
        cursor: null,
        stats: '{}',
        params: JSON.stringify(params),
        attempt: 1,
        attempt_started_at: sql<Date>`now()`,
        running_since: sql<Date>`now()`,
        owner_node: this.nodeId,
        lease_until: leaseEnd(this.#leaseMs),
      })
      // The only unique constraint an insert with a fresh v7 id can hit is one_active_run_per_job.
      .onConflict((oc) => oc.doNothing())
      .returningAll()
      .executeTakeFirst();
    return row ? toRunRecord(row) : null;
  }

  async resumePaused(runId: string): Promise<RunRecord | null> {
    const row = await this.#runs
      .updateTable(TABLE)
      .set({
        status: 'Running',
        last_progress_at: sql<Date>`now()`,
        // The takeover: this node owns the run now, and the higher attempt fences out the previous owner.
        attempt: sql<number>`attempt + 1`,
        owner_node: this.nodeId,
        lease_until: leaseEnd(this.#leaseMs),
        attempt_started_at: sql<Date>`now()`,
        running_since: sql<Date>`now()`,
        // The pause's reason (boot sweep, janitor) no longer holds once the run runs again.
        error_message: null,
        // Remember when the run resumed: progress pairs straddling it (the paused time) are not a rate.
        stats: sql<string>`CASE WHEN jsonb_typeof(stats) = 'object'
          THEN stats || jsonb_build_object('progress_resumed_at_ms', (
            SELECT COALESCE(jsonb_agg(m ORDER BY o), '[]'::jsonb)
              FROM (SELECT m, o, count(*) OVER () AS n
                      FROM jsonb_array_elements(
                             CASE WHEN jsonb_typeof(stats->'progress_resumed_at_ms') = 'array'
                                  THEN stats->'progress_resumed_at_ms' ELSE '[]'::jsonb END
                             || to_jsonb((extract(epoch FROM now()) * 1000)::bigint)
                           ) WITH ORDINALITY AS t(m, o)) marks
             WHERE o > n - ${MAX_RESUME_MARKS}::int))
          ELSE stats END`,
      })
      .where('id', '=', runId)
      .where('status', '=', 'Paused')
      .returningAll()
      .executeTakeFirst();
    return row ? toRunRecord(row) : null;
  }

  storeFor(record: RunRecord, params: Readonly<Record<string, unknown>>, options?: RunOptions): JobStore {
    return new PgJobStore(
      this.#db,
      record,
      params,
      this.#connectionRetryMs,
      options,
      this.#leaseMs,
      this.#schema,
    );
  }

  async recordTotalEstimate(run: RunFence, total: number): Promise<void> {
    const row = await this.#runs
      .updateTable(TABLE)
      .set({
        stats: sql<string>`(CASE WHEN jsonb_typeof(stats) = 'object' THEN stats ELSE '{}'::jsonb END)
          || jsonb_build_object('total_estimate', ${total}::numeric)`,
      })
      .where('id', '=', run.runId)
      .where(fenceCondition(run))
      .returning('id')
      .executeTakeFirst();
    if (!row) throw leaseLost(run.runId, 'the total estimate');
  }

  /**
   * The terminal write. A pause appends `{ at, reason }` to the run's pause
   * history (`reason` defaults to `outcome.reason`, else 'cancel requested');
   * every outcome closes the running segment into `active_ms`, at now or, after
   * an outage (`segmentEnd: 'last_progress'`), at the last checkpoint. A
   * Completed run carries no `error_message`. After an outage a pause keeps
   * the STORED cursor (empty when none): checkpoints do not wait for the disk,
   * so one the process saw commit may have died with a crashed Postgres, and
   * only the stored cursor matches the stored findings and counts.
   */
  async finishRun(
    run: RunFence,
    outcome: RunOutcome,
    pauseReason?: string,
    segmentEnd: 'now' | 'last_progress' = 'now',
  ): Promise<RunRecord> {
    const { runId } = run;
    const base = {
      last_progress_at: sql<Date>`now()`,
      active_ms: closeSegment(segmentEnd),
      running_since: null,
      // The lease ends with the attempt; owner_node stays: who ran it last.
      lease_until: null,
    };
    const query = this.#runs.updateTable(TABLE).where('id', '=', runId).where(fenceCondition(run));
    const written =
      outcome.kind === 'completed'
        ? query.set({ ...base, status: 'Completed', completed_at: sql<Date>`now()`, error_message: null })
        : outcome.kind === 'paused'
          ? query.set({
              ...base,
              status: 'Paused',
              pauses: appendPause(outcome.reason ?? pauseReason ?? 'cancel requested'),
              // A pause the run wrote itself is no crash: no reason stands in error_message.
              error_message: null,
              cursor: pauseCursor(outcome.cursor, segmentEnd),
            })
          : query.set({
              ...base,
              status: 'Failed',
              completed_at: sql<Date>`now()`,
              error_message: outcome.message,
            });
    const row = await written.returningAll().executeTakeFirst();
    if (row) return toRunRecord(row);
    const exists = await this.#runs.selectFrom(TABLE).select('id').where('id', '=', runId).executeTakeFirst();
    if (exists) throw leaseLost(runId, 'the terminal write');
    throw new Error(`run ${runId} vanished from ${this.#table} before its terminal write`);
  }

  /** The job's active run, or `null`. */
  async activeRun(jobName: string): Promise<RunRecord | null> {
    const row = await this.#runs
      .selectFrom(TABLE)
      .selectAll()
      .where('job_name', '=', jobName)
      .where('status', 'in', ACTIVE_STATUSES)
      .limit(1)
      .executeTakeFirst();
    return row ? toRunRecord(row) : null;
  }

  /** `Running` → `CancelRequested` for the job's running run; its id, or `null` when none was Running. */
  async requestCancel(jobName: string): Promise<string | null> {
    const row = await this.#runs
      .updateTable(TABLE)
      .set({ status: 'CancelRequested' })
      .where('job_name', '=', jobName)
      .where('status', '=', 'Running')
      .returning('id')
      .executeTakeFirst();
    return row?.id ?? null;
  }

  /** `Running` → `CancelRequested` for one run by id; `true` when it was Running. */
  async requestCancelById(runId: string): Promise<boolean> {
    const result = await this.#runs
      .updateTable(TABLE)
      .set({ status: 'CancelRequested' })
      .where('id', '=', runId)
      .where('status', '=', 'Running')
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** The job's runs, newest first. */
  async listRuns(jobName: string, limit: number, offset: number): Promise<RunRecord[]> {
    const rows = await this.#runs
      .selectFrom(TABLE)
      .selectAll()
      .where('job_name', '=', jobName)
      .orderBy('started_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
    return rows.map(toRunRecord);
  }

  /** One run of the job, or `null`. `runId` must already be a well-formed UUID. */
  async getRun(jobName: string, runId: string): Promise<RunRecord | null> {
    const row = await this.#runs
      .selectFrom(TABLE)
      .selectAll()
      .where('id', '=', runId)
      .where('job_name', '=', jobName)
      .executeTakeFirst();
    return row ? toRunRecord(row) : null;
  }

  /**
   * The boot sweep: the Running or CancelRequested rows whose owner `isDead`
   * judges gone (a dead process of this host; rows without an owner) →
   * Paused, with 'server restart mid-run' in their pause history and in
   * `error_message` (the run did not pause itself; a resume clears it) and
   * their active time counted
   * up to their last progress. Runs other live nodes execute are left alone.
   * Never resumes. Returns the swept rows.
   */
  async sweep(
    isDead: (ownerNode: string | null) => boolean,
  ): Promise<Array<{ runId: string; jobName: string }>> {
    const active = await this.#runs
      .selectFrom(TABLE)
      .select(['id', 'owner_node'])
      .where('status', 'in', ['Running', 'CancelRequested'])
      .execute();
    const dead = active.filter((r) => isDead(r.owner_node ?? null));
    if (dead.length === 0) return [];
    const swept: Array<{ runId: string; jobName: string }> = [];
    for (const run of dead) {
      // Compare-and-set on the owner seen: a run resumed meanwhile by a live node is left alone.
      const row = await this.#runs
        .updateTable(TABLE)
        .set({
          status: 'Paused',
          pauses: appendPause(RESTART_PAUSE_REASON),
          error_message: RESTART_PAUSE_REASON,
          active_ms: closeSegment('last_progress'),
          running_since: null,
          lease_until: null,
        })
        .where('id', '=', run.id)
        .where('status', 'in', ['Running', 'CancelRequested'])
        .where(sql<boolean>`owner_node IS NOT DISTINCT FROM ${run.owner_node ?? null}::text`)
        .returning(['id', 'job_name'])
        .executeTakeFirst();
      if (row) swept.push({ runId: row.id, jobName: row.job_name });
    }
    return swept;
  }

  /**
   * The janitor: Running or CancelRequested runs of other nodes whose lease
   * expired (database clock; a row without a lease counts from its last
   * progress) → Paused with "node <owner> lost mid-run" in their history and
   * in `error_message` (cleared by the resume), at their last checkpoint. Never resumes. Returns the paused rows.
   */
  async pauseExpired(
    exceptOwner: string,
  ): Promise<Array<{ runId: string; jobName: string; ownerNode: string | null }>> {
    const lostReason = sql<string>`'node ' || COALESCE(owner_node, '(unknown)') || ' lost mid-run'`;
    const rows = await this.#runs
      .updateTable(TABLE)
      .set({
        status: 'Paused',
        pauses: appendPauseOf(lostReason),
        error_message: lostReason,
        active_ms: closeSegment('last_progress'),
        running_since: null,
        lease_until: null,
      })
      .where('status', 'in', ['Running', 'CancelRequested'])
      .where(
        sql<boolean>`COALESCE(lease_until, last_progress_at + make_interval(secs => ${this.#leaseMs / 1000}::double precision)) < now()`,
      )
      .where(sql<boolean>`owner_node IS DISTINCT FROM ${exceptOwner}::text`)
      .returning(['id', 'job_name', 'owner_node'])
      .execute();
    return rows.map((r) => ({ runId: r.id, jobName: r.job_name, ownerNode: r.owner_node ?? null }));
  }

  /**
   * The heartbeat: renews the lease of the given runs (one UPDATE) where this
   * node still owns them (owner, attempt, Running or CancelRequested).
   * Returns the runs renewed with their status; a run missing from the answer
   * lost its lease.
   */
  async renewLeases(runs: readonly RunFence[]): Promise<Array<{ runId: string; status: string }>> {
    if (runs.length === 0) return [];
    const result = await sql<{ id: string; status: string }>`
      UPDATE ${sql.table(this.#table)} r
         SET lease_until = ${leaseEnd(this.#leaseMs)}
        FROM unnest(${runs.map((r) => r.runId)}::uuid[], ${runs.map((r) => r.attempt)}::int[]) AS h(id, attempt)
       WHERE r.id = h.id
         AND r.attempt = h.attempt
         AND r.owner_node = ${this.nodeId}::text
         AND r.status IN ('Running', 'CancelRequested')
      RETURNING r.id, r.status`.execute(this.#runs);
    return result.rows.map((r) => ({ runId: r.id, status: r.status }));
  }

  /**
   * The reconnect sweep: the given runs (this process's, no longer executed
   * here) → Paused with `reason` in their history, where the fence still
   * matches (this owner and attempt, Running or CancelRequested). Their
   * cursor is the last checkpoint. Returns the ids paused.
   */
  async pauseRuns(runs: readonly RunFence[], reason: string): Promise<string[]> {
    const paused: string[] = [];
    for (const run of runs) {
      const row = await this.#runs
        .updateTable(TABLE)
        .set({
          status: 'Paused',
          pauses: appendPause(reason),
          active_ms: closeSegment('last_progress'),
          running_since: null,
          lease_until: null,
        })
        .where('id', '=', run.runId)
        .where(fenceCondition(run))
        .returning('id')
        .executeTakeFirst();
      if (row) paused.push(row.id);
    }
    return paused;
  }
}

/** A pause's cursor: the outcome's, or after an outage the stored one (see `finishRun`). */
function pauseCursor(cursor: Uint8Array, segmentEnd: 'now' | 'last_progress') {
  if (segmentEnd === 'last_progress') return sql<Buffer>`COALESCE(cursor, ''::bytea)`;
  return Buffer.from(cursor.buffer, cursor.byteOffset, cursor.byteLength);
}
