import { randomBytes } from 'node:crypto';
import {
  type CheckJobHandler,
  type ConsistencyCheck,
  checkJob,
  PgFindingStore,
  type StatefulAdapter,
  type StoredFinding,
} from '@oxicloud/consistency';
import { RecoverableEngine } from '@oxicloud/recoverable';
import type { JobOutcome, Logger } from '@oxicloud/scheduler';
import {
  PgDriveUsageScan,
  PgFileBlobScan,
  PgFolderTreeScan,
  postgresScans,
  type StorageDatabase,
} from '@oxicloud/storage';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';

/** A 64-hex BLAKE3-shaped hash (random: the checks never read bytes). */
export const randomHash = (): string => randomBytes(32).toString('hex');

/** Everything a consistency test needs on one database: adapters, findings store, the engine. */
export interface ConsistencyHarness {
  readonly pool: pg.Pool;
  readonly db: Kysely<StorageDatabase>;
  readonly drives: PgDriveUsageScan;
  readonly folders: PgFolderTreeScan;
  readonly files: PgFileBlobScan;
  /**
   * Every Postgres scan adapter the server registers (`postgresScans` of
   * `@oxicloud/storage`): their checks are the catalog's, but the blob
   * backend's `storage_consistency`.
   */
  readonly scans: readonly StatefulAdapter[];
  readonly findings: PgFindingStore;
  readonly engine: RecoverableEngine;
  readonly lines: Array<Record<string, unknown>>;
  readonly logger: Logger;
  /**
   * Registers `check` with the engine, once per check name (a later check
   * object of the same name, other options included, is NOT registered: use a
   * harness of its own), and runs or resumes it to its end. The closing step
   * (findings across runs) is not run: call `PgFindingLedger.closeRun(runId)`.
   */
  run(check: ConsistencyCheck, params?: Record<string, unknown>): Promise<RunResult>;
}

export interface RunResult {
  readonly outcome: JobOutcome;
  readonly runId: string;
  readonly status: string;
  readonly stats: Record<string, unknown>;
  readonly cursor: Buffer | null;
  readonly findings: StoredFinding[];
}

export function consistencyHarness(pool: pg.Pool): ConsistencyHarness {
  const db = new Kysely<StorageDatabase>({ dialect: new PostgresDialect({ pool }) });
  const lines: Array<Record<string, unknown>> = [];
  const push = (fields: object, msg?: string) => lines.push({ ...fields, msg });
  const logger: Logger = { info: push, warn: push, error: push, debug: () => undefined };
  const findings = new PgFindingStore({ pool });
  const engine = new RecoverableEngine({ pool, logger });
  const registered = new Map<string, CheckJobHandler>();
  const scans = postgresScans(db);
  const scan = <T extends StatefulAdapter>(kind: abstract new (...args: never[]) => T): T => {
    const found = scans.find((a): a is T => a instanceof kind);
    if (found === undefined) throw new Error(`postgresScans has no ${kind.name}`);
    return found;
  };
  return {
    pool,
    db,
    drives: scan(PgDriveUsageScan),
    folders: scan(PgFolderTreeScan),
    files: scan(PgFileBlobScan),
    scans,
    findings,
    engine,
    lines,
    logger,
    async run(check, params = {}) {
      if (!registered.has(check.name)) {
        const handler = checkJob(check, { findings, logger });
        engine.register(handler);
        registered.set(check.name, handler);
      }
      const outcome = await engine.runOrResume(check.name, { params });
      return latestRun(pool, findings, check.name, outcome);
    },
  };
}

export async function latestRun(
  pool: pg.Pool,
  findings: PgFindingStore,
  jobName: string,
  outcome: JobOutcome,
): Promise<RunResult> {
  const { rows } = await pool.query(
    `SELECT id, status, stats, cursor FROM jobs.recoverable_runs
      WHERE job_name = $1 ORDER BY started_at DESC, id DESC LIMIT 1`,
    [jobName],
  );
  const row = rows[0];
  return {
    outcome,
    runId: row.id,
    status: row.status,
    stats: row.stats,
    cursor: row.cursor,
    findings: await findings.list(row.id, { limit: 10_000 }),
  };
}

/** `kind severity resource_id` of each finding, sorted: what a test compares. */
export const summary = (findings: readonly StoredFinding[]): string[] =>
  findings.map((f) => `${f.kind} ${f.severity} ${f.resourceId}`).sort();

