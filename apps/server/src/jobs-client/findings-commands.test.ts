import { randomUUID } from 'node:crypto';
import { serve } from '@hono/node-server';
import { type AdminUserRecord, createAdminApp, signAdminToken } from '@oxicloud/admin-api';
import { FindingKindCatalog, PgFindingLedger, PgFindingStore } from '@oxicloud/consistency';
import type { Logger } from '@oxicloud/scheduler';
import { type OxiCloudDatabase, OxiDriveUsageScan } from '@oxicloud/storage/oxicloud';
import { createTestDatabase, freePort, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from './admin-client.js';
import { type CliIo, sleep } from './cli-io.js';
import type { JobsCommandContext } from './commands.js';
import {
  findingsDecideCommand,
  findingsListCommand,
  findingsShowCommand,
  formatBytes,
} from './findings-commands.js';
import { JobsClientError } from './jobs-client-error.js';

const SECRET = 'findings-cli-test-secret-at-least-32-bytes!';
const silent: Logger = { info() {}, warn() {}, error() {}, debug() {} };

function captureIo(): CliIo & { out: () => string } {
  let out = '';
  return {
    stdout: {
      write: (t: string) => {
        out += t;
      },
    },
    stderr: { write: () => undefined },
    now: () => Date.now(),
    sleep,
    out: () => out,
  };
}

/** `oxijobs findings …` against the real admin app on a real port and real Postgres. */
describe('oxijobs findings list|show|accept|false-positive|reopen', () => {
  let db: TestDatabase;
  let server: ReturnType<typeof serve>;
  let client: AdminClient;
  let findingId: string;

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    const { rows } = await db.pool.query(
      `INSERT INTO auth.users (username, email, role) VALUES ('admin2', 'admin2@example.org', 'admin') RETURNING id::text, username, role::text`,
    );
    const admin = rows[0] as AdminUserRecord;
    // The server's declaration of drives_consistency's kinds, as compose collects it.
    const kysely = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool: db.pool }) });
    const findingKinds = new FindingKindCatalog();
    for (const check of new OxiDriveUsageScan(kysely).consistencyChecks()) {
      findingKinds.add({ name: check.name, findingKinds: check.kinds });
    }
    const listed = {
      name: 'drives_consistency',
      interval_ms: null,
      timeout_ms: null,
      next_run_at: null,
      running: false,
      last_outcome: null,
    };
    const app = createAdminApp({
      jobs: { list: () => [listed], trigger: async () => undefined },
      health: { database: async () => ({ ok: true, latencyMs: 1 }) },
      findingKinds,
      users: { findById: async (id) => (id === admin.id ? admin : null) },
      ledger: new PgFindingLedger({ pool: db.pool }),
      jwtSecret: SECRET,
      logger: silent,
    });
    const port = await freePort();
    server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    const token = await signAdminToken({ secret: SECRET, user: admin, expiresInSeconds: 600 });
    client = new AdminClient({ baseUrl: `http://127.0.0.1:${port}`, token });
    const runId = randomUUID();
    await db.pool.query(
      `INSERT INTO jobs.recoverable_runs (id, job_name, status, started_at, last_progress_at)
       VALUES ($1, 'drives_consistency', 'Completed', now(), now())`,
      [runId],
    );
    await new PgFindingStore({ pool: db.pool }).write(runId, [
      {
        kind: 'drive_used_bytes_drift',
        severity: 'Drift',
        resourceId: 'drive-1',
        detail: { recorded: 3_145_728, actual: 0, delta: 3_145_728 },
        magnitude: 3_145_728,
      },
    ]);
    findingId = (await db.pool.query('SELECT id FROM jobs.findings')).rows[0].id;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await db.drop();
  });

  const ctx = (json = false): JobsCommandContext & { io: ReturnType<typeof captureIo> } => ({
    client,
    io: captureIo(),
    json,
  });

  it('lists as a table, or the API’s JSON with --json', async () => {
    const table = ctx();
    expect(await findingsListCommand(table, { state: 'open' })).toBe(0);
    expect(table.io.out()).toMatch(/ID\s+STATE\s+SEVERITY\s+CHECK\s+KIND\s+RESOURCE\s+LAST SEEN/);
    expect(table.io.out()).toContain('drive_used_bytes_drift');
    const json = ctx(true);
    await findingsListCommand(json, {});
    expect(JSON.parse(json.io.out())).toMatchObject({ findings: [{ id: findingId }], next_cursor: null });
  });

  it("refuses a --kind no job declares (the listing's finding_kinds), naming the declared ones", async () => {
    const unknown = await findingsListCommand(ctx(), { kind: 'nope' }).catch((e) => e);
    expect(unknown).toBeInstanceOf(JobsClientError);
    expect((unknown as JobsClientError).message).toBe(
      'unknown finding kind "nope"; the jobs declare: drive_used_bytes_drift, user_used_bytes_drift, drive_without_owner, drive_root_mismatch, personal_drive_owner_mismatch (`oxijobs jobs list --json` shows each job\'s finding_kinds)',
    );
    const ofCheck = await findingsListCommand(ctx(), { kind: 'nope', check: 'drives_consistency' }).catch(
      (e) => e,
    );
    expect((ofCheck as JobsClientError).message).toBe(
      'unknown finding kind "nope" for drives_consistency; allowed: drive_used_bytes_drift, user_used_bytes_drift, drive_without_owner, drive_root_mismatch, personal_drive_owner_mismatch',
    );
    const declared = ctx();
    expect(await findingsListCommand(declared, { kind: 'drive_used_bytes_drift' })).toBe(0);
    expect(declared.io.out()).toContain('drive_used_bytes_drift');
  });

  it('shows readable fields (bytes in MiB, as the kind declares its magnitude) and the history', async () => {
    const c = ctx();
    await findingsShowCommand(c, findingId);
    expect(c.io.out()).toContain('magnitude:');
    expect(c.io.out()).toContain('3,145,728 B (3.0 MiB)');
    expect(c.io.out()).toMatch(/kind:\s+drive_used_bytes_drift: the drive's used_bytes differs from the sum/);
    expect(c.io.out()).toMatch(/history:[\s\S]*new/);
  });

  it('accepts, marks false-positive and reopens with a comment; refuses without one', async () => {
    await expect(findingsDecideCommand(ctx(), 'accept', findingId, {})).rejects.toBeInstanceOf(
      JobsClientError,
    );
    const accepted = ctx();
    await findingsDecideCommand(accepted, 'accept', findingId, {
      comment: 'known',
      until: '2099-01-01T00:00:00Z',
    });
    expect(accepted.io.out()).toContain('is now accepted until 2099-01-01T00:00:00.000Z');
    const fp = ctx(true);
    await findingsDecideCommand(fp, 'false-positive', findingId, { comment: 'race' });
    expect(JSON.parse(fp.io.out())).toMatchObject({ state: 'false_positive' });
    const reopened = ctx();
    await findingsDecideCommand(reopened, 'reopen', findingId, { comment: 'real after all' });
    expect(reopened.io.out()).toContain('is now open');
    const refused = await findingsDecideCommand(ctx(), 'reopen', findingId, { comment: 'again' }).catch(
      (e) => e,
    );
    expect(refused).toBeInstanceOf(JobsClientError);
    expect((refused as JobsClientError).message).toContain('INVALID_TRANSITION');
  });

  it('formats bytes', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(-2048)).toBe('-2,048 B (-2.0 KiB)');
  });
});
