import { engineSchema, engineTable, type SchemaOptions } from '@oxicloud/recoverable';
import { Kysely, PostgresDialect, type PostgresPool, type RawBuilder, sql } from 'kysely';
import type { EngineFindingsTables } from './run-findings-table.js';

/**
 * The options of every `Pg*` class of this package: a pg `Pool` (never ended
 * here) or your own `Kysely` on Postgres (whatever database type it carries;
 * never destroyed here), and `schema`, the engine schema the tables live in:
 * the one given to `migrate()` and to the `RecoverableEngine`.
 *
 * @example
 * ```ts
 * await migrateRuns(pool, { schema: 'oxijobs' });
 * await migrateFindings(pool, { schema: 'oxijobs' });
 * const findings = new PgFindingStore({ pool, schema: 'oxijobs' });
 * ```
 */
export type PgConsistencyOptions = (
  | { readonly pool: PostgresPool }
  // biome-ignore lint/suspicious/noExplicitAny: a consumer's Kysely has its own database type
  | { readonly db: Kysely<any> }
) &
  SchemaOptions;

/** The caller's Kysely, or one on the caller's pool. */
// biome-ignore lint/suspicious/noExplicitAny: a consumer's Kysely has its own database type
export function kyselyOf(options: PgConsistencyOptions): Kysely<any> {
  return 'db' in options
    ? options.db
    : new Kysely<unknown>({ dialect: new PostgresDialect({ pool: options.pool }) });
}

/**
 * This package's tables, and the runs table it reads, in one engine schema
 * (the `schema` option of every `Pg*` class, the one given to `migrate()`):
 * qualified once, as references for raw SQL and as names for messages.
 */
export interface FindingTables {
  /** The engine schema, validated. */
  readonly schema: string;
  /** `<schema>.run_findings`, for messages. */
  readonly runFindingsName: string;
  readonly runFindings: RawBuilder<unknown>;
  readonly findings: RawBuilder<unknown>;
  readonly findingEvents: RawBuilder<unknown>;
  readonly findingRuns: RawBuilder<unknown>;
  readonly runUnexamined: RawBuilder<unknown>;
  /** `@oxicloud/recoverable`'s `recoverable_runs`, in the same schema. */
  readonly runs: RawBuilder<unknown>;
  readonly repairPlans: RawBuilder<unknown>;
  readonly repairPlanItems: RawBuilder<unknown>;
  readonly repairAudit: RawBuilder<unknown>;
  /**
   * `db` (a Kysely or a transaction) with its unqualified tables in the
   * engine schema. A transaction stays one; `db` itself is left as it was.
   */
  // biome-ignore lint/suspicious/noExplicitAny: a consumer's Kysely (or transaction) has its own database type
  on(db: Kysely<any>): Kysely<EngineFindingsTables>;
}

/**
 * The tables in `schema` (default `jobs`).
 *
 * @throws Error when `schema` is not a schema name the engine takes (see `engineSchema`).
 */
export function findingTables(schema?: string): FindingTables {
  const name = engineSchema(schema);
  const table = (t: string) => sql.table(engineTable(name, t));
  return Object.freeze({
    schema: name,
    runFindingsName: engineTable(name, 'run_findings'),
    runFindings: table('run_findings'),
    findings: table('findings'),
    findingEvents: table('finding_events'),
    findingRuns: table('finding_runs'),
    runUnexamined: table('run_unexamined'),
    runs: table('recoverable_runs'),
    repairPlans: table('repair_plans'),
    repairPlanItems: table('repair_plan_items'),
    repairAudit: table('repair_audit'),
    // biome-ignore lint/suspicious/noExplicitAny: a consumer's Kysely (or transaction) has its own database type
    on: (db: Kysely<any>) => (db as Kysely<EngineFindingsTables>).withSchema(name),
  });
}