/** The ids of a small, consistent world (everything two days old, so outside any 1 h grace). */
export interface World {
  readonly userId: string;
  readonly otherUserId: string;
  readonly driveId: string;
  readonly secondDriveId: string;
  readonly otherDriveId: string;
  /** Live root folder `/docs` and its live child `/docs/work` (a leaf). */
  readonly docs: string;
  readonly work: string;
  /** Trashed root folder `/old` and its trashed child `/old/inner`. */
  readonly old: string;
  readonly inner: string;
  /** Live files in `/docs/work`, trashed files in `/old/inner`. */
  readonly liveFiles: readonly { id: string; hash: string; size: number }[];
  readonly trashedFiles: readonly { id: string; hash: string; size: number }[];
  /** A blob shared by two live files (dedup). */
  readonly sharedHash: string;
  readonly sharedFileIds: readonly string[];
  readonly counts: { users: number; drives: number; folders: number; files: number; trashedFolders: number };
}

/**
 * Seeds a consistent world with direct SQL: 2 users, 3 drives, 4 folders
 * (2 trashed), `liveFileCount` live files (2 of them sharing a blob) and 3
 * trashed files, every counter right. `created_at`/`trashed_at` are two
 * days back.
 */
export async function seedWorld(pool: pg.Pool, liveFileCount = 8): Promise<World> {
  const q = async (text: string, values: unknown[] = []) => (await pool.query(text, values)).rows;
  const [user] = await q("INSERT INTO auth.users (username) VALUES ('alice') RETURNING id");
  const [other] = await q("INSERT INTO auth.users (username) VALUES ('bob') RETURNING id");
  const [drive] = await q("INSERT INTO storage.drives (owner_id, name) VALUES ($1, 'main') RETURNING id", [
    user.id,
  ]);
  const [second] = await q("INSERT INTO storage.drives (owner_id, name) VALUES ($1, 'second') RETURNING id", [
    user.id,
  ]);
  const [otherDrive] = await q(
    "INSERT INTO storage.drives (owner_id, name) VALUES ($1, 'main') RETURNING id",
    [other.id],
  );
  const folder = async (name: string, parent: string | null, trashed: boolean) =>
    (
      await q(
        `INSERT INTO storage.folders (drive_id, parent_id, name, is_trashed, trashed_at, created_at)
         VALUES ($1, $2, $3, $4, CASE WHEN $4 THEN now() - interval '2 days' END, now() - interval '2 days')
         RETURNING id`,
        [drive.id, parent, name, trashed],
      )
    )[0].id as string;
  const docs = await folder('docs', null, false);
  const work = await folder('work', docs, false);
  const old = await folder('old', null, true);
  const inner = await folder('inner', old, true);

  const sharedHash = randomHash();
  const liveFiles: { id: string; hash: string; size: number }[] = [];
  const trashedFiles: { id: string; hash: string; size: number }[] = [];
  const blobSizes = new Map<string, number>();
  const file = async (
    driveId: string,
    folderId: string | null,
    hash: string,
    size: number,
    trashed: boolean,
  ) => {
    if (!blobSizes.has(hash)) {
      blobSizes.set(hash, size);
      await q(
        "INSERT INTO storage.blobs (hash, size, created_at) VALUES ($1, $2, now() - interval '2 days')",
        [hash, size],
      );
    }
    const [row] = await q(
      `INSERT INTO storage.files (drive_id, folder_id, name, blob_hash, size, is_trashed, trashed_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $6 THEN now() - interval '2 days' END, now() - interval '2 days')
       RETURNING id`,
      [driveId, folderId, `f-${randomBytes(4).toString('hex')}`, hash, size, trashed],
    );
    return { id: row.id as string, hash, size };
  };
  for (let i = 0; i < liveFileCount; i++) {
    const shared = i < 2;
    liveFiles.push(
      await file(drive.id, work, shared ? sharedHash : randomHash(), shared ? 500 : 100 + i, false),
    );
  }
  for (let i = 0; i < 3; i++) trashedFiles.push(await file(drive.id, inner, randomHash(), 1000 + i, true));
  await file(second.id, null, randomHash(), 4096, false);
  await file(otherDrive.id, null, randomHash(), 777, false);

  // Counters right: drives = SUM(files.size) trashed included; users = SUM(drives.used_bytes).
  await q(`UPDATE storage.drives d SET used_bytes = COALESCE((SELECT sum(size) FROM storage.files f
            WHERE f.drive_id = d.id), 0)`);
  await q(`UPDATE auth.users u SET storage_used_bytes = COALESCE((SELECT sum(used_bytes) FROM storage.drives d
            WHERE d.owner_id = u.id), 0)`);
  return {
    userId: user.id,
    otherUserId: other.id,
    driveId: drive.id,
    secondDriveId: second.id,
    otherDriveId: otherDrive.id,
    docs,
    work,
    old,
    inner,
    liveFiles,
    trashedFiles,
    sharedHash,
    sharedFileIds: liveFiles.slice(0, 2).map((f) => f.id),
    counts: { users: 2, drives: 3, folders: 4, files: liveFileCount + 3 + 2, trashedFolders: 2 },
  };
}
