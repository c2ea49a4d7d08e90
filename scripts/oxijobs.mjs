#!/usr/bin/env node
// `pnpm oxijobs <command>` and `pnpm start` from the repo root: builds the
// server and what it depends on (a turbo cache hit when nothing changed),
// then runs the CLI as a child and stands in for it:
// - the child runs in its own session, so a Ctrl-C on the terminal reaches it
//   exactly once, through this wrapper (a second Ctrl-C is a second signal:
//   the server then exits at once);
// - SIGINT, SIGTERM and SIGHUP are forwarded (SIGHUP as SIGTERM); when pnpm
//   itself is stopped (it kills the `sh` between us, it does not forward),
//   this process is orphaned, notices, and asks the child to stop (SIGTERM);
// - if this wrapper dies outright, the child sees its IPC channel close and
//   shuts down cleanly;
// - it exits with the child's exit code.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
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

await build();

const cli = spawn(process.execPath, [`${root}/apps/server/bin/oxijobs.js`, ...process.argv.slice(2)], {
  stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
  detached: true,
});

const forward = (signal) => {
  if (cli.exitCode === null && cli.signalCode === null) cli.kill(signal);
};
process.on('SIGINT', () => forward('SIGINT'));
process.on('SIGTERM', () => forward('SIGTERM'));
process.on('SIGHUP', () => forward('SIGTERM'));

const parent = process.ppid;
const orphaned = setInterval(() => {
  if (process.ppid !== parent) {
    clearInterval(orphaned);
    forward('SIGTERM');
  }
}, 250);

cli.on('exit', (code, signal) => {
  clearInterval(orphaned);
  if (code !== null) process.exit(code);
  const numbers = { SIGINT: 2, SIGTERM: 15, SIGHUP: 1, SIGKILL: 9 };
  process.exit(128 + (numbers[signal] ?? 1));
});
