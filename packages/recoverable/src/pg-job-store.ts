import { type Kysely, sql } from 'kysely';
import { type EngineRunsTables, inEngineRuns, type RecoverableTables } from './db/recoverable-runs-table.js';
import { failpoint } from './failpoint.js';
import type { BatchWrites, CheckpointProgress, JobStore, RunFacts, RunTransaction } from './job-store.js';
import { DEFAULT_LEASE_MS } from './lease/lease-settings.js';
import { MAX_PROGRESS_SAMPLES, MIN_SAMPLE_SPACING_MS } from './progress.js';
import { RecoverableError } from './recoverable-error.js';
import { NO_RUN_OPTIONS, type RunOptions } from './run-options.js';
import { isJsonObject, type RunRecord } from './run-record.js';
import { isRunStatus, type RunStatus } from './run-status.js';
import { DEFAULT_ENGINE_SCHEMA, engineSchema, engineTable } from './schema/engine-schema.js';

/** Keys of `stats` the engine owns; a checkpoint's `counters` may not use them. */
export const RESERVED_STATS_KEYS: readonly string[] = [
  'count',
  'scanned_count',
  'total_estimate',
  'progress_samples',
  'progress_resumed_at_ms',
];

/** The statuses a run's owner may still write (a cancel request is written by anyone). */
const OWNED_STATUSES = ['Running', 'CancelRequested'] as const;

/**
 * The fence of a run's writes: the owner node and attempt the row was
 * acquired with (`sql/004_run_leases.sql`), as a WHERE condition on
 * `jobs.recoverable_runs`. A node that took the run over wrote another owner
 * and a higher attempt; a janitor's pause left the owned statuses.
 */
export function fenceCondition(run: { ownerNode: string | null; attempt: number }) {
  return sql<boolean>`owner_node IS NOT DISTINCT FROM ${run.ownerNode}::text
    AND attempt = ${run.attempt}::int
    AND status IN (${sql.join([...OWNED_STATUSES])})`;
}

/** `now() + leaseMs` (database clock). */
export function leaseEnd(leaseMs: number) {
  return sql<Date>`now() + make_interval(secs => ${leaseMs / 1000}::double precision)`;
}

/** The error of a write its fence refused. */
export function leaseLost(runId: string, what: string): RecoverableError {
  return new RecoverableError(
    'LEASE_LOST',
    `run ${runId}: ${what} refused by its fence (another node took the run over, or it was paused): this node stops it and writes nothing more`,
  );
}

/**
 * {@link JobStore} for one row of `jobs.recoverable_runs` (of the engine
 * schema `schema`, when another one is given). The process that
 * runs the job owns the row: every write carries the fence (owner node and
 * attempt, see {@link fenceCondition}) and renews the lease; a write the
 * fence refuses throws `LEASE_LOST`.
 */
export class PgJobStore implements JobStore {
  readonly runId: string;
  readonly startedAt: Date;
  readonly params: Readonly<Record<string, unknown>>;
  readonly options: RunOptions;
  readonly facts: RunFacts;
  readonly connectionRetryMs: number | undefined;
  /** The caller's Kysely, untouched: the checkpoint transaction a batch's own writes join. */
  readonly #db: Kysely<RecoverableTables>;
  /** The engine schema of the runs table. */
  readonly #schema: string;
  /** The same Kysely placed in the engine schema: this store's reads outside a transaction. */
  readonly #own: Kysely<EngineRunsTables>;
  /** `<schema>.recoverable_runs`, for raw SQL and messages. */
  readonly #table: string;
  readonly #fence: { readonly ownerNode: string | null; readonly attempt: number };
  readonly #leaseMs: number;
  /**
   * The status the last checkpoint's UPDATE returned, not yet read: the batch
   * loop's `checkpoint` then `status()` costs one round trip, not two. A cancel
   * that lands between the two is seen at the next batch boundary.
   */
  #statusFromCheckpoint: RunStatus | undefined;
  /**
   * The cursor this store last wrote or read (the run's stored one at first).
   * Each checkpoint's UPDATE requires it in the row: a checkpoint lost in a
   * Postgres crash (see {@link PgJobStore.checkpoint}) shows as a mismatch
   * (`CHECKPOINT_LOST`), never as a silently skipped batch.
   */
  #written: Uint8Array | null;

