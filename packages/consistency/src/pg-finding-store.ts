import type { RunTransaction } from '@oxicloud/recoverable';
import { type Kysely, sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { closePendingRuns, closeRun, type RunCloseResult } from './close-run.js';
import { ConsistencyError } from './consistency-error.js';
import { checkConsistencySchema } from './consistency-schema.js';
import type {
  CheckRunFacts,
  FindingKey,
  FindingWriteContext,
  FindingWriteResult,
  FindingWriter,
} from './finding-sink.js';
import { type FindingTables, findingTables, kyselyOf, type PgConsistencyOptions } from './finding-tables.js';
import type { Inconsistency } from './inconsistency.js';
import type { EngineFindingsTables } from './run-findings-table.js';
import { isSeverity, SEVERITIES, type Severity } from './severity.js';
import { checkNameOfRun, trackFindings, untrackDrops } from './track-findings.js';

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
  // biome-ignore lint/suspicious/noExplicitAny: a consumer's Kysely has its own database type
  db: Kysely<any>,
  tables: FindingTables,
  action: string,
  cause: unknown,
): Promise<ConsistencyError> {
  if (SCHEMA_SQLSTATES.has(String((cause as { code?: unknown } | null)?.code))) {
    const problem = await checkConsistencySchema(db, { schema: tables.schema }).then(
      () => null,
      (error: unknown) => error,
    );
    if (problem instanceof ConsistencyError) return problem;
  }
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new ConsistencyError('DATABASE', `could not ${action} in ${tables.runFindingsName}: ${reason}`, {
    cause,
  });
}

function toSeverity(value: string): Severity {
  return isSeverity(value) ? value : 'Drift';
}

/**
 * Triage order: severity worst first, then biggest impact first (a missing
 * blob referenced by more files, or by more bytes, comes before a smaller one),
 * then discovery order.
 */
const severityOrder = sql<number>`CASE severity ${sql.join(
  SEVERITIES.map((name, rank) => sql`WHEN ${sql.lit(name)} THEN ${sql.lit(rank)}`),
  sql` `,
)} ELSE ${sql.lit(SEVERITIES.length)} END`;
const impactRank = sql<number>`COALESCE((detail->>'ref_count')::bigint, 0)`;
const bytesRank = sql<number>`COALESCE((detail->>'total_bytes')::numeric, 0)`;

/**
 * Findings on `jobs.run_findings` (kysely over a pg pool): the
 * {@link FindingWriter} a run's batches write through (in their checkpoint's
 * transaction), and the reads the admin surface and alerts need.
 *
 * @example
 * ```ts
 * import { PgFindingStore, checkJob } from '@oxicloud/consistency';
 * const findings = new PgFindingStore({ pool });
 * const handler = checkJob(check, { findings, logger });
 * ```
 */
export class PgFindingStore implements FindingWriter {
  /** The caller's Kysely (or one on the pool), as given. */
  // biome-ignore lint/suspicious/noExplicitAny: a consumer's Kysely has its own database type
  readonly #plain: Kysely<any>;
  /** The same, placed in the engine schema. */
  readonly #db: Kysely<EngineFindingsTables>;
  readonly #t: FindingTables;

  /**
   * `pool`: a pg `Pool` (never ended here); or `db`: your own `Kysely` on
   * Postgres, whatever database type it carries (it needs `jobs.run_findings`).
   * `schema`: the engine schema the tables live in, the one given to
   * `migrate()` (and to the engine). @defaultValue `jobs`
   *
   * @throws Error when `schema` is not a schema name the engine takes (see `engineSchema`).
   */
  constructor(options: PgConsistencyOptions) {
    this.#t = findingTables(options.schema);
    this.#plain = kyselyOf(options);
    this.#db = this.#t.on(this.#plain);
  }

