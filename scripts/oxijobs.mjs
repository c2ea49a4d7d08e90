#!/usr/bin/env node
// `pnpm oxijobs <command>` and `pnpm start` from the repo root: builds the
// server and what it depends on (a turbo cache hit when nothing changed),
// then runs the CLI as a child and stands in for it:
// - pnpm runs this script with `exec` (package.json), so there is no `sh`
//   between pnpm and this process: pnpm forwards SIGTERM/SIGHUP here, and a
//   clean stop exits 0 (no `[ELIFECYCLE] Command failed.`);
// - the child runs in its own session, so a Ctrl-C on the terminal reaches it
//   through this wrapper only; SIGINT and SIGTERM are forwarded as they come
//   (the server takes copies of one request within 1 s as that request; a
//   later second signal makes it exit at once);
// - SIGHUP (the terminal went away) is forwarded as SIGTERM, unless the
//   hangup was meant to be ignored: `nohup`/`trap '' HUP` in a non-Node
//   parent (pnpm), or output that goes to no terminal (what `nohup` does;
//   Node resets an ignored SIGHUP at startup, so that is all it can see);
// - if this wrapper dies outright (even SIGKILL), the child sees its IPC
//   channel close and shuts down cleanly;
// - it exits with the child's exit code.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const firstBuild = !existsSync(`${root}/apps/server/dist/cli.js`);

function log(line) {
  process.stderr.write(`oxijobs: ${line}\n`);
}

async function build() {
  const started = Date.now();
  let announced = false;
  const announce = (line) => {
    if (!announced) log(line);
    announced = true;
  };
  if (firstBuild) {
    announce(
      'building the server and its packages once (about 2–3 minutes on 2 cores; later starts reuse the build cache)…',
    );
  }
  const slow = setTimeout(() => announce('rebuilding the packages that changed…'), 2_000);
  const child = spawn(
    'pnpm',
    [
      'exec',
      'turbo',
      'run',
      'build',
      '--filter=@oxicloud/server...',
      // The first build shows one line per package as it goes; later ones only errors.
      firstBuild ? '--output-logs=hash-only' : '--output-logs=errors-only',
    ],
    {
      cwd: root,
      env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
      stdio: ['ignore', firstBuild ? 'inherit' : 'pipe', firstBuild ? 'inherit' : 'pipe'],
    },
  );
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const code = await new Promise((resolve) => child.on('close', (c, signal) => resolve(c ?? signal)));
  clearTimeout(slow);
  if (code !== 0) {
    process.stderr.write(output);
    log('building the server failed (output above)');
    process.exit(typeof code === 'number' ? code : 1);
  }
  if (announced) log(`built in ${Math.round((Date.now() - started) / 1000)} s`);
}

/**
 * Whether a hangup should leave the server running: the parent ignores
 * SIGHUP (Linux: /proc; pnpm keeps an ignore `nohup` set), or neither stdout
 * nor stderr is a terminal, so the terminal hanging up takes nothing from us
 * (`nohup` redirects them; Node itself has already reset the ignored SIGHUP).
 */
function hangupIgnored() {
  if (!process.stdout.isTTY && !process.stderr.isTTY) return true;
  try {
    const mask = /^SigIgn:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${process.ppid}/status`, 'utf8'))?.[1];
    return mask !== undefined && (BigInt(`0x${mask}`) & 1n) === 1n;
  } catch {
    return false;
  }
}
const ignoreHangup = hangupIgnored();
/** The CLI child, once built and started. */
let cli;
const forward = (signal) => {
  if (cli.exitCode === null && cli.signalCode === null) cli.kill(signal);
};
process.on('SIGHUP', () => {
  if (ignoreHangup) return;
  if (cli) forward('SIGTERM');
  else process.exit(129);
});

await build();

cli = spawn(process.execPath, [`${root}/apps/server/bin/oxijobs.js`, ...process.argv.slice(2)], {
  stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
  detached: true,
});

process.on('SIGINT', () => forward('SIGINT'));
process.on('SIGTERM', () => forward('SIGTERM'));

cli.on('exit', (code, signal) => {
  if (code !== null) process.exit(code);
  const numbers = { SIGINT: 2, SIGTERM: 15, SIGHUP: 1, SIGKILL: 9 };
  process.exit(128 + (numbers[signal] ?? 1));
});
