import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { localBlobsDir } from '@oxicloud/storage';
import { createTestDatabase, freePort, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, cleanEnv, runCli } from './cli-process.js';
import { scratchDir, serverStorageRoot } from './fault-support.js';
import { shellQuote, Terminal } from './terminal.js';

/** Every command that runs something (`jobs list`, `serve`, …), from the root's and each group's --help. */
const COMMANDS = [
  ['serve'],
  ['migrate'],
  ['seed'],
  ['token'],
  ['users', 'set-email'],
  ['alerts', 'test'],
  ['jobs', 'list'],
  ['jobs', 'trigger'],
  ['jobs', 'cancel'],
  ['jobs', 'runs'],
  ['jobs', 'run'],
  ['jobs', 'findings'],
  ['jobs', 'history'],
  ['nodes'],
  ['findings', 'list'],
  ['findings', 'show'],
  ['findings', 'accept'],
  ['findings', 'false-positive'],
  ['findings', 'reopen'],
  ['repair', 'plan'],
  ['repair', 'show'],
  ['repair', 'choose'],
  ['repair', 'apply'],
];

/** The blob folders of a storage root: `.blobs` and its prefix folders. */
function blobFolders(root: string): string[] {
  const blobs = localBlobsDir(root);
  return existsSync(blobs) ? ['.blobs', ...readdirSync(blobs).map((name) => `.blobs/${name}`)].sort() : [];
}

