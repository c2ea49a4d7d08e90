import { type Command, InvalidArgumentError, Option } from 'commander';
import {
  AdminClient,
  cancelCommand,
  DEFAULT_ADMIN_URL,
  DEFAULT_FOLLOW_INTERVAL_SECONDS,
  DEFAULT_TIMEOUT_SECONDS,
  EXIT_CODES,
  findingsCommand,
  JobsClientError,
  type JobsCommandContext,
  listCommand,
  parseParams,
  parseSeconds,
  parseWholeNumber,
  processIo,
  resolveConnection,
  runCommand,
  runsCommand,
  SEVERITIES,
  triggerCommand,
} from '../jobs-client/index.js';

type Env = Readonly<Record<string, string | undefined>>;

/** Wraps a value parser so commander prints `… argument 'x' is invalid. <what is allowed>`. */
export function parser<T>(parse: (value: string) => T): (value: string) => T {
  return (value) => {
    try {
      return parse(value);
    } catch (error) {
      throw new InvalidArgumentError((error as Error).message);
    }
  };
}

export const runsLimitParser = parser((v) => parseWholeNumber(v, 1, 500));
const findingsLimitParser = parser((v) => parseWholeNumber(v, 1, 1000));
export const offsetParser = parser((v) => parseWholeNumber(v, 0, 1_000_000_000));
const timeoutParser = parser((v) => parseSeconds(v, 0.1, 86_400));
const intervalParser = parser((v) => parseSeconds(v, 0.1, 3600));
const paramsParser = parser(parseParams);

/** Exit codes and environment of a `jobs` command; the `--follow` lines only where it follows. */
export function exitCodesHelp(
  options: { readonly follow?: boolean; readonly trigger?: boolean } = {},
): string {
  const lines = [
    '',
    'Exit codes:',
    options.follow
      ? '  0    success; with --follow: the run completed (consistency_batch: its outcome is ok)'
      : '  0    success',
    options.trigger
      ? "  1    the API refused or failed the request, the server is unreachable,\n       a triggered periodic job's outcome is err, or a followed run failed"
      : options.follow
        ? '  1    the API refused or failed the request, the server is unreachable, or a followed run failed'
        : '  1    the API refused or failed the request, or the server is unreachable',
    '  2    a bad command-line value, or no admin token (nothing was sent)',
    ...(options.follow
      ? [
          '  3    with --follow: the run ended paused (cancelled, or the server stopped);',
          '       `oxijobs jobs trigger <name>` resumes it',
          '  130  interrupted (Ctrl-C) while following; the run itself goes on',
        ]
      : []),
    '',
    'Environment (read by this command):',
    `  OXICLOUD_ADMIN_URL    admin API base URL (default ${DEFAULT_ADMIN_URL}); --url overrides`,
    '  OXICLOUD_ADMIN_TOKEN  admin bearer token; --token overrides; mint one with `oxijobs token --user admin`',
    '',
  ];
  return lines.join('\n');
}

/** `--limit`/`--offset` of a listing of runs (a recoverable job's runs, a periodic job's history). */
export function addRunPageOptions(command: Command): Command {
  return command
    .addOption(new Option('--limit <n>', 'how many runs, 1-500 (default 50)').argParser(runsLimitParser))
    .addOption(new Option('--offset <n>', 'skip this many runs').argParser(offsetParser));
}

/** The page that {@link addRunPageOptions}' flags ask for (absent flags: the server's defaults). */
export function runPageOf(flags: Readonly<Record<string, unknown>>): { limit?: number; offset?: number } {
  return {
    ...(flags['limit'] !== undefined ? { limit: flags['limit'] as number } : {}),
    ...(flags['offset'] !== undefined ? { offset: flags['offset'] as number } : {}),
  };
}

/** Flags every `jobs` subcommand takes. */
interface CommonFlags {
  readonly url?: string;
  readonly token?: string;
  readonly timeout?: number;
  readonly json?: boolean;
}

