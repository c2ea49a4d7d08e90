import { hostname } from 'node:os';
import { createNodeId, isDeadLocalOwner } from '@oxicloud/recoverable';
import type { Logger } from '@oxicloud/scheduler';
import { ClusterError } from './cluster-error.js';
import { type EngineTables, engineTables } from './engine-tables.js';
import { dateOrNull, type Queryable } from './queryable.js';

/**
 * The nodes this process runs now (started, not stopped): a node of this
 * host with this process's pid is dead (its pid was reused, as a container's
 * pid 1 is after a restart) unless it is one of these.
 */
const LIVE_IN_THIS_PROCESS = new Set<string>();

/** Options of {@link NodeMembership}; defaults in {@link NODE_MEMBERSHIP_DEFAULTS}. */
export interface NodeMembershipOptions {
  readonly pool: Queryable;
  /** This process's id. @defaultValue `createNodeId()` of `@oxicloud/recoverable` (`<host>:<pid>:<6 hex>`) */
  readonly nodeId?: string;
  /** The software version the row shows (e.g. the server's package version). */
  readonly version: string;
  /** How often the node's row is touched (database clock). @defaultValue 5000 */
  readonly heartbeatMs?: number;
  /** A node whose last heartbeat is older than this is deleted by any node. @defaultValue 300000 (5 min) */
  readonly pruneAfterMs?: number;
  readonly logger: Logger;
  /**
   * The Postgres schema of the cluster tables (`nodes`, `periodic_state`):
   * the one `migrate(db, { schema })` was given, e.g. `oxijobs` beside a real
   * OxiCloud. Validated by `engineSchema()` of `@oxicloud/recoverable`.
   * @defaultValue `jobs`
   */
  readonly schema?: string;
}

/** The defaults of {@link NodeMembershipOptions}. */
export const NODE_MEMBERSHIP_DEFAULTS = { heartbeatMs: 5_000, pruneAfterMs: 300_000 } as const;

/** One row of `jobs.nodes`, with what the database clock says of it. */
export interface ClusterNodeRow {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly version: string;
  readonly startedAt: Date;
  readonly lastHeartbeatAt: Date;
  /** Milliseconds since the last heartbeat, by the database clock. */
  readonly heartbeatAgeMs: number;
}

const TARGET = 'oxicloud::cluster';

/**
 * This process's row in `jobs.nodes` (`<schema>.nodes` with the option
 * `schema`): registered by {@link NodeMembership.start},
 * touched every `heartbeatMs` (the database clock stamps it), deleted by
 * {@link NodeMembership.stop}. Each heartbeat also measures the offset of the
 * database clock from the local one ({@link NodeMembership.offsetMs}, what the
 * tick coordinator aligns its wake-ups with) and deletes nodes silent for
 * longer than `pruneAfterMs`. A node pruned while it was partitioned registers
 * again at its next heartbeat.
 *
 * @example
 * ```ts
 * const node = new NodeMembership({ pool, version: '0.1.0', logger });
 * await node.start();
 * // … serve …
 * await node.stop();
 * ```
 */
export class NodeMembership {
  readonly nodeId: string;
  readonly heartbeatMs: number;
  readonly pruneAfterMs: number;
  readonly #pool: Queryable;
  readonly #version: string;
  readonly #logger: Logger;
  readonly #tables: EngineTables;
  #offsetMs = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  #beating: Promise<void> | undefined;

  constructor(options: NodeMembershipOptions) {
    this.#pool = options.pool;
    this.nodeId = options.nodeId ?? createNodeId();
    this.#version = options.version;
    this.#logger = options.logger;
    this.#tables = engineTables(options.schema);
    this.heartbeatMs = positiveMs('heartbeatMs', options.heartbeatMs ?? NODE_MEMBERSHIP_DEFAULTS.heartbeatMs);
    this.pruneAfterMs = positiveMs(
      'pruneAfterMs',
      options.pruneAfterMs ?? NODE_MEMBERSHIP_DEFAULTS.pruneAfterMs,
    );
    if (this.pruneAfterMs < 2 * this.heartbeatMs) {
      throw new ClusterError(
        'INVALID_OPTIONS',
        `pruneAfterMs (${this.pruneAfterMs}) must be at least twice heartbeatMs (${this.heartbeatMs}): a live node would be pruned`,
      );
    }
  }

  /** Milliseconds to add to the local clock to read the database's (measured at each heartbeat). */
  get offsetMs(): number {
    return this.#offsetMs;
  }

