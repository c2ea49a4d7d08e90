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
// The root's `typecheck:all`: the one type check of every workspace, which `pnpm lint` and `pnpm test` run too.
const tsc = run('tsc', 'pnpm', ['--silent', 'run', 'typecheck:all']);

const results = [await biome, await tsc, await vitest];
const failed = results.filter((r) => r.code !== 0);
for (const r of failed) if (r.out) console.log(`\n${r.label} failed:\n${r.out}`);
console.log(
  `\ntest:quick: ${failed.length === 0 ? 'passed' : `${failed.map((r) => r.label).join(', ')} failed`} in ${Math.round((Date.now() - started) / 1000)} s` +
    ` (biome ${results[0].seconds.toFixed(1)} s, tsc ${results[1].seconds.toFixed(1)} s, vitest ${results[2].seconds.toFixed(1)} s)`,
);
process.exit(failed.length === 0 ? 0 : 1);
