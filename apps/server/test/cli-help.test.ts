import { createServer, type Server } from 'node:net';
import { createTestDatabase, freePort, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, runCli } from './cli-process.js';
import { scratchDir } from './fault-support.js';

/** Each command's help says what applies to it: its flags, exit codes and the variables it reads. */
describe('per-command help', () => {
  const help = async (...args: string[]) => {
    const result = await runCli([...args, '--help'], cleanEnv({}));
    expect(result.code, result.stderr).toBe(0);
    return result.stdout;
  };

  it('list, cancel, runs and findings show no --follow exit codes or trigger timeouts', async () => {
    for (const command of ['list', 'cancel', 'runs', 'findings']) {
      const text = await help('jobs', command);
      expect(text, command).not.toMatch(/--follow|130|\b3 {4}|3600/);
      expect(text, command).toContain('OXICLOUD_ADMIN_URL');
      expect(text, command).toContain('OXICLOUD_ADMIN_TOKEN');
    }
  });

  it('trigger and run show the --follow exit codes; only trigger mentions the periodic wait', async () => {
    const trigger = await help('jobs', 'trigger');
    expect(trigger).toContain('130');
    expect(trigger).toContain('3600');
    expect(trigger).toContain('Periodic jobs take --force only');
    const run = await help('jobs', 'run');
    expect(run).toContain('130');
    expect(run).not.toContain('3600');
  });

  it('serve, migrate, seed, token, users and alerts list the variables they read', async () => {
    const serve = await help('serve');
    expect(serve).not.toContain('README lists');
    for (const name of [
      'DATABASE_URL',
      'OXICLOUD_SMTP_HOST',
      'OXICLOUD_LOG_FORMAT',
      'OXICLOUD_ADMIN_EMAIL',
      'OXICLOUD_TRASH_RETENTION_DAYS',
    ]) {
      expect(serve, name).toContain(name);
    }
    for (const args of [['migrate'], ['seed'], ['token'], ['users', 'set-email'], ['alerts', 'test']]) {
      const text = await help(...args);
      expect(text, args.join(' ')).toContain('Environment (read by this command)');
      expect(text, args.join(' ')).toContain('DATABASE_URL');
      expect(text, args.join(' ')).toContain('OXICLOUD_EMBEDDED_POSTGRES_PORT');
    }
    expect(await help('token')).toContain('OXICLOUD_JWT_SECRET');
    const alertsTest = await help('alerts', 'test');
    expect(alertsTest).toContain('OXICLOUD_SMTP_SECURE');
    expect(alertsTest).toContain('OXICLOUD_ADMIN_URL');
    expect(alertsTest).toContain('the server needs them in its own environment');
    expect(await help('seed')).toContain('--list-resources');
  });
});

describe('the embedded Postgres port is taken', () => {
  const dir = scratchDir('port-taken');
  let other: Server;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    other = createServer();
    await new Promise<void>((resolve) => other.listen(port, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => other.close(() => resolve()));
    dir.remove();
  });

  it('names what holds it and which variable to set', async () => {
    const result = await runCli(
      ['migrate'],
      cleanEnv({ OXICLOUD_DATA_DIR: dir.path, OXICLOUD_EMBEDDED_POSTGRES_PORT: String(port) }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).not.toContain('(undefined)');
    expect(result.stderr).toContain(`port 127.0.0.1:${port} is taken by another program (pid ${process.pid}`);
    expect(result.stderr).toContain('set OXICLOUD_EMBEDDED_POSTGRES_PORT to a free port');
  });
});

describe('oxijobs seed output', () => {
  let db: TestDatabase;
  const dir = scratchDir('seed-output');

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
    dir.remove();
  });

  it('--list-resources lists each resource a fault touched under its fault', async () => {
    const result = await runCli(
      [
        'seed',
        '--users',
        '6',
        '--files-per-user',
        '20',
        '--blobs-on-disk',
        '60',
        '--faults',
        'orphan_blob_on_disk',
        '--list-resources',
      ],
      cleanEnv({ DATABASE_URL: db.url, OXICLOUD_DATA_DIR: dir.path }),
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /\norphan_blob_on_disk: 2 resource\(s\); expect storage_consistency to report orphan_blob\n {2}blob [0-9a-f]{64} {2}orphan blob 1 \(\d+ B\)\n {2}blob [0-9a-f]{64} {2}orphan blob 2/,
    );
  });

  it('--faults all with few blobs per file says which ratio it needs', async () => {
    const result = await runCli(
      [
        'seed',
        '--users',
        '20',
        '--files-per-user',
        '10',
        '--blobs-on-disk',
        '20',
        '--faults',
        'all',
        '--seed',
        '7',
      ],
      cleanEnv({ DATABASE_URL: db.url, OXICLOUD_DATA_DIR: dir.path }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('fault blob_bytes_missing needs 2 candidates');
    expect(result.stderr).toContain(
      'each blob is shared by about 10.0 files (users x files-per-user / blobs-on-disk = 20 x 10 / 20)',
    );
    expect(result.stderr).toContain('blobs-on-disk >= 100');
  });
});

describe('log format', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('writes JSON lines to a pipe, readable lines with OXICLOUD_LOG_FORMAT=pretty', async () => {
    const json = await runCli(['migrate'], cleanEnv({ DATABASE_URL: db.url }));
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stderr.trim().split('\n')[0]!)).toMatchObject({ level: 'info' });
    const pretty = await runCli(
      ['migrate'],
      cleanEnv({ DATABASE_URL: db.url, OXICLOUD_LOG_FORMAT: 'pretty' }),
    );
    expect(pretty.code, pretty.stderr).toBe(0);
    expect(pretty.stderr).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: database: DATABASE_URL/m);
    expect(pretty.stderr).not.toContain('{"level"');
  });
});
