import { Kysely, PostgresDialect, type PostgresPool, sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { ConsistencyError } from './consistency-error.js';
import { checkConsistencySchema } from './consistency-schema.js';
import type { FindingSink, FindingSinkFactory } from './finding-sink.js';
import type { Inconsistency } from './inconsistency.js';
import type { FindingsDatabase } from './run-findings-table.js';
import { SEVERITIES, type Severity } from './severity.js';

/** A finding as stored in `jobs.run_findings`. */
export interface StoredFinding extends Inconsistency {
  readonly id: string;
  readonly runId: string;
  readonly foundAt: Date;
}

/** How many findings of one `(kind, severity)` a run holds. */
export interface FindingCount {
  readonly kind: string;
  readonly severity: Severity;
  readonly count: number;
}

/** Filters and paging for {@link PgFindingStore.list}. */
export interface ListFindingsOptions {
  readonly severity?: Severity;
  readonly kind?: string;
  /** @defaultValue 100 */
  readonly limit?: number;
  /** @defaultValue 0 */
  readonly offset?: number;
}

/** pg's undefined_table / undefined_column: the schema is missing or older than this build. */
const SCHEMA_SQLSTATES = new Set(['42P01', '42703']);

/**
 * The error for a failed statement: `SCHEMA_MISSING` / `SCHEMA_OUTDATED`
 * ("call migrate() from @oxicloud/consistency") when the table or a column is
 * missing, else `DATABASE` with pg's message.
 */
async function databaseError(
  db: Kysely<FindingsDatabase>,
  action: string,
  cause: unknown,
): Promise<ConsistencyError> {
  if (SCHEMA_SQLSTATES.has(String((cause as { code?: unknown } | null)?.code))) {
    const problem = await checkConsistencySchema(db).then(
      () => null,
      (error: unknown) => error,
    );
    if (problem instanceof ConsistencyError) return problem;
  }
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new ConsistencyError('DATABASE', `could not ${action} in jobs.run_findings: ${reason}`, { cause });
}

function toSeverity(value: string): Severity {
  return (SEVERITIES as readonly string[]).includes(value) ? (value as Severity) : 'Drift';
}

/**
 * Triage order: severity worst first, then biggest impact first (a missing
 * blob referenced by more files, or by more bytes, comes before a smaller one),
 * then discovery order.
 */
const severityRank = sql<number>`CASE severity WHEN 'DataLoss' THEN 0 WHEN 'Reclaimable' THEN 1 WHEN 'Regenerable' THEN 2 ELSE 3 END`;
const impactRank = sql<number>`COALESCE((detail->>'ref_count')::bigint, 0)`;
const bytesRank = sql<number>`COALESCE((detail->>'total_bytes')::numeric, 0)`;

/** The {@link FindingSink} of one run, on `jobs.run_findings`. */
export class PgFindingSink implements FindingSink {
  readonly #db: Kysely<FindingsDatabase>;
  readonly #runId: string;

  constructor(db: Kysely<FindingsDatabase>, runId: string) {
    this.#db = db;
    this.#runId = runId;
  }

  /**
   * `INSERT … ON CONFLICT (run_id, kind, resource_id) DO UPDATE SET detail`: idempotent.
   *
   * Returns `true` when the finding is new to the run's counters: freshly
   * inserted, or already there but written by a PREVIOUS attempt of this run
   * after the run's last checkpoint — a batch that recorded it and was then
   * interrupted (kill -9) before its checkpoint, replayed after the resume: its
   * finding was never counted. Times come from the engine's stats: the last
   * resume (`progress_resumed_at_ms[-1]`) and the last checkpoint
   * (`progress_samples[-1][0]`), epoch ms. A repeat within one batch of a
   * resumed attempt would count again: a caller records a finding once per
   * batch (`twoPass` does).
   */
  async recordFinding(finding: Inconsistency): Promise<boolean> {
    try {
      const row = await this.#db
        .insertInto('jobs.run_findings')
        .values({
          id: uuidv7(),
          run_id: this.#runId,
          kind: finding.kind,
          severity: finding.severity,
          resource_id: finding.resourceId,
          detail: JSON.stringify(finding.detail),
        })
        .onConflict((oc) =>
          oc.columns(['run_id', 'kind', 'resource_id']).doUpdateSet({
            detail: (eb) => eb.ref('excluded.detail'),
            severity: (eb) => eb.ref('excluded.severity'),
          }),
        )
        // xmax = 0 only on a freshly inserted row version; found_at is kept by the update. An older row
        // counts when a previous attempt of this run wrote it after the run's last checkpoint.
        .returning(
          sql<boolean>`(xmax = 0) OR EXISTS (
            SELECT 1 FROM jobs.recoverable_runs r
             WHERE r.id = ${this.#runId}
               AND jsonb_typeof(r.stats #> '{progress_resumed_at_ms,-1}') = 'number'
               AND found_at < to_timestamp((r.stats #>> '{progress_resumed_at_ms,-1}')::numeric / 1000)
               AND (jsonb_typeof(r.stats #> '{progress_samples,-1,0}') IS DISTINCT FROM 'number'
                    OR found_at > to_timestamp((r.stats #>> '{progress_samples,-1,0}')::numeric / 1000)))`.as(
            'inserted',
          ),
        )
        .executeTakeFirstOrThrow();
      return row.inserted;
    } catch (cause) {
      throw await databaseError(this.#db, `record ${finding.kind} finding on ${finding.resourceId}`, cause);
    }
  }

  async dropFinding(kind: string, resourceId: string): Promise<boolean> {
    try {
      const result = await this.#db
        .deleteFrom('jobs.run_findings')
        .where('run_id', '=', this.#runId)
        .where('kind', '=', kind)
        .where('resource_id', '=', resourceId)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    } catch (cause) {
      throw await databaseError(this.#db, `drop ${kind} finding on ${resourceId}`, cause);
    }
  }
}

/**
 * Findings on `jobs.run_findings` (kysely over a pg pool): a sink per run
 * for the checks, and the reads the admin surface and alerts need.
 *
 * @example
 * ```ts
 * import { PgFindingStore, checkJob } from '@oxicloud/consistency';
 * const findings = new PgFindingStore({ pool });
 * const handler = checkJob(check, { sinkFactory: findings.sinkFactory, logger });
 * ```
 */
export class PgFindingStore {
  readonly #db: Kysely<FindingsDatabase>;

  /**
   * `pool`: a pg `Pool` (never ended here); or `db`: your own `Kysely` on
   * Postgres, whatever database type it carries (it needs `jobs.run_findings`).
   */
  // biome-ignore lint/suspicious/noExplicitAny: a consumer's Kysely has its own database type
  constructor(options: { readonly pool: PostgresPool } | { readonly db: Kysely<any> }) {
    this.#db =
      'db' in options
        ? (options.db as Kysely<FindingsDatabase>)
        : new Kysely<FindingsDatabase>({ dialect: new PostgresDialect({ pool: options.pool }) });
  }

  /** The sink of one run. */
  sink(runId: string): PgFindingSink {
    return new PgFindingSink(this.#db, runId);
  }

  /** A {@link FindingSinkFactory} for `checkJob`. */
  readonly sinkFactory: FindingSinkFactory = ({ runId }) => this.sink(runId);

  /** One page of a run's findings, in triage order (worst severity, biggest impact first). */
  async list(runId: string, options: ListFindingsOptions = {}): Promise<StoredFinding[]> {
    const limit = options.limit ?? 100;
    const offset = options.offset ?? 0;
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
      throw new ConsistencyError('INVALID_OPTIONS', `limit must be an integer in 1..10000, got ${limit}`);
    }
    if (!Number.isInteger(offset) || offset < 0) {
      throw new ConsistencyError('INVALID_OPTIONS', `offset must be a non-negative integer, got ${offset}`);
    }
    try {
      let query = this.#db.selectFrom('jobs.run_findings').selectAll().where('run_id', '=', runId);
      if (options.severity) query = query.where('severity', '=', options.severity);
      if (options.kind) query = query.where('kind', '=', options.kind);
      const rows = await query
        .orderBy(severityRank)
        .orderBy(impactRank, 'desc')
        .orderBy(bytesRank, 'desc')
        .orderBy('found_at')
        .orderBy('id')
        .limit(limit)
        .offset(offset)
        .execute();
      return rows.map((r) => ({
        id: r.id,
        runId: r.run_id,
        kind: r.kind,
        severity: toSeverity(r.severity),
        resourceId: r.resource_id,
        detail: r.detail,
        foundAt: r.found_at,
      }));
    } catch (cause) {
      throw await databaseError(this.#db, `list the findings of run ${runId}`, cause);
    }
  }

  /** Counts per `(kind, severity)`, worst severity first (the alert e-mail's summary). */
  async summarize(runId: string): Promise<FindingCount[]> {
    try {
      const rows = await this.#db
        .selectFrom('jobs.run_findings')
        .select(['kind', 'severity', (eb) => eb.fn.countAll<string>().as('count')])
        .where('run_id', '=', runId)
        .groupBy(['kind', 'severity'])
        .orderBy(severityRank)
        .orderBy('kind')
        .execute();
      return rows.map((r) => ({ kind: r.kind, severity: toSeverity(r.severity), count: Number(r.count) }));
    } catch (cause) {
      throw await databaseError(this.#db, `count the findings of run ${runId}`, cause);
    }
  }
}
