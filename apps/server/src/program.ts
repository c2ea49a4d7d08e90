import { Command, InvalidArgumentError, Option } from 'commander';
import { parseDurationSeconds } from './commands/duration.js';
import { registerFindingsCommands } from './commands/findings.js';
import { registerJobsCommands } from './commands/jobs.js';
import { registerClusterCommands } from './commands/nodes.js';
import { registerRepairCommands } from './commands/repair.js';
import { addSeedFlags, seedFlagsFromCli } from './commands/seed-flags.js';
import { applyUsageErrors, commandExitCodesHelp, USAGE_EXIT_CODE } from './commands/usage-errors.js';
import {
  CONFIG_DEFAULTS,
  DATABASE_VAR_NAMES,
  envVarsHelp,
  JOB_VARS_HELP,
  SMTP_VARS,
} from './config/env-vars.js';
import type { ServerConfig } from './config/server-config.js';
import { ServerError } from './server-error.js';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The configuration, loaded on first use: the commands that talk to the
 * admin API (jobs, findings, repair, nodes) never load the server's modules,
 * so `oxijobs jobs list` or `--help` starts in a fraction of the time `serve`
 * takes (each command below imports its implementation when it runs).
 */
async function config(env: Env): Promise<ServerConfig> {
  const { loadConfig } = await import('./config/server-config.js');
  return loadConfig(env);
}

function duration(value: string): number {
  const seconds = parseDurationSeconds(value);
  if (seconds === undefined) {
    throw new InvalidArgumentError(
      'use a number followed by s, m, h or d (for example 30m, 12h, 7d), up to 365d.',
    );
  }
  return seconds;
}

/**
 * The `oxijobs` command line. Every command reads the same environment
 * (see `oxijobs --help`); bad values end the command with one clear message
 * and a non-zero exit.
 */