  /** Registers the node (a row in `jobs.nodes`) and starts the heartbeat. */
  async start(): Promise<void> {
    await this.#register();
    LIVE_IN_THIS_PROCESS.add(this.nodeId);
    await this.#releaseDeadLocal();
    await this.#measureOffset();
    this.#timer = setInterval(() => {
      if (this.#beating) return;
      this.#beating = this.heartbeat()
        .catch((error: unknown) =>
          this.#logger.warn(
            { target: TARGET, event: 'node.heartbeat_failed', node: this.nodeId, error: messageOf(error) },
            `node ${this.nodeId}: heartbeat failed — retrying at the next one`,
          ),
        )
        .finally(() => {
          this.#beating = undefined;
        });
    }, this.heartbeatMs);
    this.#timer.unref?.();
    this.#logger.info(
      { target: TARGET, event: 'node.registered', node: this.nodeId, heartbeat_ms: this.heartbeatMs },
      `node ${this.nodeId} registered`,
    );
  }

  /** One heartbeat: touch the row (again if pruned), measure the clock offset, prune silent nodes. */
  async heartbeat(): Promise<void> {
    const touched = await this.#pool.query(
      `UPDATE ${this.#tables.nodes} SET last_heartbeat_at = now() WHERE id = $1`,
      [this.nodeId],
    );
    if ((touched.rowCount ?? 0) === 0) await this.#register();
    await this.#measureOffset();
    const pruned = await this.#pool.query(
      `DELETE FROM ${this.#tables.nodes} WHERE last_heartbeat_at < now() - $1 * interval '1 millisecond' RETURNING id`,
      [this.pruneAfterMs],
    );
    for (const row of pruned.rows) {
      this.#logger.info(
        { target: TARGET, event: 'node.pruned', node: String(row['id']) },
        `node ${String(row['id'])} pruned: no heartbeat for ${this.pruneAfterMs} ms`,
      );
    }
  }

  /** Stops the heartbeat, deletes the node's row and gives back the periodic jobs it holds. */
  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    LIVE_IN_THIS_PROCESS.delete(this.nodeId);
    await this.#beating;
    await this.#pool.query(
      `UPDATE ${this.#tables.periodicState} SET owner_node = NULL, running_since = NULL, lease_until = NULL
        WHERE owner_node = $1`,
      [this.nodeId],
    );
    await this.#pool.query(`DELETE FROM ${this.#tables.nodes} WHERE id = $1`, [this.nodeId]);
    this.#logger.info(
      { target: TARGET, event: 'node.deregistered', node: this.nodeId },
      `node ${this.nodeId} deregistered`,
    );
  }

  /**
   * A restarted single server must not wait out its dead predecessor's lease:
   * nodes of this host whose process is gone (a pid not alive, or this
   * process's own pid: a container's pid 1 after a restart) give back the
   * periodic jobs they held and leave `jobs.nodes` at once, the rule the
   * recoverable engine's boot sweep applies to runs (`isDeadLocalOwner`).
   * Other hosts' nodes are left to their leases and the prune.
   */
  async #releaseDeadLocal(): Promise<void> {
    const owners = await this.#pool.query(
      `SELECT id AS owner FROM ${this.#tables.nodes} WHERE id <> $1
        UNION
       SELECT owner_node FROM ${this.#tables.periodicState} WHERE owner_node IS NOT NULL AND owner_node <> $1`,
      [this.nodeId],
    );
    const dead = owners.rows
      .map((r) => String(r['owner']))
      .filter((owner) => !LIVE_IN_THIS_PROCESS.has(owner) && isDeadLocalOwner(owner));
    if (dead.length === 0) return;
    const released = await this.#pool.query(
      `UPDATE ${this.#tables.periodicState} SET owner_node = NULL, running_since = NULL, lease_until = NULL
        WHERE owner_node = ANY($1::text[]) RETURNING job`,
      [dead],
    );
    await this.#pool.query(`DELETE FROM ${this.#tables.nodes} WHERE id = ANY($1::text[])`, [dead]);
    this.#logger.warn(
      {
        target: TARGET,
        event: 'node.dead_local_released',
        node: this.nodeId,
        dead_nodes: dead,
        jobs: released.rows.map((r) => String(r['job'])),
      },
      `node ${this.nodeId}: ${dead.length} node(s) of this host whose process is gone removed; periodic jobs they held released`,
    );
  }

  /** Every registered node, oldest first. */
  async list(): Promise<ClusterNodeRow[]> {
    const { rows } = await this.#pool.query(
      `SELECT id, host, pid, version, started_at, last_heartbeat_at,
              (extract(epoch FROM now() - last_heartbeat_at) * 1000)::float8 AS age_ms
         FROM ${this.#tables.nodes} ORDER BY started_at, id`,
    );
    return rows.map((row) => ({
      id: String(row['id']),
      host: String(row['host']),
      pid: Number(row['pid']),
      version: String(row['version']),
      startedAt: dateOrNull(row['started_at']) ?? new Date(0),
      lastHeartbeatAt: dateOrNull(row['last_heartbeat_at']) ?? new Date(0),
      heartbeatAgeMs: Math.max(0, Math.round(Number(row['age_ms']))),
    }));
  }

  async #register(): Promise<void> {
    await this.#pool.query(
      `INSERT INTO ${this.#tables.nodes} (id, host, pid, version) VALUES ($1, $2, $3, $4)
       ON CONFLICT (id) DO UPDATE SET last_heartbeat_at = now()`,
      [this.nodeId, hostname(), process.pid, this.#version],
    );
  }

  async #measureOffset(): Promise<void> {
    const before = Date.now();
    const { rows } = await this.#pool.query(
      'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms',
    );
    const after = Date.now();
    this.#offsetMs = Math.round(Number(rows[0]?.['now_ms']) - (before + after) / 2);
  }
}

function positiveMs(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new ClusterError('INVALID_OPTIONS', `${name} must be a number of milliseconds > 0, got ${value}`);
  }
  return value;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
