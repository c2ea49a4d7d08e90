import { type Command, Option } from 'commander';
import {
  FINDING_STATES,
  findingsDecideCommand,
  findingsListCommand,
  findingsShowCommand,
  parseWholeNumber,
  SEVERITIES,
} from '../jobs-client/index.js';
import { action, addCommonOptions, exitCodesHelp, parser } from './jobs.js';

type Env = Readonly<Record<string, string | undefined>>;

const limitParser = parser((v) => parseWholeNumber(v, 1, 1000));

/**
 * The `oxijobs findings …` command group: findings across runs (list, show,
 * accept, false-positive, reopen) through the admin API's
 * `/api/admin/findings`. `oxijobs jobs findings <job> <run>` stays the
 * per-run view.
 */
export function registerFindingsCommands(program: Command, env: Env = process.env): void {
  const findings = program
    .command('findings')
    .description('findings across runs: list, show, accept, false-positive, reopen')
    .addHelpText('after', exitCodesHelp());

  addCommonOptions(
    findings
      .command('list')
      .description('findings across runs, worst severity first, then most recently seen')
      .addOption(new Option('--state <state>', 'only this state').choices(FINDING_STATES))
      .addOption(new Option('--severity <severity>', 'only this severity').choices(SEVERITIES))
      .option('--kind <kind>', 'only this finding kind (e.g. missing_blob)')
      .option('--check <check>', 'only this check (e.g. files_consistency)')
      .option('--cursor <cursor>', 'the next page: the cursor the previous page printed')
      .addOption(new Option('--limit <n>', 'how many findings, 1-1000 (default 100)').argParser(limitParser)),
  )
    .addHelpText('after', exitCodesHelp())
    .action(
      action(env, (ctx, flags) =>
        findingsListCommand(ctx, {
          ...(flags['state'] !== undefined ? { state: String(flags['state']) } : {}),
          ...(flags['severity'] !== undefined ? { severity: String(flags['severity']) } : {}),
          ...(flags['kind'] !== undefined ? { kind: String(flags['kind']) } : {}),
          ...(flags['check'] !== undefined ? { check: String(flags['check']) } : {}),
          ...(flags['cursor'] !== undefined ? { cursor: String(flags['cursor']) } : {}),
          ...(flags['limit'] !== undefined ? { limit: flags['limit'] as number } : {}),
        }),
      ),
    );

  addCommonOptions(
    findings
      .command('show')
      .description('one finding: readable fields, its state changes and the runs that saw it')
      .argument('<id>', 'finding id (see `oxijobs findings list`)'),
  )
    .addHelpText('after', exitCodesHelp())
    .action(action(env, (ctx, _flags, id: string) => findingsShowCommand(ctx, id)));

  for (const [name, description] of [
    ['accept', 'accept a finding (known, lived with); open again when it gets worse or --until passes'],
    ['false-positive', 'mark a finding a false positive: never mailed, never closed or reopened by a run'],
    ['reopen', 'reopen an accepted, false-positive or fixed finding'],
  ] as const) {
    const command = findings
      .command(name)
      .description(description)
      .argument('<id>', 'finding id')
      .option('--comment <text>', 'why (required, 1-2000 characters; audited)');
    if (name === 'accept') {
      command.option('--until <date-time>', 'ISO 8601 date-time after which the finding is open again');
    }
    addCommonOptions(command)
      .addHelpText('after', exitCodesHelp())
      .action(
        action(env, (ctx, flags, id: string) =>
          findingsDecideCommand(ctx, name, id, {
            ...(flags['comment'] !== undefined ? { comment: String(flags['comment']) } : {}),
            ...(flags['until'] !== undefined ? { until: String(flags['until']) } : {}),
          }),
        ),
      );
  }
}