  /**
   * One batch's findings, inside `tx` (the checkpoint's transaction): one
   * multi-row `INSERT … ON CONFLICT (run_id, kind, resource_id) DO UPDATE SET
   * detail, severity` (idempotent; `xmax = 0` tells a new row from an
   * updated one), one `DELETE` for the drops. Ids are UUIDv7 from this
   * process, so findings recorded in order list in order.
   *
   * In the same transaction each record upserts its finding across runs
   * (`jobs.findings`, fingerprint = check, kind, resource id: see
   * `trackFindings`) and its run row links to it with what the run changed
   * (`new`, `reopened`, `worse`, `expired`); each drop is remembered as not
   * examined by this run (`jobs.run_unexamined`), so the closing step never
   * fixes its finding on this run's word.
   */
  async writeFindings(
    tx: RunTransaction,
    runId: string,
    records: readonly Inconsistency[],
    drops: readonly FindingKey[],
    context?: FindingWriteContext,
  ): Promise<FindingWriteResult> {
    // The checkpoint transaction is the job's, in no schema: ours go in the engine schema.
    const db = this.#t.on(tx as unknown as Kysely<EngineFindingsTables>);
    try {
      const writeContext: FindingWriteContext = context ?? { checkName: await checkNameOfRun(db, runId) };
      const tracked = await trackFindings(db, runId, writeContext, records);
      let recordedNew: boolean[] = [];
      if (records.length > 0) {
        const storedChange = sql.ref(`${this.#t.runFindingsName}.change`);
        const rows = await db
          .insertInto('run_findings')
          .values(
            records.map((finding) => ({
              id: uuidv7(),
              run_id: runId,
              kind: finding.kind,
              severity: finding.severity,
              resource_id: finding.resourceId,
              detail: JSON.stringify(finding.detail),
              finding_id: tracked.get(`${finding.kind}\u0000${finding.resourceId}`)?.findingId ?? null,
              change: tracked.get(`${finding.kind}\u0000${finding.resourceId}`)?.change ?? null,
            })),
          )
          .onConflict((oc) =>
            oc.columns(['run_id', 'kind', 'resource_id']).doUpdateSet({
              detail: (eb) => eb.ref('excluded.detail'),
              severity: (eb) => eb.ref('excluded.severity'),
              finding_id: (eb) => eb.ref('excluded.finding_id'),
              // The first report of the run says what it changed; a re-record keeps it.
              change: sql<string | null>`COALESCE(${storedChange}, excluded.change)`,
            }),
          )
          // xmax = 0 only on a freshly inserted row version; found_at is kept by the update.
          .returning(['kind', 'resource_id', sql<boolean>`(xmax = 0)`.as('inserted')])
          .execute();
        const inserted = new Map(rows.map((r) => [`${r.kind}\u0000${r.resource_id}`, r.inserted]));
        recordedNew = records.map((f) => inserted.get(`${f.kind}\u0000${f.resourceId}`) === true);
      }
      let dropped: boolean[] = [];
      if (drops.length > 0) {
        const rows = await db
          .deleteFrom('run_findings')
          .where('run_id', '=', runId)
          .where((eb) =>
            eb.or(drops.map((d) => eb.and([eb('kind', '=', d.kind), eb('resource_id', '=', d.resourceId)]))),
          )
          .returning(['kind', 'resource_id'])
          .execute();
        const gone = new Set(rows.map((r) => `${r.kind}\u0000${r.resource_id}`));
        dropped = drops.map((d) => gone.has(`${d.kind}\u0000${d.resourceId}`));
        await untrackDrops(db, runId, writeContext.checkName, drops);
      }
      return { recordedNew, dropped };
    } catch (cause) {
      throw await databaseError(
        this.#plain,
        this.#t,
        `write ${records.length} finding(s) and drop ${drops.length} of run ${runId}`,
        cause,
      );
    }
  }

  /**
   * Remembers a check run's grace boundary (`jobs.finding_runs`) before its
   * first batch; a resumed run keeps the row it has. The closing step closes
   * a run only when it has this row.
   */
  async beginRun(run: CheckRunFacts): Promise<void> {
    try {
      await this.#db
        .insertInto('finding_runs')
        .values({
          run_id: run.runId,
          check_name: run.checkName,
          started_at: run.startedAt,
          grace_ms: run.graceMs,
          grace_boundary: new Date(run.startedAt.getTime() - run.graceMs),
          kind_grace: JSON.stringify(run.kindGraceMs ?? {}),
        })
        .onConflict((oc) => oc.column('run_id').doNothing())
        .execute();
    } catch (cause) {
      throw await databaseError(
        this.#plain,
        this.#t,
        `remember the grace boundary of run ${run.runId}`,
        cause,
      );
    }
  }

  /**
   * The closing step of a `Completed` run (`closeRun`: one transaction,
   * once; idempotent). `checkJob` calls it after the run's terminal write.
   */
  closeRun(runId: string): Promise<RunCloseResult | null> {
    return closeRun(this.#db, this.#t, runId);
  }

  /** Closes the `Completed` runs of `checkName` left unclosed by a crash, oldest first. */
  closePendingRuns(checkName: string): Promise<RunCloseResult[]> {
    return closePendingRuns(this.#db, this.#t, checkName);
  }

  /** Writes one batch of findings of `runId` in a transaction of its own (tests, tools). */
  async write(runId: string, records: readonly Inconsistency[], drops: readonly FindingKey[] = []) {
    return this.#plain
      .transaction()
      .execute((tx) => this.writeFindings(tx as unknown as RunTransaction, runId, records, drops));
  }

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
      let query = this.#db.selectFrom('run_findings').selectAll().where('run_id', '=', runId);
      if (options.severity) query = query.where('severity', '=', options.severity);
      if (options.kind) query = query.where('kind', '=', options.kind);
      const rows = await query
        .orderBy(severityOrder)
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
      throw await databaseError(this.#plain, this.#t, `list the findings of run ${runId}`, cause);
    }
  }

  /** Counts per `(kind, severity)`, worst severity first (the alert e-mail's summary). */
  async summarize(runId: string): Promise<FindingCount[]> {
    try {
      const rows = await this.#db
        .selectFrom('run_findings')
        .select(['kind', 'severity', (eb) => eb.fn.countAll<string>().as('count')])
        .where('run_id', '=', runId)
        .groupBy(['kind', 'severity'])
        .orderBy(severityOrder)
        .orderBy('kind')
        .execute();
      return rows.map((r) => ({ kind: r.kind, severity: toSeverity(r.severity), count: Number(r.count) }));
    } catch (cause) {
      throw await databaseError(this.#plain, this.#t, `count the findings of run ${runId}`, cause);
    }
  }
}
