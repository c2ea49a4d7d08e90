import type {
  CoordinatedJob,
  PeriodicRunRecord,
  RunPermit,
  SlotClaim,
  TickCoordinator,
} from '@oxicloud/scheduler';
import { ClusterError } from './cluster-error.js';
import { type EngineTables, engineTables } from './engine-tables.js';
import { dateOrNull, type Queryable } from './queryable.js';

/** Options of {@link PgTickCoordinator}; defaults in {@link TICK_COORDINATOR_DEFAULTS}. */
export interface PgTickCoordinatorOptions {
  readonly pool: Queryable;
  /** This process's id and the database clock's offset (a {@link NodeMembership} gives both). */
  readonly node: { readonly nodeId: string; readonly offsetMs: number };
  /** How long a periodic job's run is held without a renewal. @defaultValue 30000 */
  readonly leaseMs?: number;
  /** History rows older than this are deleted (at most once an hour, by any node). @defaultValue 30 days */
  readonly historyRetentionMs?: number;
  /**
   * The Postgres schema of the cluster tables (`periodic_state`,
   * `periodic_runs`): the one `migrate(db, { schema })` was given, e.g.
   * `oxijobs` beside a real OxiCloud. Validated by `engineSchema()` of
   * `@oxicloud/recoverable`.
   * @defaultValue `jobs`
   */
  readonly schema?: string;
}

/** The defaults of {@link PgTickCoordinatorOptions}. */
export const TICK_COORDINATOR_DEFAULTS = { leaseMs: 30_000, historyRetentionMs: 30 * 86_400_000 } as const;

/** The current slot, in epoch ms of the database clock: `floor(now / interval) × interval`. */
const CURRENT_SLOT = `SELECT (floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint / $2::bigint) * $2::bigint AS slot_ms`;
/** Whole intervals between the claimed slot and the previous one, less one: the slots nobody claimed. */
const GAP = `GREATEST(0, round(extract(epoch FROM EXCLUDED.last_slot - p.last_slot) * 1000 / $2::bigint)::bigint - 1)`;
const PRUNE_EVERY_MS = 3_600_000;

/**
 * The Postgres side of the scheduler's {@link TickCoordinator}, on
 * `jobs.periodic_state` and `jobs.periodic_runs` (in the schema of the option
 * `schema`):
 *
 * - **A tick** is one compare-and-set: the slot is computed from the
 *   database clock, and `last_slot` moves to it only where it is older
 *   (`INSERT … ON CONFLICT (job) DO UPDATE … WHERE last_slot < slot
 *   RETURNING`, graphile-worker's pattern). Concurrent claims of a slot wait
 *   on the row; exactly one gets a row back.
 * - **A job's run** is held in its row (`owner_node`, `lease_until`), taken
 *   only when free or expired, renewed while it runs, released at its end:
 *   no session-level advisory lock, which a dropped pooled connection would
 *   lose silently and which names a backend, not a node.
 * - **Every run** (tick or trigger) is a row of `jobs.periodic_runs`.
 *
 * @example
 * ```ts
 * const node = new NodeMembership({ pool, version: '0.1.0', logger });
 * await node.start();
 * const registry = new JobRegistry({ logger, coordinator: new PgTickCoordinator({ pool, node }) });
 * ```
 */
export class PgTickCoordinator implements TickCoordinator {
  readonly renewEveryMs: number;
  readonly leaseMs: number;
  readonly #pool: Queryable;
  readonly #node: PgTickCoordinatorOptions['node'];
  readonly #retentionMs: number;
  readonly #tables: EngineTables;
  #lastPrune = 0;

  constructor(options: PgTickCoordinatorOptions) {
    this.#pool = options.pool;
    this.#node = options.node;
    this.#tables = engineTables(options.schema);
    this.leaseMs = options.leaseMs ?? TICK_COORDINATOR_DEFAULTS.leaseMs;
    if (!Number.isFinite(this.leaseMs) || this.leaseMs < 1_000) {
      throw new ClusterError(
        'INVALID_OPTIONS',
        `leaseMs must be at least 1000 (ms), got ${String(options.leaseMs)}`,
      );
    }
    this.#retentionMs = options.historyRetentionMs ?? TICK_COORDINATOR_DEFAULTS.historyRetentionMs;
    if (!Number.isFinite(this.#retentionMs) || this.#retentionMs < 60_000) {
      throw new ClusterError(
        'INVALID_OPTIONS',
        `historyRetentionMs must be at least 60000 (ms), got ${String(options.historyRetentionMs)}`,
      );
    }
    this.renewEveryMs = Math.max(250, Math.floor(this.leaseMs / 3));
  }

  get nodeId(): string {
    return this.#node.nodeId;
  }

  async prepare(jobs: readonly CoordinatedJob[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.#pool.query(
      `INSERT INTO ${this.#tables.periodicState} (job) SELECT unnest($1::text[]) ON CONFLICT (job) DO NOTHING`,
      [jobs.map((job) => job.name)],
    );
  }

  nextWakeAt(intervalMs: number, localNowMs: number): number {
    const offset = this.#node.offsetMs;
    const dbNow = localNowMs + offset;
    const nextSlot = (Math.floor(dbNow / intervalMs) + 1) * intervalMs;
    // Just after the slot starts on the database clock, so the claim computes that slot.
    return nextSlot - offset + Math.min(250, Math.max(1, Math.floor(intervalMs / 20)));
  }

  async claimSlot(job: string, intervalMs: number): Promise<SlotClaim> {
    const { rows } = await this.#pool.query(
      `WITH c AS (${CURRENT_SLOT}),
       won AS (
         INSERT INTO ${this.#tables.periodicState} AS p (job, last_slot)
         SELECT $1, to_timestamp(c.slot_ms / 1000.0) FROM c
         ON CONFLICT (job) DO UPDATE
            SET last_slot = EXCLUDED.last_slot,
                last_missed = CASE WHEN p.last_slot IS NULL THEN 0 ELSE ${GAP} END,
                missed_slots = p.missed_slots + CASE WHEN p.last_slot IS NULL THEN 0 ELSE ${GAP} END
          WHERE p.last_slot IS NULL OR p.last_slot < EXCLUDED.last_slot
         RETURNING p.last_missed)
       SELECT c.slot_ms::text AS slot_ms, (SELECT last_missed FROM won) AS missed,
              EXISTS (SELECT 1 FROM won) AS won
         FROM c`,
      [job, Math.round(intervalMs)],
    );
    return claimOf(rows[0]);
  }

