#!/usr/bin/env node
// Where the test time goes: per-package and per-file durations from the
// vitest JSON reports (`.test-results/vitest.json` in every workspace that
// ran tests; `pnpm test` keeps each pass's copy under `.test-results/pass-*`).
//
//   node scripts/test-timings.mjs                 the reports of the last run, package totals
//   node scripts/test-timings.mjs --files 15      and the 15 slowest files
//   node scripts/test-timings.mjs --dir .test-results/pass-1 --markdown
//
// A package's wall time runs from vitest's start (its global setup included:
// the test Postgres and the template database) to the end of its last file;
// a file's time is its own (what vitest reports as the file's start to end).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The workspaces that may hold a vitest report (the same list `pnpm test` reads). */
export function workspaceDirs() {
  const dirs = ['packages', 'apps', 'tests'].flatMap((dir) =>
    existsSync(join(root, dir)) ? readdirSync(join(root, dir)).map((name) => join(root, dir, name)) : [],
  );
  dirs.push(join(root, 'migrations'));
  return dirs;
}

/** The vitest report of a workspace: its live one, or its copy in a saved pass folder. */
export function reportPath(dir, savedDir) {
  return savedDir
    ? join(savedDir, `${relative(root, dir).replaceAll('/', '__')}.json`)
    : join(dir, '.test-results', 'vitest.json');
}

/** Per-package and per-file timings of the reports found (one entry a package that ran). */
export function collectTimings(savedDir) {
  const packages = [];
  for (const dir of workspaceDirs()) {
    const path = reportPath(dir, savedDir);
    if (!existsSync(path)) continue;
    const report = JSON.parse(readFileSync(path, 'utf8'));
    const files = (report.testResults ?? []).map((file) => ({
      // Repo-relative, also for a report written in another checkout of the repo.
      file: file.name.replace(/^.*?\/(?=(packages|apps|tests|migrations)\/)/, ''),
      seconds: Math.max(0, (file.endTime - file.startTime) / 1000),
      tests: (file.assertionResults ?? []).length,
      status: file.status,
    }));
    const end = Math.max(report.startTime, ...(report.testResults ?? []).map((f) => f.endTime));
    packages.push({
      name: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name,
      wallSeconds: (end - report.startTime) / 1000,
      fileSeconds: files.reduce((sum, f) => sum + f.seconds, 0),
      tests: report.numTotalTests ?? 0,
      passed: report.numPassedTests ?? 0,
      failed: report.numFailedTests ?? 0,
      files,
    });
  }
  return packages.sort((a, b) => b.wallSeconds - a.wallSeconds);
}

/**
 * What failed in the reports found: each failed test (file › its full name,
 * the first line of its error) and each failed file with no failed test (a
 * hook or an import that threw). `pnpm test` prints them last, where a log
 * cut to its tail still shows them.
 */
export function collectFailures(savedDir) {
  const failures = [];
  for (const dir of workspaceDirs()) {
    const path = reportPath(dir, savedDir);
    if (!existsSync(path)) continue;
    const report = JSON.parse(readFileSync(path, 'utf8'));
    for (const file of report.testResults ?? []) {
      const name = file.name.replace(/^.*?\/(?=(packages|apps|tests|migrations)\/)/, '');
      const failed = (file.assertionResults ?? []).filter((a) => a.status === 'failed');
      for (const a of failed) {
        failures.push(`${name} › ${a.fullName ?? a.title}: ${firstLine(a.failureMessages?.[0])}`);
      }
      if (failed.length === 0 && file.status === 'failed') {
        failures.push(`${name} (the file failed outside its tests): ${firstLine(file.message)}`);
      }
    }
  }
  return failures;
}

/** The ANSI colour codes of vitest's messages (ESC [ … m). */
const ANSI_COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

const firstLine = (text) =>
  String(text ?? 'no message')
    .replace(ANSI_COLOUR, '')
    .trim()
    .split('\n')[0]
    .slice(0, 300);

const s = (seconds) => seconds.toFixed(1);

/** The package table (and, with `top`, the slowest files) as Markdown or as aligned text. */
export function formatTimings(packages, { top = 0, markdown = false } = {}) {
  const rows = packages.map((p) => [
    p.name,
    String(p.files.length),
    String(p.tests),
    s(p.wallSeconds),
    s(p.fileSeconds),
  ]);
  const total = packages.reduce(
    (t, p) => ({
      files: t.files + p.files.length,
      tests: t.tests + p.tests,
      wall: t.wall + p.wallSeconds,
      file: t.file + p.fileSeconds,
    }),
    { files: 0, tests: 0, wall: 0, file: 0 },
  );
  rows.push(['total', String(total.files), String(total.tests), s(total.wall), s(total.file)]);
  const out = [table(['package', 'files', 'tests', 'wall s', 'sum of files s'], rows, markdown)];
  if (top > 0) {
    const files = packages
      .flatMap((p) => p.files)
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, top)
      .map((f) => [f.file, String(f.tests), s(f.seconds)]);
    out.push('', table(['file', 'tests', 's'], files, markdown));
  }
  return out.join('\n');
}

function table(header, rows, markdown) {
  if (markdown) {
    const line = (cells) => `| ${cells.join(' | ')} |`;
    return [line(header), line(header.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)].join(
      '\n',
    );
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const value = (flag) => {
    const i = args.indexOf(flag);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const dir = value('--dir');
  const packages = collectTimings(dir ? resolve(dir) : undefined);
  if (packages.length === 0) {
    console.error(`test-timings: no vitest report found${dir ? ` in ${dir}` : ''}; run the tests first`);
    process.exit(1);
  }
  console.log(
    formatTimings(packages, { top: Number(value('--files') ?? 0), markdown: args.includes('--markdown') }),
  );
}
