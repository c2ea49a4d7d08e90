import { Command, InvalidArgumentError, Option } from 'commander';
import { parseDurationSeconds } from './commands/duration.js';
import { registerJobsCommands } from './commands/jobs.js';
import { migrateCommand } from './commands/migrate.js';
import { seedCommand } from './commands/seed.js';
import { serveCommand } from './commands/serve.js';
import { tokenCommand } from './commands/token.js';
import { envVarsHelp } from './config/env-vars.js';
import { loadConfig } from './config/server-config.js';
import { ServerError } from './server-error.js';

type Env = Readonly<Record<string, string | undefined>>;

function positiveInteger(what: string, { allowZero = false } = {}) {
  return (value: string): number => {
    const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(n) || (!allowZero && n === 0)) {
      throw new InvalidArgumentError(`${what} must be a whole number${allowZero ? '' : ' greater than 0'}.`);
    }
    return n;
  };
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

  program
    .command('seed')
    .description('generate a dataset (users, drives, folders, files, blobs) with optional fault injection')
    .addOption(new Option('--users <n>', 'number of users').default(10).argParser(positiveInteger('--users')))
    .addOption(
      new Option('--files-per-user <n>', 'files per user')
        .default(100)
        .argParser(positiveInteger('--files-per-user', { allowZero: true })),
    )
    .option('--no-blobs-on-disk', 'write blob rows only, no bytes in the blob backend')
    .addOption(
      new Option(
        '--faults <list>',
        'comma-separated fault injections (see @oxicloud/dataset), e.g. missing_blob,orphan_blob',
      )
        .default([] as string[], 'none')
        .argParser((value: string) => {
          const faults = value
            .split(',')
            .map((f) => f.trim())
            .filter((f) => f !== '');
          const bad = faults.filter((f) => !/^[a-z][a-z0-9_]*(:\d+)?$/.test(f));
          if (bad.length > 0) {
            throw new InvalidArgumentError(
              `fault names are snake_case (optionally name:count); bad: ${bad.join(', ')}.`,
            );
          }
          return faults;
        }),
    )
    .addOption(
      new Option('--seed <n>', 'random seed (same seed, same dataset)')
        .default(1)
        .argParser(positiveInteger('--seed', { allowZero: true })),
    )
    .action(
      async (options: {
        users: number;
        filesPerUser: number;
        blobsOnDisk: boolean;
        faults: string[];
        seed: number;
      }) => {
        await seedCommand(loadConfig(env), options);
      },
    );

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

  registerJobsCommands(program);
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
