import { randomUUID } from 'node:crypto';
import { serve } from '@hono/node-server';
import { type AdminUserRecord, createAdminApp, signAdminToken } from '@oxicloud/admin-api';
import { PgRepairPlans, severityRank } from '@oxicloud/consistency';
import { RecoverableEngine } from '@oxicloud/recoverable';
import type { Logger } from '@oxicloud/scheduler';
import { PgRepairStore, type StorageDatabase } from '@oxicloud/storage';
import {
  createRepairActions,
  createRepairJob,
  createRepairPlanner,
  createRepairService,
} from '@oxicloud/tenants';
import { createTestDatabase, freePort, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from './admin-client.js';
import { type CliIo, sleep } from './cli-io.js';
import type { JobsCommandContext } from './commands.js';
import { JobsClientError } from './jobs-client-error.js';
import { parseChoices, repairApplyCommand, repairPlanCommand, repairShowCommand } from './repair-commands.js';

const SECRET = 'repair-cli-test-secret-at-least-32-bytes!!';
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

/** `oxijobs repair plan|show|apply` against the real admin app on a real port and real Postgres. */
describe('oxijobs repair plan|show|apply', () => {
  let db: TestDatabase;
  let server: ReturnType<typeof serve>;
  let client: AdminClient;
  let engine: RecoverableEngine;
  let drive: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    const { rows } = await db.pool.query(
      `INSERT INTO auth.users (username, role) VALUES ('admin3', 'admin') RETURNING id::text, username, role`,
    );
    const admin = rows[0] as AdminUserRecord;
    const plans = new PgRepairPlans({ pool: db.pool });
    const store = new PgRepairStore(
      new Kysely<StorageDatabase>({ dialect: new PostgresDialect({ pool: db.pool }) }),
    );
    const actions = createRepairActions({ store });
    engine = new RecoverableEngine({ pool: db.pool });
    engine.register(createRepairJob({ plans, actions, store }));
    const app = createAdminApp({
      jobs: { list: () => [], trigger: async () => undefined },
      users: { findById: async (id) => (id === admin.id ? admin : null) },
      repairs: createRepairService({ planner: createRepairPlanner({ actions, plans }), plans, engine }),
      jwtSecret: SECRET,
      logger: silent,
    });
    const port = await freePort();
    server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    const token = await signAdminToken({ secret: SECRET, user: admin, expiresInSeconds: 600 });
    client = new AdminClient({ baseUrl: `http://127.0.0.1:${port}`, token });
    drive = (
      await db.pool.query(
        `INSERT INTO storage.drives (owner_id, name, used_bytes) VALUES ($1, 'main', 10485760) RETURNING id`,
        [admin.id],
      )
    ).rows[0].id;
    await db.pool.query(
      `INSERT INTO jobs.findings (id, check_name, kind, resource_id, severity, severity_rank, highest_severity,
                                 first_seen_at, last_seen_at, last_seen_boundary)
       VALUES ($1, 'drives_consistency', 'drive_used_bytes_drift', $2, 'Drift', $3, 'Drift', now(), now(), now())`,
      [randomUUID(), drive, severityRank('Drift')],
    );
  });
  afterAll(async () => {
    await engine.shutdown();
    await new Promise((resolve) => server.close(resolve));
    await db.drop();
  });

  const ctx = (io: CliIo, json = false): JobsCommandContext => ({ client, io, json });

  it('plan prints a table with the before → after and the apply command; apply starts the run that repairs', async () => {
    const io = captureIo();
    expect(
      await repairPlanCommand(ctx(io), {
        findingIds: [],
        filter: { check: 'drives_consistency' },
        choices: {},
      }),
    ).toBe(0);
    const text = io.out();
    expect(text).toMatch(/drive_used_bytes_drift/);
    expect(text).toMatch(/used_bytes 10,485,760 → 0/);
    const [, id, hash] = /apply: oxijobs repair apply (\S+) --hash ([0-9a-f]{64})/.exec(text) ?? [];
    expect(id).toBeDefined();

    const json = captureIo();
    await repairShowCommand(ctx(json, true), id as string);
    expect(JSON.parse(json.out())).toMatchObject({ id, hash, state: 'planned' });

    const applied = captureIo();
    expect(await repairApplyCommand(ctx(applied), id as string, hash as string)).toBe(0);
    expect(applied.out()).toMatch(/started run \S+/);
    await engine.whenIdle();
    const shown = captureIo();
    await repairShowCommand(ctx(shown), id as string);
    expect(shown.out()).toMatch(/applied/);
    const usage = await db.pool.query('SELECT used_bytes FROM storage.drives WHERE id = $1', [drive]);
    expect(Number(usage.rows[0].used_bytes)).toBe(0);
  });

  it('a stale hash is refused with the API message; a malformed choice is a usage error', async () => {
    const io = captureIo();
    await repairPlanCommand(ctx(io, true), {
      findingIds: [],
      filter: { kind: 'drive_used_bytes_drift' },
      choices: {},
    });
    const plan = JSON.parse(io.out());
    const error = await repairApplyCommand(ctx(captureIo()), plan.id, '0'.repeat(64)).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(JobsClientError);
    expect((error as Error).message).toMatch(/hash/);
    expect(() => parseChoices(['nochoice'])).toThrow(/<finding id>=<choice>/);
  });
});