describe('a bad command line', () => {
  const env = cleanEnv({ OXICLOUD_ADMIN_TOKEN: 'not-sent', OXICLOUD_ADMIN_URL: 'http://127.0.0.1:9' });

  it('an unknown command says so and lists the commands there are (exit 2)', async () => {
    const top = await runCli(['frobnicate'], env);
    expect(top.code).toBe(2);
    expect(top.stderr).toContain("oxijobs: unknown command 'frobnicate'");
    expect(top.stderr).toContain(
      'the commands of oxijobs are: serve, migrate, seed, token, users, alerts, jobs, nodes, findings, repair',
    );
    const sub = await runCli(['jobs', 'frobnicate'], env);
    expect(sub.code).toBe(2);
    expect(sub.stderr).toContain(
      'the commands of oxijobs jobs are: list, trigger, cancel, runs, run, findings, history',
    );
  });

  // One test per command: each a CLI process of its own, so a slow machine never adds them up past one timeout.
  it.each(
    COMMANDS.map((command): [string, string[]] => [command.join(' '), command]),
  )('`oxijobs %s` exits 2 on an unknown option', async (_name, command) => {
    const result = await runCli([...command, '--no-such-flag'], env);
    expect(result.code, `${command.join(' ')}: ${result.stderr}`).toBe(2);
    // A command with a required option (token --user, repair apply --hash) names the missing one first.
    expect(result.stderr, command.join(' ')).toMatch(
      /^oxijobs: (unknown option '--no-such-flag'|required option '--\w+ <\w+>' not specified)/,
    );
  });

  it('a bad value exits 2 with one line that names it', async () => {
    const bad: [string[], string][] = [
      [['users', 'set-email', 'admin', 'not-an-email'], '"not-an-email" is not an e-mail address'],
      [['token', '--user', 'admin', '--expires-in', 'forever'], "argument 'forever' is invalid"],
      [['seed', '--users', 'many', '--files-per-user', '2'], '--users="many" is not allowed'],
      [['seed', '--users', '1', '--files-per-user', '1', '--faults', 'gremlins'], 'gremlins'],
      [['migrate', 'extra'], "too many arguments for 'migrate'"],
      [['jobs', 'runs', 'repair', '--limit', '0'], "'--limit <n>' argument '0' is invalid"],
      [['nodes', '--timeout', 'soon'], "'--timeout <seconds>' argument 'soon' is invalid"],
      [['findings', 'list', '--state', 'sleepy'], "argument 'sleepy' is invalid"],
    ];
    for (const [args, message] of bad) {
      const result = await runCli(args, env);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(2);
      expect(result.stderr, args.join(' ')).toContain(message);
      expect(result.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
  });

  it('repair apply --hash abc says the hash must be 64 hex characters, sending nothing', async () => {
    const result = await runCli(['repair', 'apply', 'some-plan', '--hash', 'abc'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('the hash must be 64 hex characters (got 3)');
    expect(result.stderr).toContain('oxijobs repair show <id>');
    expect(result.stderr).not.toMatch(/MALFORMED_JSON|json\.hash|not reachable/);
  });

  it('the root --help documents the exit codes, 2 for a bad command line', async () => {
    const root = await runCli(['--help'], env);
    expect(root.stdout).toContain('Exit codes: 0 success, 1 the command failed, 2 a bad command line');
  });

  it.each(
    COMMANDS.map((command): [string, string[]] => [command.join(' '), command]),
  )('`oxijobs %s --help` documents its exit codes, 2 for a bad command line', async (_name, command) => {
    const help = await runCli([...command, '--help'], env);
    expect(help.code).toBe(0);
    expect(help.stdout, command.join(' ')).toMatch(/Exit codes:\n {2}0 {4}success[^\n]*\n {2}1 {4}\S/);
    expect(help.stdout, command.join(' ')).toMatch(/\n {2}2 {4}a bad command-line value/);
  });
});

/**
 * A CLI start stays cheap: `--help`, a usage error and the admin API's
 * client commands load none of the server's packages (the admin API, the
 * jobs, the checks, Kysely), only the command line and what the command
 * runs. Each test file starts the CLI tens of times; loading the jobs made
 * every start four times slower.
 */
describe('what a CLI start loads', () => {
  let hooks: { path: string; remove(): void };
  beforeAll(() => {
    hooks = scratchDir('cli-imports');
    writeFileSync(
      join(hooks.path, 'hook.mjs'),
      'export async function resolve(specifier, context, next) {\n  const resolved = await next(specifier, context);\n  process.stderr.write(`loaded ${resolved.url}\\n`);\n  return resolved;\n}\n',
    );
    writeFileSync(
      join(hooks.path, 'register.mjs'),
      "import { register } from 'node:module';\nregister(new URL('./hook.mjs', import.meta.url));\n",
    );
  });
  afterAll(() => hooks.remove());

  it.each(
    [['--help'], ['frobnicate'], ['jobs', 'list'], ['findings', 'list'], ['repair', 'show', 'repair']].map(
      (args): [string, string[]] => [args.join(' '), args],
    ),
  )('`oxijobs %s` loads neither the admin API nor a job', async (_name, args) => {
    const env = cleanEnv({ OXICLOUD_ADMIN_TOKEN: 'not-sent', OXICLOUD_ADMIN_URL: 'http://127.0.0.1:9' });
    const result = await runCli(args, env, ['--import', join(hooks.path, 'register.mjs')]);
    const loaded = [...result.stderr.matchAll(/^loaded (\S+)$/gm)].map((m) => m[1] as string);
    // The hook saw the CLI itself: the list is the real one.
    expect(loaded.some((url) => url.endsWith('/dist/cli.js'))).toBe(true);
    const heavy = loaded.filter((url) =>
      /\/packages\/(admin-api|tenants|consistency|recoverable|scheduler)\/dist\/index\.js$|\/node_modules\/(kysely|pg|hono|jose|zod|music-metadata)\//.test(
        url,
      ),
    );
    expect(heavy, args.join(' ')).toEqual([]);
  });
});

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
      'OXICLOUD_STORAGE_DOMAIN',
      'OXICLOUD_DB_CONNECTION_STRING',
      'OXIJOBS_SCHEMA',
      'OXIJOBS_JWT_SECRET',
      'OXIJOBS_OXICLOUD_WORKDIR',
      'OXIJOBS_GRANT_CLEANUP_INTERVAL_HOURS',
    ]) {
      expect(serve, name).toContain(name);
    }
    // OxiCloud's own switches are listed as OxiCloud's, never as the engine's.
    const oxicloudOnly = serve.slice(serve.indexOf("OxiCloud's own (read by OxiCloud"));
    for (const name of ['OXICLOUD_JWT_SECRET', 'OXICLOUD_ENABLE_TRASH', 'OXICLOUD_GRANT_CLEANUP_ENABLED']) {
      expect(oxicloudOnly, name).toContain(`  ${name}: `);
      expect(serve, name).not.toMatch(new RegExp(`\\n  ${name} +\\S`));
    }
    for (const args of [['migrate'], ['seed'], ['token'], ['users', 'set-email'], ['alerts', 'test']]) {
      const text = await help(...args);
      expect(text, args.join(' ')).toContain('Environment (read by this command)');
      expect(text, args.join(' ')).toContain('DATABASE_URL');
      expect(text, args.join(' ')).toContain('OXICLOUD_EMBEDDED_POSTGRES_PORT');
      // Each of them migrates (OxiCloud's storage domain, the only value) and refuses an old-model database.
      expect(text, args.join(' ')).toContain('OXICLOUD_STORAGE_DOMAIN');
    }
    const token = await help('token');
    expect(token).toContain('OXIJOBS_JWT_SECRET');
    // OxiCloud's session secret is named only as the one the engine never uses, never as a variable it reads.
    expect(token).not.toMatch(/\n {2}OXICLOUD_JWT_SECRET +\S/);
    const alertsTest = await help('alerts', 'test');
    expect(alertsTest).toContain('OXICLOUD_SMTP_TLS');
    expect(alertsTest).toContain('OXICLOUD_SMTP_PASS');
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

  it('a fault the small dataset has too few candidates for says how many it needs (exit 2), leaving no new blob folders', async () => {
    const blobs = serverStorageRoot(dir.path);
    const before = blobFolders(blobs);
    const result = await runCli(
      [
        'seed',
        ...['--users', '2', '--files-per-user', '5', '--multi-chunk-share', '0', '--seed', '7'],
        ...['--faults', 'missing_manifest', '--faults-per-kind', '50'],
      ],
      cleanEnv({ DATABASE_URL: db.url, OXICLOUD_DATA_DIR: dir.path }),
    );
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(
      /fault missing_manifest needs 50 candidates but the clean dataset has \d+: /,
    );
    // The fault failed after the content's bytes were written: rolled back, the bytes and their folders gone again.
    expect(blobFolders(blobs)).toEqual(before);
    const { rows } = await db.pool.query(
      "SELECT count(*)::int AS n FROM auth.users WHERE username LIKE 'o7-%'",
    );
    expect(rows).toEqual([{ n: 0 }]);
  });

  it('--list-resources lists each resource a fault touched under its fault, and the finding it must give', async () => {
    const result = await runCli(
      [
        'seed',
        ...['--users', '3', '--files-per-user', '10', '--multi-chunk-share', '0', '--seed', '8'],
        ...['--faults', 'orphan_blob_on_disk', '--faults-per-kind', '2', '--list-resources'],
      ],
      cleanEnv({ DATABASE_URL: db.url, OXICLOUD_DATA_DIR: dir.path }),
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /\norphan_blob_on_disk: 2 resource\(s\)\n {2}blob [0-9a-f]{64} {2}\S[^\n]*\n {2}blob [0-9a-f]{64} {2}\S/,
    );
    expect(result.stdout).toMatch(
      /\n {2}orphan_blob_on_disk: storage_consistency reports orphan_blob \(Reclaimable, §12\.18\) on [0-9a-f]{64}, [0-9a-f]{64}$/m,
    );
  });

  it('a seed whose database fails midway removes the blob folders it made (and its bytes)', async () => {
    const fresh = scratchDir('seed-fails');
    try {
      // The bytes are written, then the rows: a user that already exists with the seed's second username breaks the insert.
      await db.pool.query(
        "INSERT INTO auth.users (username, email, role) VALUES ('o11-u000002', 'o11-u000002@dataset.oxicloud.test', 'user')",
      );
      const result = await runCli(
        ['seed', '--users', '3', '--files-per-user', '4', '--multi-chunk-share', '0', '--seed', '11'],
        cleanEnv({ DATABASE_URL: db.url, OXICLOUD_DATA_DIR: fresh.path }),
      );
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain('oxicloud dataset generation failed in phase');
      expect(readdirSync(fresh.path)).not.toContain('storage');
    } finally {
      fresh.remove();
    }
  });

  it('at a terminal, the progress bar and the log lines never share a line', async () => {
    const screenDir = scratchDir('seed-tty');
    const terminal = new Terminal(screenDir.path, 'seed-tty');
    const ttyDb = await createTestDatabase();
    try {
      const vars = `DATABASE_URL=${shellQuote(ttyDb.url)} OXICLOUD_DATA_DIR=${shellQuote(screenDir.path)}`;
      terminal.type(
        `env -u OXICLOUD_LOG_FORMAT -u OXICLOUD_LOG_LEVEL ${vars} ${shellQuote(process.execPath)} ${shellQuote(CLI)} ` +
          'seed --users 10 --files-per-user 40 --multi-chunk-share 0.02 --seed 21; echo "SEED-EXIT=$?"',
      );
      const deadline = Date.now() + 120_000;
      while (!/SEED-EXIT=\d/.test(terminal.output()) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const screen = terminal.screen();
      expect(screen).toContain('SEED-EXIT=0');
      const lines = screen.split('\n');
      const logLines = lines.filter((l) => /\] (INFO|WARN)/.test(l));
      expect(logLines.some((l) => l.includes('oxicloud dataset phase blob_bytes done'))).toBe(true);
      // The bar was drawn (its frames are in what the terminal received; the closing log line clears its last one).
      expect(terminal.output()).toMatch(/\|[█░]+\| +\d+% [\d,]+\/[\d,]+/);
      for (const line of logLines) {
        expect(line).not.toMatch(/[█░]|\b[a-z_]+: \d+\/\d+/);
        expect(line.match(/\] (INFO|WARN)/g)).toHaveLength(1);
      }
    } finally {
      terminal.close();
      screenDir.remove();
      await ttyDb.drop();
    }
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

  it('token prints only the token on stdout and no info lines at the default level; warnings still show', async () => {
    const quiet = await runCli(['token', '--user', 'admin'], cleanEnv({ DATABASE_URL: db.url }));
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    expect(quiet.stderr).not.toContain('"level":"info"');
    expect(quiet.stderr.trim().split('\n')).toEqual([
      expect.stringContaining(
        'token for admin "admin", valid 43200 s; use it as: Authorization: Bearer <token>',
      ),
    ]);
    const loud = await runCli(
      ['token', '--user', 'admin'],
      cleanEnv({ DATABASE_URL: db.url, OXICLOUD_LOG_LEVEL: 'info' }),
    );
    expect(loud.code, loud.stderr).toBe(0);
    expect(loud.stderr).toContain('"level":"info"');
    await db.pool.query("UPDATE auth.users SET username = 'root' WHERE username = 'admin'");
    try {
      const warned = await runCli(
        ['token', '--user', 'root'],
        cleanEnv({ DATABASE_URL: db.url, OXICLOUD_ADMIN_EMAIL: 'ops@example.org' }),
      );
      expect(warned.code, warned.stderr).toBe(0);
      expect(warned.stderr).toContain('"level":"warn"');
      expect(warned.stderr).toContain('OXICLOUD_ADMIN_EMAIL is set but there is no user');
      expect(warned.stderr).not.toContain('"level":"info"');
    } finally {
      await db.pool.query("UPDATE auth.users SET username = 'admin' WHERE username = 'root'");
    }
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
