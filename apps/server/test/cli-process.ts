import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The built CLI the tests run, as an operator would (`node apps/server/dist/cli.js`). */
export const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

/** The parent's environment without any OXICLOUD_* / OXIJOBS_* / DATABASE_URL, plus `extra`. */
export function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (
      value === undefined ||
      key.startsWith('OXICLOUD_') ||
      key.startsWith('OXIJOBS_') ||
      key === 'DATABASE_URL'
    ) {
      continue;
    }
    env[key] = value;
  }
  return { ...env, ...extra };
}

/** A running `oxijobs` process whose output is collected. */
export interface CliProcess {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or the signal name). */
  readonly exited: Promise<number | string>;
}

/** Starts `oxijobs <args>`; `nodeFlags` go to node before the CLI's path (`--import …`). */
export function startCli(
  args: string[],
  env: Record<string, string>,
  nodeFlags: readonly string[] = [],
): CliProcess {
  const child = spawn(process.execPath, [...nodeFlags, CLI, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exited = new Promise<number | string>((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Runs `oxijobs <args>` to completion. */
export async function runCli(
  args: string[],
  env: Record<string, string>,
  nodeFlags: readonly string[] = [],
): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const cli = startCli(args, env, nodeFlags);
  const code = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

/** GETs `url` until it answers `status` (or the deadline passes); returns the last response's JSON. */
export async function waitForStatus(
  url: string,
  status: number,
  options: { timeoutMs?: number; process?: CliProcess } = {},
): Promise<unknown> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (options.process?.child.exitCode !== null && options.process?.child.exitCode !== undefined) {
      throw new Error(`the server exited (${options.process.child.exitCode}): ${options.process.stderr()}`);
    }
    try {
      const res = await fetch(url);
      const body = await res.json();
      if (res.status === status) return body;
      last = `${res.status} ${JSON.stringify(body)}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(
    `${url} did not answer ${status} in time (last: ${last}); stderr: ${options.process?.stderr()}`,
  );
}

/** The JSON log lines a process wrote. */
export function jsonLines(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
