import { Command, InvalidArgumentError, Option } from 'commander';
import { alertsTestCommand } from './commands/alerts-test.js';
import { parseDurationSeconds } from './commands/duration.js';
import { registerJobsCommands } from './commands/jobs.js';
import { migrateCommand } from './commands/migrate.js';
import { addSeedFlags, seedCommand, seedOptionsFromCli } from './commands/seed.js';
import { serveCommand } from './commands/serve.js';
import { tokenCommand } from './commands/token.js';
import { setEmailCommand } from './commands/users.js';
import { envVarsHelp } from './config/env-vars.js';
import { loadConfig } from './config/server-config.js';
import { ServerError } from './server-error.js';

type Env = Readonly<Record<string, string | undefined>>;

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
    .addHelpText('after', envVarsHelp());

  program
    .command('serve')
    .description(
      'run the HTTP server (admin API, /healthz) and the scheduler; stops cleanly on SIGTERM/SIGINT',
    )
    .addHelpText('after', envVarsHelp())
    .action(async () => {
      await serveCommand(loadConfig(env), env);
    });

  program
    .command('migrate')
    .description('apply the pending SQL migrations (to the running server’s embedded Postgres when it is up)')
    .action(async () => {
      await migrateCommand(loadConfig(env));
    });

  addSeedFlags(
    program
      .command('seed')
      .description('generate a dataset (users, drives, folders, files, blobs) with optional fault injection'),
  )
    .addHelpText('after', '\nExample: oxijobs seed --users 100 --files-per-user 100 --faults all')
    .action(async (options: Record<string, unknown>) => {
      const datasetOptions = seedOptionsFromCli(options);
      await seedCommand(loadConfig(env), datasetOptions);
    });

  program
    .command('token')
    .description('print a bearer token for an ADMIN user as the last line of stdout')
    .requiredOption('--user <username>', 'username of an admin (the first boot creates "admin")')
    .addOption(
      new Option('--expires-in <duration>', 'lifetime: a number followed by s, m, h or d')
        .default(12 * 3600, '12h')
        .argParser(duration),
    )
    .action(async (options: { user: string; expiresIn: number }) => {
      await tokenCommand(loadConfig(env), { user: options.user, expiresInSeconds: options.expiresIn });
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
    .action(async (username: string, email: string) => {
      await setEmailCommand(loadConfig(env), { username, email });
    });

  const alerts = program.command('alerts').description('e-mail alerts');
  alerts
    .command('test')
    .description(
      'send a test alert to every admin with an address through OXICLOUD_SMTP_*, print what the SMTP server answered (exit 1 on failure)',
    )
    .action(async () => {
      await alertsTestCommand(loadConfig(env), env);
    });

  registerJobsCommands(program, env);
  return program;
}

/**
 * Runs the CLI: a {@link ServerError} (bad config, unknown user, database
 * unreachable, …) prints `oxijobs: <message>` on stderr, no stack, and exits 1.
 */
export async function runCli(argv: readonly string[], env: Env = process.env): Promise<never> {
  try {
    await createProgram(env).parseAsync([...argv]);
    process.exit(0);
  } catch (error) {
    if (error instanceof ServerError) {
      process.stderr.write(`oxijobs: ${error.message}\n`);
    } else {
      process.stderr.write(`oxijobs: unexpected error: ${(error as Error)?.message ?? String(error)}\n`);
      if (env['OXICLOUD_LOG_LEVEL'] === 'debug' || env['OXICLOUD_LOG_LEVEL'] === 'trace') {
        process.stderr.write(`${(error as Error)?.stack ?? ''}\n`);
      }
    }
    process.exit(1);
  }
}
