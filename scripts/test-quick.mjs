#!/usr/bin/env node
// `pnpm test:quick`: the loop to run while changing code, in well under two
// minutes. No build, no publint, no Postgres, no server process, no browser,
// no second pass: lint (biome) and type check (tsc) on the sources, the type
// tests, and the test files that touch no Postgres and start no process
// (the rule: packages/test-support/src/test-plan.ts). `pnpm test` runs all
// of it again, and everything else.
//
// Arguments go to vitest (a file filter, `--reporter=dot`, ...).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { workspaceDirs } from './test-timings.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = (name) => join(root, 'node_modules', '.bin', name);

/** The folders a workspace's lint script gives biome (`biome check src build`). */
function biomeFolders(dir) {
  const lint = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).scripts?.lint ?? '';
  return (/biome check ([^&]+)/.exec(lint)?.[1]?.trim().split(/\s+/) ?? []).map((p) => join(dir, p));
}

const folders = workspaceDirs()
  .filter((dir) => existsSync(join(dir, 'package.json')))
  .flatMap(biomeFolders);
// One type check of every workspace at once (each shared file once; the packages' lint checks them one by one),
// and the admin page's browser script, which has its own (DOM) program.
const programs = ['tsconfig.all.json', 'packages/admin-api/src/page/script/tsconfig.json'];

function run(label, command, args, env = process.env) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    child.stderr.on('data', (c) => {
      out += c;
    });
    child.on('exit', (code) =>
      resolve({ label, code: code ?? 1, out, seconds: (Date.now() - started) / 1000 }),
    );
  });
}

/** Runs `tasks` (functions returning a run) at most `limit` at a time, in order. */
async function pool(tasks, limit) {
  const results = [];
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]();
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  return results;
}

const started = Date.now();
const biome = run('biome', bin('biome'), ['check', ...folders]);
// The vitest run streams its output: it is the part a developer reads while it runs.
const vitest = new Promise((resolve) => {
  const begun = Date.now();
  const child = spawn(
    bin('vitest'),
    ['run', '--config', 'vitest.quick.config.ts', ...process.argv.slice(2)],
    {
      cwd: root,
      env: { ...process.env, OXICLOUD_TEST_SCOPE: 'quick' },
      stdio: 'inherit',
    },
  );
  child.on('exit', (code) =>
    resolve({ label: 'vitest', code: code ?? 1, out: '', seconds: (Date.now() - begun) / 1000 }),
  );
});
const tsc = pool(
  programs.map((project) => () => run(`tsc -p ${project}`, bin('tsc'), ['-p', project])),
  1,
);

const results = [await biome, ...(await tsc), await vitest];
const failed = results.filter((r) => r.code !== 0);
for (const r of failed) if (r.out) console.log(`\n${r.label} failed:\n${r.out}`);
const tscSeconds = results
  .filter((r) => r.label.startsWith('tsc'))
  .reduce((t, r) => Math.max(t, r.seconds), 0);
console.log(
  `\ntest:quick: ${failed.length === 0 ? 'passed' : `${failed.map((r) => r.label).join(', ')} failed`} in ${Math.round((Date.now() - started) / 1000)} s` +
    ` (biome ${results[0].seconds.toFixed(1)} s, vitest ${results.at(-1).seconds.toFixed(1)} s, slowest tsc ${tscSeconds.toFixed(1)} s)`,
);
process.exit(failed.length === 0 ? 0 : 1);
