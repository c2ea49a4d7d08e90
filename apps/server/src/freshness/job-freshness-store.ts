import { engineSchema, engineTable } from '@oxicloud/recoverable';
import type pg from 'pg';

/** One row of `jobs.job_registrations`: what the cluster knows of a job's freshness. */
export interface JobFreshnessRecord {
  readonly job: string;
  readonly firstRegisteredAt: Date;
  readonly lastRunAt: Date | null;
  readonly lastSuccessAt: Date | null;
  readonly lastDeepSuccessAt: Date | null;
  readonly overdueAlertedAt: Date | null;
  readonly deepOverdueAlertedAt: Date | null;
}

/** How a run ended, for {@link PgJobFreshnessStore.recordRun}. */
export interface RecordedRun {
  readonly job: string;
  readonly at: Date;
  readonly success: boolean;
  /** A deep run (`deep=true`): a success also counts for the deep cadence. */
  readonly deep?: boolean;
}

interface Row {
  job_name: string;
  first_registered_at: Date;
  last_run_at: Date | null;
  last_success_at: Date | null;
  last_deep_success_at: Date | null;
  overdue_alerted_at: Date | null;
  deep_overdue_alerted_at: Date | null;
}

/** The upsert of {@link PgJobFreshnessStore.recordRun}, on `registrations` (a qualified table). */
const upsertRun = (registrations: string) => `
  INSERT INTO ${registrations} AS r (job_name, last_run_at, last_success_at, last_deep_success_at)
  VALUES ($1, $2, CASE WHEN $3 THEN $2::timestamptz END, CASE WHEN $3 AND $4 THEN $2::timestamptz END)
  ON CONFLICT (job_name) DO UPDATE SET
    last_run_at = GREATEST(r.last_run_at, EXCLUDED.last_run_at),
    last_success_at = GREATEST(r.last_success_at, EXCLUDED.last_success_at),
    last_deep_success_at = GREATEST(r.last_deep_success_at, EXCLUDED.last_deep_success_at),
    overdue_alerted_at = CASE WHEN $3 THEN NULL ELSE r.overdue_alerted_at END,
    deep_overdue_alerted_at = CASE WHEN $3 AND $4 THEN NULL ELSE r.deep_overdue_alerted_at END`;

/** Options of {@link PgJobFreshnessStore}. */
export interface JobFreshnessStoreOptions {
  /**
   * The Postgres schema of the engine's tables (`job_registrations`, and
   * `recoverable_runs` it reads): the one the migrations were given, e.g.
   * `oxijobs` beside a real OxiCloud. Validated by `engineSchema()` of
   * `@oxicloud/recoverable`.
   * @defaultValue `jobs`
   */
  readonly schema?: string;
}

/**
 * `jobs.job_registrations` (`<schema>.job_registrations` with the option
 * `schema`) on a pg pool: each job's first registration on
 * this database, its last run and last success (shared by every process),
 * and the claim that its current overdue episode was mailed. A success
 * clears the claim; `GREATEST` keeps the newest time whatever order
 * processes write in.
 */
export class PgJobFreshnessStore {
  readonly #pool: pg.Pool;
  readonly #registrations: string;
  readonly #recoverableRuns: string;
  readonly #upsertRun: string;

  /** @throws Error for a `schema` the engine does not take (the message says what is allowed). */
  constructor(pool: pg.Pool, options: JobFreshnessStoreOptions = {}) {
    this.#pool = pool;
    const schema = engineSchema(options.schema);
    this.#registrations = engineTable(schema, 'job_registrations');
    this.#recoverableRuns = engineTable(schema, 'recoverable_runs');
    this.#upsertRun = upsertRun(this.#registrations);
  }

  /** Records the jobs as registered; a job already known keeps its first registration time. */
  async register(jobs: readonly string[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.#pool.query(
      `INSERT INTO ${this.#registrations} (job_name) SELECT unnest($1::text[]) ON CONFLICT (job_name) DO NOTHING`,
      [[...jobs]],
    );
  }

