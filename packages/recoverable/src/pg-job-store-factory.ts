import { type Kysely, sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { RecoverableTables } from './db/recoverable-runs-table.js';
import type { JobStore } from './job-store.js';
import type { JobStoreFactory } from './job-store-factory.js';
import { PgJobStore } from './pg-job-store.js';
import { MAX_RESUME_MARKS } from './progress.js';
import type { RunOutcome } from './run-outcome.js';
import { type RunRecord, toRunRecord } from './run-record.js';
import { ACTIVE_STATUSES } from './run-status.js';

const TABLE = 'jobs.recoverable_runs' as const;

/**
 * {@link JobStoreFactory} on `jobs.recoverable_runs`, plus the queries the
 * engine's admin operations need (cancel, listing, boot sweep).
 *
 * @example
 * ```ts
 * const db = new Kysely<RecoverableTables>({ dialect: new PostgresDialect({ pool }) });
 * const outcome = await runOrResume(myJob, new PgJobStoreFactory(db));
 * ```
 */
export class PgJobStoreFactory implements JobStoreFactory {
  readonly #db: Kysely<RecoverableTables>;

  constructor(db: Kysely<RecoverableTables>) {
    this.#db = db;
  }

  async latestRun(jobName: string): Promise<RunRecord | null> {
    const row = await this.#db
      .selectFrom(TABLE)
      .selectAll()
      .where('job_name', '=', jobName)
      .orderBy(sql`(status IN ('Running', 'Paused', 'CancelRequested'))`, 'desc')
      .orderBy('started_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? toRunRecord(row) : null;
  }

  async insertRunning(jobName: string, params: Readonly<Record<string, unknown>>): Promise<RunRecord | null> {
    const row = await this.#db
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
      })
      // The only unique constraint an insert with a fresh v7 id can hit is one_active_run_per_job.
      .onConflict((oc) => oc.doNothing())
      .returningAll()
      .executeTakeFirst();
    return row ? toRunRecord(row) : null;
  }

  async resumePaused(runId: string): Promise<RunRecord | null> {
    const row = await this.#db
      .updateTable(TABLE)
      .set({
        status: 'Running',
        last_progress_at: sql<Date>`now()`,
        attempt: sql<number>`attempt + 1`,
        attempt_started_at: sql<Date>`now()`,
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

  storeFor(record: RunRecord, params: Readonly<Record<string, unknown>>): JobStore {
    return new PgJobStore(this.#db, record, params);
  }

  async recordTotalEstimate(runId: string, total: number): Promise<void> {
    await this.#db
      .updateTable(TABLE)
      .set({
        stats: sql<string>`(CASE WHEN jsonb_typeof(stats) = 'object' THEN stats ELSE '{}'::jsonb END)
          || jsonb_build_object('total_estimate', ${total}::numeric)`,
      })
      .where('id', '=', runId)
      .execute();
  }

  async finishRun(runId: string, outcome: RunOutcome): Promise<RunRecord> {
    const base = { last_progress_at: sql<Date>`now()` };
    const query = this.#db.updateTable(TABLE).where('id', '=', runId);
    const written =
      outcome.kind === 'completed'
        ? query.set({ ...base, status: 'Completed', completed_at: sql<Date>`now()` })
        : outcome.kind === 'paused'
          ? query.set({
              ...base,
              status: 'Paused',
              cursor: Buffer.from(
                outcome.cursor.buffer,
                outcome.cursor.byteOffset,
                outcome.cursor.byteLength,
              ),
            })
          : query.set({
              ...base,
              status: 'Failed',
              completed_at: sql<Date>`now()`,
              error_message: outcome.message,
            });
    const row = await written.returningAll().executeTakeFirst();
    if (!row) throw new Error(`run ${runId} vanished from ${TABLE} before its terminal write`);
    return toRunRecord(row);
  }

  /** The job's active run, or `null`. */
  async activeRun(jobName: string): Promise<RunRecord | null> {
    const row = await this.#db
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
    const row = await this.#db
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
    const result = await this.#db
      .updateTable(TABLE)
      .set({ status: 'CancelRequested' })
      .where('id', '=', runId)
      .where('status', '=', 'Running')
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** The job's runs, newest first. */
  async listRuns(jobName: string, limit: number, offset: number): Promise<RunRecord[]> {
    const rows = await this.#db
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
    const row = await this.#db
      .selectFrom(TABLE)
      .selectAll()
      .where('id', '=', runId)
      .where('job_name', '=', jobName)
      .executeTakeFirst();
    return row ? toRunRecord(row) : null;
  }

  /**
   * The boot sweep, exactly as the plan gives it: every Running or
   * CancelRequested row → Paused, `error_message` kept or set to
   * 'server restart mid-run'. Never resumes. Returns the swept rows.
   */
  async sweep(): Promise<Array<{ runId: string; jobName: string }>> {
    const rows = await this.#db
      .updateTable(TABLE)
      .set({
        status: 'Paused',
        error_message: sql<string>`COALESCE(error_message, 'server restart mid-run')`,
      })
      .where('status', 'in', ['Running', 'CancelRequested'])
      .returning(['id', 'job_name'])
      .execute();
    return rows.map((r) => ({ runId: r.id, jobName: r.job_name }));
  }
}