export function addCommonOptions(command: Command, options: { readonly trigger?: boolean } = {}): Command {
  return command
    .option('--url <url>', `admin API base URL (env OXICLOUD_ADMIN_URL, default ${DEFAULT_ADMIN_URL})`)
    .option('--token <token>', 'admin bearer token (env OXICLOUD_ADMIN_TOKEN; `oxijobs token --user admin`)')
    .addOption(
      new Option(
        '--timeout <seconds>',
        options.trigger
          ? `per-request timeout (default ${DEFAULT_TIMEOUT_SECONDS}; a periodic job's trigger waits up to 3600)`
          : `per-request timeout (default ${DEFAULT_TIMEOUT_SECONDS})`,
      ).argParser(timeoutParser),
    )
    .option('--json', "print the API's JSON document instead of a table");
}

function addFollowOptions(command: Command): Command {
  return command.addOption(
    new Option('--interval <seconds>', 'seconds between progress polls while following')
      .default(DEFAULT_FOLLOW_INTERVAL_SECONDS)
      .argParser(intervalParser),
  );
}

/**
 * Runs one `jobs` action: resolves the connection, runs it, prints a
 * {@link JobsClientError} as one `oxijobs: …` line, and exits with the
 * command's code (0 returns to the program, which exits 0).
 */
export function action<Args extends unknown[]>(
  env: Env,
  run: (ctx: JobsCommandContext, flags: Record<string, unknown>, ...args: Args) => Promise<number>,
  options: { readonly interruptible?: boolean } = {},
): (...args: unknown[]) => Promise<void> {
  return async (...received: unknown[]) => {
    const command = received.at(-1) as Command;
    const flags = command.opts() as CommonFlags & Record<string, unknown>;
    const args = received.slice(0, -2) as Args;
    const controller = new AbortController();
    const onSigint = (): void => controller.abort();
    if (options.interruptible) process.once('SIGINT', onSigint);
    let code: number;
    try {
      const client = new AdminClient(resolveConnection(flags, env));
      code = await run(
        { client, io: processIo(controller.signal), json: flags.json === true },
        flags,
        ...args,
      );
    } catch (error) {
      if (!(error instanceof JobsClientError)) throw error;
      process.stderr.write(`oxijobs: ${error.message}\n`);
      code = error.exitCode;
    } finally {
      process.removeListener('SIGINT', onSigint);
    }
    if (code !== EXIT_CODES.ok) process.exit(code);
  };
}

function followOptionsOf(flags: Record<string, unknown>) {
  return {
    intervalMs: Math.round((flags['interval'] as number) * 1000),
    tty: process.stdout.isTTY === true,
  };
}

/**
 * The `oxijobs jobs …` command group: a client of a running server's admin
 * API (`OXICLOUD_ADMIN_URL`, `OXICLOUD_ADMIN_TOKEN`). Tables by default,
 * `--json` for scripts; usage errors exit 2 (see `oxijobs jobs --help`).
 */