  async claimCatchUp(job: string, intervalMs: number): Promise<SlotClaim> {
    const { rows } = await this.#pool.query(
      `WITH c AS (${CURRENT_SLOT}),
       won AS (
         UPDATE ${this.#tables.periodicState} AS p
            SET last_slot = to_timestamp(c.slot_ms / 1000.0),
                last_missed = GREATEST(0, round(extract(epoch FROM to_timestamp(c.slot_ms / 1000.0) - p.last_slot) * 1000 / $2::bigint)::bigint - 1),
                missed_slots = p.missed_slots + GREATEST(0, round(extract(epoch FROM to_timestamp(c.slot_ms / 1000.0) - p.last_slot) * 1000 / $2::bigint)::bigint - 1)
           FROM c
          WHERE p.job = $1 AND p.last_slot IS NOT NULL
            AND p.last_slot < to_timestamp((c.slot_ms - $2::bigint) / 1000.0)
         RETURNING p.last_missed)
       SELECT c.slot_ms::text AS slot_ms, (SELECT last_missed FROM won) AS missed,
              EXISTS (SELECT 1 FROM won) AS won
         FROM c`,
      [job, Math.round(intervalMs)],
    );
    return claimOf(rows[0]);
  }

  async acquire(job: string): Promise<RunPermit> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const taken = await this.#pool.query(
        `INSERT INTO ${this.#tables.periodicState} AS p (job, owner_node, running_since, lease_until)
         VALUES ($1, $2, now(), now() + $3 * interval '1 millisecond')
         ON CONFLICT (job) DO UPDATE
            SET owner_node = EXCLUDED.owner_node, running_since = EXCLUDED.running_since,
                lease_until = EXCLUDED.lease_until
          WHERE p.owner_node IS NULL OR p.lease_until IS NULL OR p.lease_until < now()
         RETURNING owner_node`,
        [job, this.nodeId, this.leaseMs],
      );
      if ((taken.rowCount ?? 0) > 0) return { acquired: true };
      const { rows } = await this.#pool.query(
        `SELECT owner_node, running_since FROM ${this.#tables.periodicState}
          WHERE job = $1 AND owner_node IS NOT NULL AND lease_until >= now()`,
        [job],
      );
      const held = rows[0];
      // Released (or expired) between the two statements: try again.
      if (held === undefined) continue;
      return {
        acquired: false,
        owner: String(held['owner_node']),
        since: dateOrNull(held['running_since']),
      };
    }
    return { acquired: false, owner: 'unknown', since: null };
  }

  async renew(job: string): Promise<boolean> {
    const result = await this.#pool.query(
      `UPDATE ${this.#tables.periodicState} SET lease_until = now() + $3 * interval '1 millisecond'
        WHERE job = $1 AND owner_node = $2`,
      [job, this.nodeId, this.leaseMs],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async release(job: string): Promise<void> {
    await this.#pool.query(
      `UPDATE ${this.#tables.periodicState} SET owner_node = NULL, running_since = NULL, lease_until = NULL
        WHERE job = $1 AND owner_node = $2`,
      [job, this.nodeId],
    );
  }

  async record(run: PeriodicRunRecord): Promise<void> {
    const outcome = run.outcome;
    await this.#pool.query(
      `INSERT INTO ${this.#tables.periodicRuns}
         (job, slot, source, node, started_at, finished_at, outcome, count, cause, message, extra)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        run.job,
        run.slot,
        run.source,
        this.nodeId,
        run.startedAt,
        run.finishedAt,
        outcome.kind,
        outcome.kind === 'ok' ? outcome.count : null,
        run.cause ?? null,
        outcome.kind === 'err' ? outcome.message : null,
        JSON.stringify(outcome.kind === 'ok' ? outcome.extra : {}),
      ],
    );
    if (Date.now() - this.#lastPrune >= PRUNE_EVERY_MS) {
      this.#lastPrune = Date.now();
      await this.pruneHistory();
    }
  }

  /** Deletes history rows older than the retention; returns how many. */
  async pruneHistory(): Promise<number> {
    const result = await this.#pool.query(
      `DELETE FROM ${this.#tables.periodicRuns} WHERE finished_at < now() - $1 * interval '1 millisecond'`,
      [this.#retentionMs],
    );
    return result.rowCount ?? 0;
  }
}

function claimOf(row: Record<string, unknown> | undefined): SlotClaim {
  return {
    won: row?.['won'] === true,
    slot: new Date(Number(row?.['slot_ms'] ?? 0)),
    missed: Number(row?.['missed'] ?? 0),
  };
}
