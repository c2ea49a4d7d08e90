import { type Command, Option } from 'commander';
import {
  JobsClientError,
  parseChoices,
  repairApplyCommand,
  repairChooseCommand,
  repairPlanCommand,
  repairShowCommand,
  SEVERITIES,
} from '../jobs-client/index.js';
import { action, addCommonOptions, exitCodesHelp, parser } from './jobs.js';

type Env = Readonly<Record<string, string | undefined>>;

/** A plan's hash: the sha256 `repair show` prints, 64 hex characters. */
export const hashParser = parser((value: string) => {
  const hash = value.trim();
  if (!/^[0-9a-f]{64}$/i.test(hash)) {
    throw new Error(
      `the hash must be 64 hex characters (got ${hash.length}): copy the \`hash\` line \`oxijobs repair show <id>\` prints`,
    );
  }
  return hash.toLowerCase();
});

/**
 * The `oxijobs repair …` command group over `/api/admin/repairs`: plan
 * (findings by ids or a filter; nothing is written but the plan), show,
 * choose, apply with the plan's hash (starts the `repair` run).
 */
export function registerRepairCommands(program: Command, env: Env = process.env): void {
  const repair = program
    .command('repair')
    .description('repair after review: plan, show, choose, apply (with the plan hash)')
    .addHelpText('after', exitCodesHelp());

  addCommonOptions(
    repair
      .command('plan')
      .description('plan the repair of open findings: by ids, or by --check/--kind/--severity')
      .argument('[finding-ids...]', 'finding ids (see `oxijobs findings list`)')
      .option('--check <check>', 'only this check (e.g. folders_consistency)')
      .option('--kind <kind>', 'only this finding kind (e.g. path_mismatch)')
      .addOption(new Option('--severity <severity>', 'only this severity').choices(SEVERITIES))
      .option('--choose <finding=choice...>', 'choices, e.g. 0193…=restore_parent'),
  )
    .addHelpText('after', exitCodesHelp())
    .action(
      action(env, (ctx, flags, ids: string[]) => {
        const filter = {
          ...(flags['check'] !== undefined ? { check: String(flags['check']) } : {}),
          ...(flags['kind'] !== undefined ? { kind: String(flags['kind']) } : {}),
          ...(flags['severity'] !== undefined ? { severity: String(flags['severity']) } : {}),
        };
        if (ids.length > 0 === Object.keys(filter).length > 0) {
          throw new JobsClientError(
            'USAGE',
            'give finding ids or --check/--kind/--severity, not both and not neither',
          );
        }
        return repairPlanCommand(ctx, {
          findingIds: ids,
          filter,
          choices: parseChoices((flags['choose'] as string[] | undefined) ?? []),
        });
      }),
    );

  addCommonOptions(
    repair
      .command('show')
      .description('a repair plan, its lines, their status and re-verification')
      .argument('<id>', 'plan id'),
  )
    .addHelpText('after', exitCodesHelp())
    .action(action(env, (ctx, _flags, id: string) => repairShowCommand(ctx, id)));

  addCommonOptions(
    repair
      .command('choose')
      .description('make choices on a plan not yet approved (its hash changes)')
      .argument('<id>', 'plan id')
      .argument('<finding=choice...>', 'e.g. 0193…=trash_child'),
  )
    .addHelpText('after', exitCodesHelp())
    .action(
      action(env, (ctx, _flags, id: string, pairs: string[]) =>
        repairChooseCommand(ctx, id, parseChoices(pairs)),
      ),
    );

  addCommonOptions(
    repair
      .command('apply')
      .description('approve the plan with its hash and start the repair run')
      .argument('<id>', 'plan id')
      .addOption(
        new Option('--hash <hash>', 'the hash `repair show` printed (64 hex): approves exactly what you read')
          .makeOptionMandatory()
          .argParser(hashParser),
      ),
  )
    .addHelpText('after', exitCodesHelp())
    .action(action(env, (ctx, flags, id: string) => repairApplyCommand(ctx, id, String(flags['hash']))));
}