export function registerJobsCommands(program: Command, env: Env = process.env): void {
  const jobs = program
    .command('jobs')
    .description("client of a running server's admin API: list, trigger, cancel, runs, findings")
    .addHelpText('after', exitCodesHelp({ follow: true, trigger: true }));

  addCommonOptions(
    jobs.command('list').description('list the registered jobs: schedule, state, last outcome'),
  )
    .addHelpText('after', exitCodesHelp())
    .action(action(env, (ctx) => listCommand(ctx)));

  addFollowOptions(
    addCommonOptions(
      jobs
        .command('trigger')
        .description(
          'run a job now: a periodic job prints its outcome; a recoverable job starts or resumes its run',
        )
        .argument('<name>', 'job name (see `oxijobs jobs list`)')
        .option('--force', 'acceleration semantics (grace windows of 0)')
        .option('--deep', 'consistency checks re-hash bytes and sniff mime types')
        .addOption(
          new Option('--params <json>', 'run params of a recoverable job, a JSON object').argParser(
            paramsParser,
          ),
        )
        .option('--follow', 'show live progress until the run ends (exit 0 completed, 1 failed, 3 paused)'),
      { trigger: true },
    ),
  )
    .addHelpText(
      'after',
      `\nPeriodic jobs take --force only (consistency_batch also --deep); --params and --deep on another periodic job are refused.\n\nExamples:\n  oxijobs jobs trigger trash_cleanup --force\n  oxijobs jobs trigger files_consistency --params '{"batch_size":500}' --follow\n  oxijobs jobs trigger consistency_batch --deep --follow\n${exitCodesHelp({ follow: true, trigger: true })}`,
    )
    .action(
      action(
        env,
        (ctx, flags, name: string) =>
          triggerCommand(ctx, name, {
            ...(flags['force'] ? { force: true } : {}),
            ...(flags['deep'] ? { deep: true } : {}),
            ...(flags['params'] !== undefined ? { params: flags['params'] as Record<string, unknown> } : {}),
            ...(flags['timeout'] !== undefined ? { timeout: flags['timeout'] as number } : {}),
            follow: flags['follow'] === true,
            followOptions: followOptionsOf(flags),
          }),
        { interruptible: true },
      ),
    );

  addCommonOptions(
    jobs
      .command('cancel')
      .description("ask a recoverable job's active run to pause at its next batch boundary")
      .argument('<name>', 'job name'),
  )
    .addHelpText('after', exitCodesHelp())
    .action(action(env, (ctx, _flags, name: string) => cancelCommand(ctx, name)));

  addCommonOptions(
    addRunPageOptions(
      jobs
        .command('runs')
        .description("a recoverable job's runs, newest first")
        .argument('<name>', 'job name'),
    ),
  )
    .addHelpText('after', exitCodesHelp())
    .action(action(env, (ctx, flags, name: string) => runsCommand(ctx, name, runPageOf(flags))));

  addFollowOptions(
    addCommonOptions(
      jobs
        .command('run')
        .description('one run: status, progress, cursor, params, stats, error')
        .argument('<name>', 'job name')
        .argument('<id>', 'run id (see `oxijobs jobs runs <name>`)')
        .option('--follow', 'show live progress until the run ends (exit 0 completed, 1 failed, 3 paused)'),
    ),
  )
    .addHelpText('after', exitCodesHelp({ follow: true }))
    .action(
      action(
        env,
        (ctx, flags, name: string, id: string) =>
          runCommand(ctx, name, id, {
            follow: flags['follow'] === true,
            followOptions: followOptionsOf(flags),
          }),
        { interruptible: true },
      ),
    );

  addCommonOptions(
    jobs
      .command('findings')
      .description("a consistency run's findings: counts per kind, then the findings, worst first")
      .argument('<name>', 'job name')
      .argument('<id>', 'run id')
      .addOption(new Option('--severity <severity>', 'only this severity').choices(SEVERITIES))
      .option(
        '--kind <kind>',
        'only this finding kind (e.g. missing_blob; an unknown kind lists the allowed ones)',
      )
      .addOption(
        new Option('--limit <n>', 'how many findings, 1-1000 (default 100)').argParser(findingsLimitParser),
      )
      .addOption(new Option('--offset <n>', 'skip this many findings').argParser(offsetParser)),
  )
    .addHelpText('after', exitCodesHelp())
    .action(
      action(env, (ctx, flags, name: string, id: string) =>
        findingsCommand(ctx, name, id, {
          ...(flags['severity'] !== undefined ? { severity: flags['severity'] as string } : {}),
          ...(flags['kind'] !== undefined ? { kind: flags['kind'] as string } : {}),
          ...(flags['limit'] !== undefined ? { limit: flags['limit'] as number } : {}),
          ...(flags['offset'] !== undefined ? { offset: flags['offset'] as number } : {}),
        }),
      ),
    );
}
