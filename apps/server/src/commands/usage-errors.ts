import type { Command, CommanderError } from 'commander';

/** The exit code of a bad command line (unknown command or option, bad value): nothing was done. */
export const USAGE_EXIT_CODE = 2;

/**
 * The exit codes of a command that is not a `jobs`-style API client (serve,
 * migrate, seed, token, users, alerts), for its `--help`.
 */
export function commandExitCodesHelp(failure: string): string {
  return [
    '',
    'Exit codes:',
    '  0    success',
    `  1    ${failure}`,
    '  2    a bad command-line value (unknown command or option, a value out of range): nothing was done',
    '',
  ].join('\n');
}

/** `  serve, migrate, …`: the subcommands of `command` (for an unknown command's message). */
function commandList(command: Command): string {
  const names = command.commands.map((c) => c.name()).filter((name) => name !== 'help');
  const path = commandPath(command);
  return `the commands of ${path} are: ${names.join(', ')} (see \`${path} --help\`)\n`;
}

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c !== null; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * Makes every command of `program` (recursively) end a bad command line the
 * same way: `oxijobs: <what was wrong>` on stderr and exit 2; an unknown
 * command also lists the commands there are. `--help` and `--version` exit 0.
 */
export function applyUsageErrors(program: Command): void {
  const visit = (command: Command): void => {
    command
      .configureOutput({
        outputError: (text, write) => {
          write(`oxijobs: ${text.replace(/^error: /, '')}`);
          if (/^error: unknown command/.test(text) && command.commands.length > 0) {
            write(commandList(command));
          }
        },
      })
      .exitOverride((error: CommanderError) => {
        process.exit(error.exitCode === 0 ? 0 : USAGE_EXIT_CODE);
      });
    for (const sub of command.commands) visit(sub);
  };
  visit(program);
}