  /** A Part 1 run ended (`at` = the end of the run). */
  async recordRun(run: RecordedRun): Promise<void> {
    await this.#pool.query(this.#upsertRun, [run.job, run.at, run.success, run.deep === true]);
  }

  /**
   * A recoverable run reached its terminal write: its end is the run row's
   * own `completed_at` (else its last progress), so this table and
   * `jobs.recoverable_runs` agree to the microsecond. `deep`: the run's
   * `deep` option (the engine's `RunFinishedEvent.options`).
   */
  async recordRecoverableRun(runId: string, success: boolean, deep = false): Promise<void> {
    await this.#pool.query(
      `INSERT INTO ${this.#registrations} AS r (job_name, last_run_at, last_success_at, last_deep_success_at)
       SELECT job_name, at, CASE WHEN $2 THEN at END, CASE WHEN $2 AND deep THEN at END
         FROM (SELECT job_name, COALESCE(completed_at, last_progress_at) AS at,
                      $3::boolean AS deep
                 FROM ${this.#recoverableRuns} WHERE id = $1) AS run
       ON CONFLICT (job_name) DO UPDATE SET
         last_run_at = GREATEST(r.last_run_at, EXCLUDED.last_run_at),
         last_success_at = GREATEST(r.last_success_at, EXCLUDED.last_success_at),
         last_deep_success_at = GREATEST(r.last_deep_success_at, EXCLUDED.last_deep_success_at),
         overdue_alerted_at = CASE WHEN $2 THEN NULL ELSE r.overdue_alerted_at END,
         deep_overdue_alerted_at = CASE WHEN EXCLUDED.last_deep_success_at IS NOT NULL
                                        THEN NULL ELSE r.deep_overdue_alerted_at END`,
      [runId, success, deep],
    );
  }

  /** Every job known on this database. */
  async list(): Promise<JobFreshnessRecord[]> {
    const { rows } = await this.#pool.query<Row>(
      `SELECT job_name, first_registered_at, last_run_at, last_success_at, last_deep_success_at,
              overdue_alerted_at, deep_overdue_alerted_at
         FROM ${this.#registrations} ORDER BY job_name`,
    );
    return rows.map((r) => ({
      job: r.job_name,
      firstRegisteredAt: r.first_registered_at,
      lastRunAt: r.last_run_at,
      lastSuccessAt: r.last_success_at,
      lastDeepSuccessAt: r.last_deep_success_at,
      overdueAlertedAt: r.overdue_alerted_at,
      deepOverdueAlertedAt: r.deep_overdue_alerted_at,
    }));
  }

  /**
   * Claims the mail of the job's current overdue episode for this process:
   * `true` exactly once per episode across every process (until a success
   * clears it), and never when a success landed since `lastSuccessAt` was read.
   */
  async claimOverdueAlert(job: string, deep: boolean, lastSuccessAt: Date | null): Promise<boolean> {
    const claim = deep ? 'deep_overdue_alerted_at' : 'overdue_alerted_at';
    const success = deep ? 'last_deep_success_at' : 'last_success_at';
    const { rowCount } = await this.#pool.query(
      `UPDATE ${this.#registrations} SET ${claim} = NOW()
        WHERE job_name = $1 AND ${claim} IS NULL AND ${success} IS NOT DISTINCT FROM $2`,
      [job, lastSuccessAt],
    );
    return rowCount === 1;
  }

  /** Gives a claim back (the mail could not be sent): the next check tries again. */
  async releaseOverdueAlert(job: string, deep: boolean): Promise<void> {
    const claim = deep ? 'deep_overdue_alerted_at' : 'overdue_alerted_at';
    await this.#pool.query(`UPDATE ${this.#registrations} SET ${claim} = NULL WHERE job_name = $1`, [job]);
  }
}