  /**
   * `schema` is the engine schema the runs table lives in (the one given to
   * `migrate()`). @throws Error when it is not a schema name the engine takes.
   */
  constructor(
    db: Kysely<RecoverableTables>,
    run: Pick<RunRecord, 'runId' | 'startedAt'> &
      Partial<Pick<RunRecord, 'attempt' | 'attemptStartedAt' | 'cursor' | 'stats' | 'ownerNode'>>,
    params: Readonly<Record<string, unknown>>,
    connectionRetryMs?: number,
    options: RunOptions = NO_RUN_OPTIONS,
    leaseMs: number = DEFAULT_LEASE_MS,
    schema: string = DEFAULT_ENGINE_SCHEMA,
  ) {
    this.#schema = engineSchema(schema);
    this.#table = engineTable(this.#schema, 'recoverable_runs');
    this.#db = db;
    this.#own = inEngineRuns(db, this.#schema);
    this.#fence = { ownerNode: run.ownerNode ?? null, attempt: run.attempt ?? 1 };
    this.#leaseMs = leaseMs;
    this.connectionRetryMs = connectionRetryMs;
    this.runId = run.runId;
    this.startedAt = run.startedAt;
    this.params = Object.freeze({ ...params });
    this.options = Object.freeze({ force: options.force, deep: options.deep });
    this.facts = Object.freeze({
      attempt: run.attempt ?? 1,
      attemptStartedAt: run.attemptStartedAt ?? run.startedAt,
      cursor: run.cursor ?? null,
      counters: Object.freeze(countersOf(run.stats)),
    });
    this.#written = run.cursor ?? null;
  }

  async status(): Promise<RunStatus> {
    const fromCheckpoint = this.#statusFromCheckpoint;
    this.#statusFromCheckpoint = undefined;
    if (fromCheckpoint !== undefined) return fromCheckpoint;
    const row = await this.#own
      .selectFrom('recoverable_runs')
      .select('status')
      .where('id', '=', this.runId)
      .executeTakeFirst();
    if (!row) throw this.#gone();
    // An unknown status string (a hand-edited row) reads as a cancel request: the safest answer.
    return isRunStatus(row.status) ? row.status : 'CancelRequested';
  }

  async loadCursor(): Promise<Uint8Array | null> {
    const row = await this.#own
      .selectFrom('recoverable_runs')
      .select('cursor')
      .where('id', '=', this.runId)
      .executeTakeFirst();
    if (!row) throw this.#gone();
    this.#written = row.cursor === null ? null : new Uint8Array(row.cursor);
    return this.#written;
  }

