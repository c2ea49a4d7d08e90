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
  type OxiCloudDatabase,
  OxiDriveUsageScan,
  OxiFileContentScan,
  OxiFolderTreeScan,
  oxiCloudScans,
} from '@oxicloud/storage/oxicloud';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';

/** A 64-hex BLAKE3-shaped hash (random: the checks never read bytes). */
export const randomHash = (): string => randomBytes(32).toString('hex');

/**
 * Everything a consistency test needs on one database of OxiCloud's domain
 * (`createTestDatabase({ domain: 'oxicloud' })`): its adapters, the findings
 * store, the engine. The worlds themselves: `oxiWorld` of
 * `packages/storage/src/oxicloud/test-fixtures.ts` (a drive made by the four
 * writes, uploads as OxiCloud's upload path writes them) or a generated
 * dataset (`oxicloud-domain-fixtures.ts`).
 */
export interface ConsistencyHarness {
  readonly pool: pg.Pool;
  readonly db: Kysely<OxiCloudDatabase>;
  readonly drives: OxiDriveUsageScan;
  readonly folders: OxiFolderTreeScan;
  readonly files: OxiFileContentScan;
  /**
   * Every scan adapter of OxiCloud's domain the server registers
   * (`oxiCloudScans` of `@oxicloud/storage/oxicloud`): their checks are the
   * catalog's, but the blob backend's `storage_consistency`.
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
  const db = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool }) });
  const lines: Array<Record<string, unknown>> = [];
  const push = (fields: object, msg?: string) => lines.push({ ...fields, msg });
  const logger: Logger = { info: push, warn: push, error: push, debug: () => undefined };
  const findings = new PgFindingStore({ pool });
  const engine = new RecoverableEngine({ pool, logger });
  const registered = new Map<string, CheckJobHandler>();
  const scans = oxiCloudScans(db);
  const scan = <T extends StatefulAdapter>(kind: abstract new (...args: never[]) => T): T => {
    const found = scans.find((a): a is T => a instanceof kind);
    if (found === undefined) throw new Error(`oxiCloudScans has no ${kind.name}`);
    return found;
  };
  return {
    pool,
    db,
    drives: scan(OxiDriveUsageScan),
    folders: scan(OxiFolderTreeScan),
    files: scan(OxiFileContentScan),
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
