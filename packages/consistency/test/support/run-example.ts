import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const HOOKS = new URL('./typescript-hooks.mjs', import.meta.url).href;
/** Registers the hooks before the example's first import. */
const REGISTER = `data:text/javascript,import { register } from 'node:module'; register(${JSON.stringify(HOOKS)});`;

/** What a program printed and how it ended. */
export interface ProgramRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** stdout then stderr. */
  readonly output: string;
}

/**
 * Runs one of the package's `examples/*.ts` as its own Node process, from the
 * sources (no build): the example's imports of `@oxicloud/*` are the
 * packages' `src/`, as they are in this repository. `env` is added to the
 * environment (without vitest's own variables, so the program is as plain as
 * a consumer's).
 */
export function runExample(
  file: string,
  env: Readonly<Record<string, string>>,
  timeoutMs = 60_000,
): ProgramRun {
  const path = fileURLToPath(new URL(`../../examples/${file}`, import.meta.url));
  const base: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(VITEST|NODE_OPTIONS$|npm_|PNPM|TURBO_)/i.test(key)) base[key] = value;
  }
  const run = spawnSync(
    process.execPath,
    ['--conditions=@oxicloud/source', '--no-warnings', '--import', REGISTER, path],
    { env: { ...base, ...env }, encoding: 'utf8', timeout: timeoutMs },
  );
  return { code: run.status, signal: run.signal, output: `${run.stdout ?? ''}${run.stderr ?? ''}` };
}