export function createProgram(env: Env = process.env): Command {
  const program = new Command('oxijobs')
    .description('OxiCloud jobs: the periodic scheduler, recoverable runs and their admin API')
    .version('0.1.0')
    .showSuggestionAfterError()
    .addHelpText(
      'after',
      `${envVarsHelp(undefined, JOB_VARS_HELP)}\nEach command's --help lists the variables it reads.\n` +
        '\nExit codes: 0 success, 1 the command failed, 2 a bad command line (nothing was done);\n' +
        "each command's --help lists its own.\n",
    );

  program
    .command('serve')
    .description(
      'run the HTTP server (admin API, /healthz) and the scheduler; stops cleanly on SIGTERM/SIGINT',
    )
    .addHelpText('after', envVarsHelp(undefined, JOB_VARS_HELP))
    .addHelpText(
      'after',
      commandExitCodesHelp(
        'the server could not start (bad configuration, no database, port taken) or stopped on an error',
      ),
    )
    .action(async () => {
      const { serveCommand } = await import('./commands/serve.js');
      await serveCommand(await config(env), env);
    });

  program
    .command('migrate')
    .description(
      'apply the pending SQL migrations (to the running server’s embedded Postgres when it is up); ' +
        "on OxiCloud's own database only the engine's own schema",
    )
    .option(
      '--create-storage-domain',
      "on an empty database given as DATABASE_URL: create the storage domain (OxiCloud's schema) for the engine alone; " +
        'never needed beside OxiCloud or on the embedded Postgres',
    )
    .addHelpText('after', envVarsHelp(DATABASE_VAR_NAMES))
    .addHelpText(
      'after',
      commandExitCodesHelp(
        'a migration failed (nothing of it applied), the database was refused (nothing written) or is unreachable',
      ),
    )
    .action(async (flags: { createStorageDomain?: boolean }) => {
      const { migrateCommand } = await import('./commands/migrate.js');
      await migrateCommand(await config(env), { createStorageDomain: flags.createStorageDomain === true });
    });

  addSeedFlags(
    program
      .command('seed')
      .description(
        "generate a dataset in OxiCloud's model (users, groups, drives, folders, files, manifests, blobs) with optional fault injection",
      )
      .option(
        '--list-resources',
        'after the summary, list every resource each fault touched (type, id, label)',
      ),
  )
    .addHelpText(
      'after',
      '\nExample: oxijobs seed --users 100 --files-per-user 100 --faults all --list-resources',
    )
    .addHelpText(
      'after',
      "\nIt seeds OxiCloud's model only: --files-per-user is files per drive, --faults takes OxiCloud's fault names. " +
        "The old storage model's flags (--blobs-on-disk, --blob-size-min/-max, --second-drive-share, --root-file-share, " +
        '--grants) and fault names are gone with it.',
    )
    .addHelpText(
      'after',
      envVarsHelp(
        [
          ...DATABASE_VAR_NAMES,
          'OXICLOUD_STORAGE_BACKEND',
          'OXICLOUD_STORAGE_PATH',
          'OXIJOBS_OXICLOUD_WORKDIR',
          'OXICLOUD_STORAGE_ENCRYPTION_ENABLED',
          'OXICLOUD_STORAGE_ENCRYPTION_KEY',
        ],
        [
          "OXICLOUD_S3_* (OxiCloud's S3 settings; with OXICLOUD_STORAGE_BACKEND=s3: where the blobs are written)",
        ],
      ),
    )
    .addHelpText(
      'after',
      commandExitCodesHelp(
        'generation failed (rows rolled back, new blob folders removed), the seed is already in the database, or it is unreachable',
      ),
    )
    .action(async (options: Record<string, unknown>) => {
      const flags = seedFlagsFromCli(options);
      const { seedCommand } = await import('./commands/seed.js');
      await seedCommand(await config(env), flags, {
        listResources: options['listResources'] === true,
      });
    });

  program
    .command('token')
    .description(
      'print a bearer token for an ADMIN user on stdout (its only line; logs: warnings only unless OXICLOUD_LOG_LEVEL is set)',
    )
    .requiredOption(
      '--user <username>',
      'username or e-mail address of an admin (the first boot creates "admin" when no admin exists)',
    )
    .addOption(
      new Option('--expires-in <duration>', 'lifetime: a number followed by s, m, h or d')
        .default(12 * 3600, '12h')
        .argParser(duration),
    )
    .addHelpText('after', envVarsHelp([...DATABASE_VAR_NAMES, 'OXIJOBS_JWT_SECRET', 'OXICLOUD_ENV']))
    .addHelpText(
      'after',
      commandExitCodesHelp('no such user, the user is not an admin, or the database is unreachable'),
    )
    .action(async (options: { user: string; expiresIn: number }) => {
      const { tokenCommand } = await import('./commands/token.js');
      await tokenCommand(await config(env), {
        user: options.user,
        expiresInSeconds: options.expiresIn,
        logLevelSet: (env['OXICLOUD_LOG_LEVEL'] ?? '') !== '',
      });
    });

  const users = program
    .command('users')
    .description('manage users of the server (uses its database; no token needed)');
  users
    .command('set-email')
    .description("set or change a user's e-mail address (alerts go to every admin that has one)")
    .argument('<username>', 'the user, e.g. admin')
    .argument('<email>', 'the address, e.g. ops@example.org')
    .addHelpText('after', '\nExample: oxijobs users set-email admin ops@example.org')
    .addHelpText('after', envVarsHelp(DATABASE_VAR_NAMES))
    .addHelpText(
      'after',
      commandExitCodesHelp('no such user, or the database is unreachable (a malformed address exits 2)'),
    )
    .action(async (username: string, email: string) => {
      const { setEmailCommand } = await import('./commands/users.js');
      await setEmailCommand(await config(env), { username, email });
    });

  const alerts = program.command('alerts').description('e-mail alerts');
  alerts
    .command('test')
    .description(
      'say whether the running server (--url) has alerts on, then send a test alert to every admin with an address through OXICLOUD_SMTP_*, print what the SMTP server answered (exit 1 on failure)',
    )
    .option(
      '--url <url>',
      `the running server to ask (env OXICLOUD_ADMIN_URL, default http://127.0.0.1:${CONFIG_DEFAULTS.httpPort})`,
    )
    .option(
      '--token <token>',
      'admin token for it (env OXICLOUD_ADMIN_TOKEN; default: one minted for "admin")',
    )
    .addHelpText(
      'after',
      envVarsHelp([
        ...DATABASE_VAR_NAMES,
        ...SMTP_VARS.map((v) => v.name),
        'OXICLOUD_PUBLIC_BASE_URL',
        'OXIJOBS_JWT_SECRET',
        'OXICLOUD_ADMIN_URL',
        'OXICLOUD_ADMIN_TOKEN',
      ]),
    )
    .addHelpText(
      'after',
      '\nThe OXICLOUD_SMTP_* set for this command reach only it: the server needs them in its own environment to send alerts.',
    )
    .addHelpText(
      'after',
      commandExitCodesHelp('the mail was not delivered (the message says why and what to set)'),
    )
    .action(async (options: { url?: string; token?: string }) => {
      const { alertsTestCommand } = await import('./commands/alerts-test.js');
      await alertsTestCommand(await config(env), env, options);
    });

  registerJobsCommands(program, env);
  registerClusterCommands(program, env);
  registerFindingsCommands(program, env);
  registerRepairCommands(program, env);
  applyUsageErrors(program);
  return program;
}

/**
 * Runs the CLI: a {@link ServerError} (bad config, unknown user, database
 * unreachable, …) prints `oxijobs: <message>` on stderr, no stack, and exits
 * 1; a `BAD_ARGUMENT` one (a command-line value) exits 2, like commander's
 * own usage errors.
 */
export async function runCli(argv: readonly string[], env: Env = process.env): Promise<never> {
  try {
    await createProgram(env).parseAsync([...argv]);
    process.exit(0);
  } catch (error) {
    if (error instanceof ServerError) {
      process.stderr.write(`oxijobs: ${error.message}\n`);
      if (error.code === 'BAD_ARGUMENT') process.exit(USAGE_EXIT_CODE);
    } else {
      process.stderr.write(`oxijobs: unexpected error: ${(error as Error)?.message ?? String(error)}\n`);
      if (env['OXICLOUD_LOG_LEVEL'] === 'debug' || env['OXICLOUD_LOG_LEVEL'] === 'trace') {
        process.stderr.write(`${(error as Error)?.stack ?? ''}\n`);
      }
    }
    process.exit(1);
  }
}
