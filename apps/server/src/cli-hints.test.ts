import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Command, CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { createProgram } from './program.js';

const REPO = fileURLToPath(new URL('../../..', import.meta.url));

/** The non-test TypeScript sources of the server and of every package: what the CLI, the API and the page print. */
function sourceFiles(): string[] {
  const roots = [join(REPO, 'apps/server/src')];
  for (const name of readdirSync(join(REPO, 'packages'))) roots.push(join(REPO, 'packages', name, 'src'));
  const out: string[] = [];
  const walk = (dir: string): void => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isDirectory() && e.name !== 'node_modules') walk(path);
      else if (e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')) out.push(path);
    }
  };
  for (const root of roots) walk(root);
  return out;
}

/**
 * Every `oxijobs …` command line in `text` (code lines only: comments are not
 * printed): `oxijobs` then its words up to a backtick, quote, bracket or the
 * end of the literal. Prose that names the program (`the oxijobs server`) is
 * not a command line.
 */
export function hintsIn(text: string): string[] {
  const hints: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('*') || line.startsWith('//') || line.startsWith('/*')) continue;
    if (line.startsWith('Usage:')) continue; // commander's synopsis: `oxijobs jobs [options] [command]`
    const pattern =
      /(?<!the |The )\boxijobs((?: +(?:'[^']*'|<[^>\s]+>(?:=<[^>\s]+>)?|\$\{[^}]+\}|[^\s`'"()<>,;\\$]+))+)/g;
    for (const match of line.matchAll(pattern)) {
      hints.push(`oxijobs${(match[1] as string).replace(/[.:]+$/, '')}`);
    }
  }
  return hints;
}

/** The words commander parses for a hint: placeholders become sample values. */
function argvOf(hint: string): string[] {
  const words = hint.match(/'[^']*'|\S+/g) ?? [];
  return words.slice(1).map((word) => {
    if (word.startsWith("'")) return word.slice(1, -1);
    return word
      .replace(/\$\{[^}]*hash[^}]*\}/gi, 'a'.repeat(64))
      .replace(/\$\{[^}]+\}/g, 'x1')
      .replace(/<[^>]+>/g, 'x1');
  });
}

/** The program with every action a no-op and every usage error thrown instead of exiting. */
function inertProgram(): Command {
  const program = createProgram({});
  const visit = (command: Command): void => {
    command.exitOverride().configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
    if (command.commands.length === 0) command.action(() => undefined);
    for (const sub of command.commands) visit(sub);
  };
  visit(program);
  return program;
}

/** Commander's codes of a command line that names no command or option of the CLI (exit 2). */
const NOT_A_COMMAND = new Set([
  'commander.unknownCommand',
  'commander.unknownOption',
  'commander.excessArguments',
  'commander.invalidArgument',
]);

/** `null` when commander accepts the hint's command and options, else its code and message. */
async function refusal(hint: string): Promise<string | null> {
  try {
    await inertProgram().parseAsync(argvOf(hint), { from: 'user' });
    return null;
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    // An incomplete mention (`oxijobs jobs findings --kind` in prose) names a real command.
    if (!NOT_A_COMMAND.has(error.code)) return null;
    return `${error.code}: ${error.message}`;
  }
}

/** Every command's --help text, with the text added after it (examples, exit codes). */
function helpTexts(): string[] {
  const texts: string[] = [];
  const visit = (command: Command): void => {
    let text = '';
    command.configureOutput({
      writeOut: (t) => {
        text += t;
      },
    });
    command.outputHelp();
    texts.push(text);
    for (const sub of command.commands) visit(sub);
  };
  visit(createProgram({}));
  return texts;
}

describe('every `oxijobs …` command line the CLI, the API and the page print', () => {
  it('the checker refuses a command that does not exist, an unknown option and a bad hash', async () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a template literal
    expect(await refusal('oxijobs jobs show repair ${plan.run_id}')).toMatch(/unknownCommand/);
    expect(await refusal('oxijobs frobnicate')).toMatch(/unknownCommand/);
    expect(await refusal('oxijobs jobs list --colour')).toMatch(/unknownOption/);
    expect(await refusal('oxijobs repair apply x1 --hash abc')).toMatch(/invalidArgument/);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a template literal
    expect(await refusal('oxijobs jobs run repair ${runId} --follow')).toBeNull();
  });

  it('each one found in the sources is a valid command line', async () => {
    const found: { hint: string; where: string }[] = [];
    for (const file of sourceFiles()) {
      for (const hint of hintsIn(readFileSync(file, 'utf8')))
        found.push({ hint, where: relative(REPO, file) });
    }
    const hints = found.map((f) => f.hint);
    // The ones the repair commands print are among them, so this covers what `repair apply|show` say.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a template literal
    expect(hints).toContain('oxijobs jobs run repair ${runId} --follow');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a template literal
    expect(hints).toContain('oxijobs repair apply ${plan.id} --hash ${plan.hash}');
    expect(hints).toContain('oxijobs users set-email admin you@example.org');
    expect(found.length).toBeGreaterThan(25);
    const refused: string[] = [];
    for (const { hint, where } of found) {
      const why = await refusal(hint);
      if (why !== null) refused.push(`${where}: ${hint} → ${why}`);
    }
    expect(refused).toEqual([]);
  });

  it('each one in a --help text is a valid command line', async () => {
    const hints = helpTexts().flatMap(hintsIn);
    expect(hints).toContain(
      'oxijobs jobs trigger files_consistency --params \'{"batch_size":500}\' --follow',
    );
    expect(hints).toContain('oxijobs seed --users 100 --files-per-user 100 --faults all --list-resources');
    const refused: string[] = [];
    for (const hint of new Set(hints)) {
      const why = await refusal(hint);
      if (why !== null) refused.push(`${hint} → ${why}`);
    }
    expect(refused).toEqual([]);
  });
});