  /**
   * One UPDATE: cursor, `stats.count += deltaCount`, `stats.scanned_count +=
   * progress.scanned ?? deltaCount`, each counter added, `total_estimate` set
   * when given, a progress sample appended (see `MAX_PROGRESS_SAMPLES`),
   * `last_progress_at = NOW()`.
   *
   * **A checkpoint does not wait for the disk** (`synchronous_commit = off`
   * for its transaction only): it commits, is visible at once, and reaches the
   * WAL on disk within `wal_writer_delay` (×3 at worst). A Postgres crash in
   * that window loses the checkpoint together with the batch's own writes (one
   * transaction), which is exactly the state before the batch: the batch
   * replays, and its findings are upserts. A server crash loses nothing (the
   * commit is in Postgres). Nothing else is weaker: the run start and the
   * terminal write stay synchronous, and a synchronous commit flushes all WAL
   * before it, so a Completed/Paused/Failed run never rests on a lost
   * checkpoint. A lost checkpoint is detected, not skipped: the UPDATE requires
   * the cursor this store last wrote, so the next checkpoint after a crash
   * fails with `CHECKPOINT_LOST` and the batch loop reloads the stored cursor.
   */
  async checkpoint(
    cursor: Uint8Array,
    deltaCount: number,
    progress: CheckpointProgress = {},
    writes?: BatchWrites,
  ): Promise<void> {
    if (writes === undefined) return this.#advance(this.#db, cursor, deltaCount, progress);
    await this.#db.transaction().execute(async (tx) => {
      // The fence first: it takes the run row's lock, so no takeover lands while the batch writes;
      // when it matches no row, the throw rolls the transaction back (the batch's writes with it).
      await this.#claim(tx);
      const added = await writes(tx as unknown as RunTransaction);
      // Test-only: a kill here lands between the batch's own writes and the commit of its checkpoint.
      failpoint('checkpoint.after_batch_writes');
      const counters = { ...progress.counters };
      for (const [key, value] of Object.entries(added?.counters ?? {})) {
        counters[key] = (counters[key] ?? 0) + value;
      }
      await this.#advance(tx, cursor, deltaCount + (added?.count ?? 0), {
        ...progress,
        scanned: progress.scanned ?? deltaCount,
        counters,
      });
    });
  }

  /**
   * The fenced UPDATE of the run row (renews the lease); `LEASE_LOST` when it
   * matches no row. It also bounds how long this transaction may sit idle
   * (`idle_in_transaction_session_timeout` = the lease, local to it): a node
   * stalled inside its checkpoint (SIGSTOP, a frozen VM) would otherwise hold
   * the row lock, and no janitor or takeover could touch the run.
   */
  async #claim(db: Kysely<RecoverableTables>): Promise<void> {
    const result = await sql<{ status: string }>`
      UPDATE ${sql.table(this.#table)}
         SET lease_until = ${leaseEnd(this.#leaseMs)}
        FROM (SELECT set_config('idle_in_transaction_session_timeout', ${String(this.#leaseMs)}, true)) AS idle_bound
       WHERE id = ${this.runId}
         AND ${fenceCondition(this.#fence)}
      RETURNING status`.execute(db);
    if (result.rows.length === 0) throw await this.#refused(db, 'checkpoint');
  }

  /** `RUN_NOT_FOUND` when the row is gone, else `LEASE_LOST`. */
  async #refused(db: Kysely<RecoverableTables>, what: string): Promise<RecoverableError> {
    const row = await this.#runs(db)
      .selectFrom('recoverable_runs')
      .select('id')
      .where('id', '=', this.runId)
      .executeTakeFirst();
    return row ? leaseLost(this.runId, what) : this.#gone();
  }

  async #advance(
    db: Kysely<RecoverableTables>,
    cursor: Uint8Array,
    deltaCount: number,
    progress: CheckpointProgress,
  ): Promise<void> {
    if (!(cursor instanceof Uint8Array)) {
      throw new RecoverableError('INVALID_CHECKPOINT', 'checkpoint cursor must be a Uint8Array');
    }
    checkCount('deltaCount', deltaCount);
    const scanned = progress.scanned ?? deltaCount;
    checkCount('progress.scanned', scanned);
    if (progress.totalEstimate !== undefined) checkCount('progress.totalEstimate', progress.totalEstimate);
    const counters: Record<string, number> = {};
    for (const [key, value] of Object.entries(progress.counters ?? {})) {
      if (RESERVED_STATS_KEYS.includes(key)) {
        throw new RecoverableError(
          'INVALID_CHECKPOINT',
          `checkpoint counter "${key}" is reserved by the engine; reserved keys: ${RESERVED_STATS_KEYS.join(', ')}`,
        );
      }
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        throw new RecoverableError(
          'INVALID_CHECKPOINT',
          `checkpoint counter "${key}" must be a finite number`,
        );
      }
      counters[key] = value;
    }
    const total = progress.totalEstimate === undefined ? {} : { total_estimate: progress.totalEstimate };
    const expected = this.#written === null ? null : toBuffer(this.#written);
    const result = await sql<{ status: string }>`
      WITH no_disk_wait AS (
        -- SET LOCAL synchronous_commit = off, for this checkpoint's transaction only (see checkpoint)
        SELECT set_config('synchronous_commit', 'off', true) AS v
      ), cur AS (
        SELECT id,
               CASE WHEN jsonb_typeof(stats) = 'object' THEN stats ELSE '{}'::jsonb END AS s,
               (extract(epoch FROM now()) * 1000)::bigint AS now_ms
          FROM ${sql.table(this.#table)}
         WHERE id = ${this.runId}
           AND cursor IS NOT DISTINCT FROM ${expected}::bytea
           AND ${fenceCondition(this.#fence)}
      ), base AS (
        SELECT id, s, now_ms,
               COALESCE((s->>'count')::numeric, 0) + ${deltaCount}::numeric AS new_count,
               COALESCE((s->>'scanned_count')::numeric, 0) + ${scanned}::numeric AS new_scanned,
               CASE WHEN jsonb_typeof(s->'progress_samples') = 'array'
                    THEN s->'progress_samples' ELSE '[]'::jsonb END AS samples
          FROM cur
      ), thinned AS (
        SELECT id, s, new_count, new_scanned,
               CASE WHEN jsonb_array_length(samples) >= 2
                     AND now_ms - COALESCE((samples -> (-2) ->> 0)::numeric, 0) < ${MIN_SAMPLE_SPACING_MS}::numeric
                     -- never replace the last sample before a resume: it closes the pre-pause segment
                     AND COALESCE((s -> 'progress_resumed_at_ms' ->> (-1))::numeric, 0)
                         <= COALESCE((samples -> (-1) ->> 0)::numeric, 0)
                    THEN samples - (-1)
                    ELSE samples END
               || jsonb_build_array(jsonb_build_array(now_ms, new_scanned)) AS samples
          FROM base
      ), trimmed AS (
        SELECT id, s, new_count, new_scanned,
               (SELECT jsonb_agg(e ORDER BY o)
                  FROM jsonb_array_elements(samples) WITH ORDINALITY AS t(e, o)
                 WHERE o > jsonb_array_length(samples) - ${MAX_PROGRESS_SAMPLES}::int) AS samples
          FROM thinned
      ), counters AS (
        SELECT COALESCE(
                 jsonb_object_agg(c.key, COALESCE((trimmed.s->>c.key)::numeric, 0) + c.value::numeric),
                 '{}'::jsonb) AS merged
          FROM trimmed, jsonb_each_text(${JSON.stringify(counters)}::jsonb) AS c
      )
      UPDATE ${sql.table(this.#table)} r
         SET cursor = ${toBuffer(cursor)},
             stats = t.s || counters.merged
                     || jsonb_build_object('count', t.new_count,
                                           'scanned_count', t.new_scanned,
                                           'progress_samples', t.samples)
                     || ${JSON.stringify(total)}::jsonb,
             last_progress_at = now(),
             lease_until = ${leaseEnd(this.#leaseMs)}
        FROM trimmed t, counters, no_disk_wait
       WHERE r.id = t.id
      RETURNING r.status
    `.execute(db);
    const row = result.rows[0];
    if (!row) throw await this.#lostOrGone(db);
    this.#written = cursor;
    this.#statusFromCheckpoint = isRunStatus(row.status) ? row.status : 'CancelRequested';
  }

  /**
   * Why a checkpoint's UPDATE matched no row: the run is gone, its fence
   * refused this store (`LEASE_LOST`), or its stored cursor is not ours.
   */
  async #lostOrGone(db: Kysely<RecoverableTables>): Promise<RecoverableError> {
    const result = await sql<{ cursor: Uint8Array | null; fenced: boolean }>`
      SELECT cursor, (${fenceCondition(this.#fence)}) AS fenced
        FROM ${sql.table(this.#table)}
       WHERE id = ${this.runId}`.execute(db);
    const row = result.rows[0];
    if (!row) return this.#gone();
    if (!row.fenced) return leaseLost(this.runId, 'checkpoint');
    const hex = (c: Uint8Array | null): string => (c === null ? 'none' : Buffer.from(c).toString('hex'));
    return new RecoverableError(
      'CHECKPOINT_LOST',
      `run ${this.runId}: stored cursor ${hex(row.cursor)} is not the last one written (${hex(this.#written)}); a checkpoint was lost (Postgres crash), the batch replays`,
    );
  }

  /** `db` (this store's Kysely or a checkpoint's transaction) placed in the engine schema. */
  #runs(db: Kysely<RecoverableTables>): Kysely<EngineRunsTables> {
    return inEngineRuns(db, this.#schema);
  }

  #gone(): RecoverableError {
    return new RecoverableError('RUN_NOT_FOUND', `run ${this.runId} no longer exists in ${this.#table}`);
  }
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function checkCount(name: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new RecoverableError(
      'INVALID_CHECKPOINT',
      `checkpoint ${name} must be a finite non-negative number, got ${String(value)}`,
    );
  }
}

/** The numeric stats a handler added (every key but the engine's own). */
function countersOf(stats: unknown): Record<string, number> {
  const counters: Record<string, number> = {};
  if (!isJsonObject(stats)) return counters;
  for (const [key, value] of Object.entries(stats)) {
    if (key === 'count' || key === 'scanned_count' || !RESERVED_STATS_KEYS.includes(key)) {
      if (typeof value === 'number' && Number.isFinite(value)) counters[key] = value;
    }
  }
  return counters;
}
