import { type Kysely, sql } from 'kysely';
import { bigintToNumber } from '../postgres/database.js';
import { StorageError } from '../storage-error.js';
import type { OxiCloudDatabase } from './database.js';

/**
 * OxiCloud's two trigger-fed queues (fact sheet §4, §12 item 26), each with
 * the OxiCloud service that drains it (§6). Neither table has a timestamp
 * column: a row is `id` (identity, in insertion order) and its payload.
 */
export const OXICLOUD_QUEUES = [
  {
    queue: 'tree_etag_dirty',
    table: 'storage.tree_etag_dirty',
    drainer:
      "OxiCloud's TreeEtagFlushService (always on, every OXICLOUD_TREE_ETAG_FLUSH_MS, default 500 ms; it drains in id order)",
  },
  {
    queue: 'search_index_dirty',
    table: 'storage.search_index_dirty',
    drainer:
      "OxiCloud's ContentIndexWorker (with OXICLOUD_ENABLE_CONTENT_SEARCH=false, a janitor that empties the queue every 60 s)",
  },
] as const;

/** The name of one of {@link OXICLOUD_QUEUES}: `tree_etag_dirty` or `search_index_dirty`. */
export type OxiQueueName = (typeof OXICLOUD_QUEUES)[number]['queue'];

/** One queue's backlog at one instant (one statement, one snapshot for both queues). */
export interface OxiQueueBacklog {
  /** `tree_etag_dirty` or `search_index_dirty`. */
  readonly queue: OxiQueueName;
  /** The schema-qualified table, e.g. `storage.tree_etag_dirty`. */
  readonly table: string;
  /** The OxiCloud service that empties it, in words (for a mail). */
  readonly drainer: string;
  /** Rows in the queue: exact up to the count cap, an estimate above it (see {@link exact}). */
  readonly rows: number;
  /**
   * `true` when {@link rows} was counted; `false` when the queue holds more
   * than the count cap and {@link rows} is the planner's estimate
   * (`pg_class.reltuples`), kept between the cap + 1 and the id span.
   */
  readonly exact: boolean;
  /** The lowest `id` in the queue (its oldest row: ids are given in insertion order); `null` when empty. */
  readonly oldestId: number | null;
}

/** Options of {@link OxiQueueBacklogReader}. */
export interface OxiQueueBacklogReaderOptions {
  /**
   * At most this many rows of each queue are counted; above it the figure is
   * an estimate. Whole number, 1 to 1 000 000.
   * @defaultValue {@link DEFAULT_QUEUE_COUNT_CAP}
   */
  readonly countCap?: number;
}

/** 10 000 rows: counting that many takes milliseconds, and a healthy queue holds far fewer. */
export const DEFAULT_QUEUE_COUNT_CAP = 10_000;

interface Row {
  queue: OxiQueueName;
  counted: string;
  oldest_id: string | null;
  newest_id: string | null;
  estimate: number | null;
}

/**
 * Reads the backlog of OxiCloud's queues, `storage.tree_etag_dirty` and
 * `storage.search_index_dirty`: how many rows each holds and its lowest id.
 * OxiCloud's own drainers empty them within seconds; a backlog whose lowest
 * id never changes means a drainer stopped (fact sheet §12 item 26). It is
 * a reading, not a check: nothing is recorded as a finding.
 *
 * One `SELECT` for both queues, read-only (it needs only `SELECT` on the two
 * tables, which the README's read-only sidecar role has, and the catalog),
 * bounded whatever the backlog:
 *
 * - the rows are counted through `LIMIT countCap + 1`, so a count never reads
 *   more than `countCap + 1` rows;
 * - above the cap, the figure is `pg_class.reltuples` (the planner's
 *   estimate, as of the last ANALYZE or VACUUM) clamped to at least
 *   `countCap + 1` (what was counted) and at most `max(id) − min(id) + 1`
 *   (ids are unique), and {@link OxiQueueBacklog.exact} is `false`;
 * - `min(id)` and `max(id)` are read from the primary key.
 *
 * @example
 * ```ts
 * const queues = new OxiQueueBacklogReader(new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool }) }));
 * for (const q of await queues.read()) console.log(q.table, q.rows, q.oldestId);
 * ```
 */
export class OxiQueueBacklogReader {
  readonly #db: Kysely<OxiCloudDatabase>;
  readonly #cap: number;

  /** @throws StorageError `INVALID_CONFIG` for a `countCap` that is not a whole number from 1 to 1 000 000. */
  constructor(db: Kysely<OxiCloudDatabase>, options: OxiQueueBacklogReaderOptions = {}) {
    const cap = options.countCap ?? DEFAULT_QUEUE_COUNT_CAP;
    if (!Number.isSafeInteger(cap) || cap < 1 || cap > 1_000_000) {
      throw new StorageError(
        'INVALID_CONFIG',
        `countCap must be a whole number of rows from 1 to 1000000, got ${String(cap)}`,
      );
    }
    this.#db = db;
    this.#cap = cap;
  }

  /** Both queues, in the order of {@link OXICLOUD_QUEUES}. */
  async read(): Promise<OxiQueueBacklog[]> {
    const cap = this.#cap;
    const one = (q: (typeof OXICLOUD_QUEUES)[number]) => {
      const table = sql.table(q.table);
      return sql`SELECT ${q.queue}::text AS queue,
          (SELECT count(*) FROM (SELECT 1 FROM ${table} LIMIT ${cap + 1}) AS capped) AS counted,
          (SELECT min(id) FROM ${table}) AS oldest_id,
          (SELECT max(id) FROM ${table}) AS newest_id,
          (SELECT reltuples::float8 FROM pg_catalog.pg_class WHERE oid = ${q.table}::regclass) AS estimate`;
    };
    const { rows } = await sql<Row>`${sql.join(OXICLOUD_QUEUES.map(one), sql` UNION ALL `)}`.execute(
      this.#db,
    );
    return OXICLOUD_QUEUES.map((q) => {
      const row = rows.find((r) => r.queue === q.queue);
      const counted = bigintToNumber(row?.counted);
      const oldestId = row?.oldest_id == null ? null : bigintToNumber(row.oldest_id);
      const base = { queue: q.queue, table: q.table, drainer: q.drainer, oldestId };
      if (counted <= cap || oldestId === null) return { ...base, rows: counted, exact: true };
      const span = bigintToNumber(row?.newest_id) - oldestId + 1;
      const estimate = Math.round(row?.estimate ?? -1);
      return { ...base, rows: Math.min(span, Math.max(cap + 1, estimate)), exact: false };
    });
  }
}
