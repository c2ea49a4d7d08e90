import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { renderProblems } from './markdown-render.js';

/**
 * Every README and docs file (every tracked `.md`): each link and each
 * repository path it names in backticks resolves inside the repository, so
 * a reader following the docs never lands on a file that is not there (or
 * on someone's machine outside the repository); and rendered by `marked`
 * (markdown-render.ts) it shows what was written: fences closed, no prose or
 * heading swallowed by one, no `<id>` passed through as an HTML tag.
 */
const root = fileURLToPath(new URL('../../..', import.meta.url));

/** Paths the docs name on purpose that the build or the tests create (not in git). */
const GENERATED = ['apps/server/test-artifacts/', 'bench/data'];

function markdownFiles(): string[] {
  return execFileSync('git', ['ls-files', '*.md'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f !== '' && !f.includes('node_modules/'));
}

/** Markdown without fenced code blocks (commands, not references). */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '');
}

function links(text: string): string[] {
  return [...prose(text).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

const MACHINE_PATH = /^\/(work|home|root|tmp|srv|Users|mnt|opt)\//;
const FILE_EXTENSION = /\.(md|ts|mts|mjs|js|json|sql|sh|ya?ml|png|tsv|csv)$/;

/** Backticked tokens that name a repository path: a slash and a file extension, or a top-level folder first. */
function backtickedPaths(text: string, topLevel: ReadonlySet<string>): string[] {
  const found: string[] = [];
  for (const m of prose(text).matchAll(/`([^`\s]+)`/g)) {
    const token = m[1]!;
    // URLs, package names, patterns and placeholders (`<id>`, `NNNN_name.sql`) name no file.
    if (/^[a-z]+:\/\//i.test(token) || token.startsWith('@') || /[<>*{}$=|]|NNN/.test(token)) continue;
    if (!token.includes('/')) continue;
    const first = token.replace(/^\.\//, '').split('/')[0]!;
    // An absolute path is a file on someone's machine (an HTTP path like `/api/admin/jobs` is not).
    if (isAbsolute(token) ? MACHINE_PATH.test(token) : topLevel.has(first) || FILE_EXTENSION.test(token)) {
      found.push(token);
    }
  }
  return found;
}

/** Why `target` (named in `file`) does not resolve inside the repository, or `undefined` when it does. */
function problem(file: string, target: string, base: 'file' | 'file-or-root'): string | undefined {
  const clean = decodeURIComponent(target.split('#')[0]!);
  if (clean === '') return undefined;
  if (isAbsolute(clean) && !clean.startsWith(root))
    return `${target}: an absolute path outside the repository`;
  const candidates = [
    resolve(root, dirname(file), clean),
    ...(base === 'file-or-root' ? [resolve(root, clean)] : []),
  ];
  for (const path of candidates) {
    const inside = relative(root, path);
    if (inside.startsWith('..')) continue;
    if (existsSync(path) || GENERATED.some((g) => `${inside}/`.startsWith(g) || inside.startsWith(g))) {
      return undefined;
    }
  }
  return `${target}: not in the repository`;
}

describe('README and docs references', () => {
  const files = markdownFiles();
  const topLevel = new Set(
    execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter((f) => f.includes('/'))
      .map((f) => f.split('/')[0]!),
  );
  topLevel.add('spec');

  it('finds the docs to check', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/architecture.md', 'bench/README.md']));
  });

  it('every link resolves inside the repository', () => {
    const broken: string[] = [];
    for (const file of files) {
      for (const target of links(readFileSync(join(root, file), 'utf8'))) {
        if (/^(https?|mailto):/i.test(target) || target.startsWith('#')) continue;
        const why = problem(file, target, 'file');
        if (why) broken.push(`${file}: ${why}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('every repository path in backticks resolves inside the repository', () => {
    const broken: string[] = [];
    for (const file of files) {
      for (const target of backtickedPaths(readFileSync(join(root, file), 'utf8'), topLevel)) {
        const why = problem(file, target, 'file-or-root');
        if (why) broken.push(`${file}: ${why}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('the check itself flags a missing file and a path outside the repository', () => {
    expect(problem('packages/alerts/README.md', 'spec/job-registry.md', 'file-or-root')).toContain(
      'not in the repository',
    );
    expect(problem('bench/README.md', '/work/shared/spec/x.md', 'file-or-root')).toContain(
      'outside the repository',
    );
    expect(backtickedPaths('see `spec/job-registry.md` and `pnpm start`', topLevel)).toEqual([
      'spec/job-registry.md',
    ]);
    expect(links('[a](docs/architecture.md) [b](https://x.org)')).toEqual([
      'docs/architecture.md',
      'https://x.org',
    ]);
  });
});

describe('README and docs render as written', () => {
  const files = markdownFiles();

  it('renders README.md, every docs/*.md and every packages/*/README.md', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'README.md',
        'docs/architecture.md',
        'docs/testing.md',
        'packages/alerts/README.md',
      ]),
    );
  });

  it('every doc renders with closed fences, no swallowed prose or heading, no raw tags', () => {
    const found: string[] = [];
    for (const file of files) {
      for (const problem of renderProblems(readFileSync(join(root, file), 'utf8'))) {
        found.push(`${file}: ${problem}`);
      }
    }
    expect(found).toEqual([]);
  });

  it('the check itself flags an unclosed fence, a swallowed paragraph and heading, and a raw tag', () => {
    expect(renderProblems('text\n\n```sh\npnpm start\n')).toEqual([
      'line 3: a code fence is never closed (it runs to the end of the file)',
    ]);
    const swallowed = [
      '```',
      'oxijobs jobs list',
      '```',
      'oxijobs findings show <id>',
      '```',
      '`oxijobs repair` (`/api/admin/repairs`) repairs after review: `plan` writes nothing',
      '',
      '## The admin page',
      '',
      '```sh',
      'pnpm oxijobs jobs list',
      '```',
      '',
    ].join('\n');
    expect(renderProblems(swallowed)).toEqual([
      'line 4: <id> is rendered as raw HTML (put it in backticks or write &lt;…&gt;)',
      'line 6: prose swallowed by a code block: `oxijobs repair` (`/api/admin/repairs`) repairs after review',
      'line 8: a heading (## The admin page) swallowed by a code block',
      'line 10: a fence opener (```sh) inside a code block: the fences are out of step',
    ]);
    expect(renderProblems('| a | b |\n|---|---|\n| node <id> lost | x |\n')).toHaveLength(1);
    // Code, backticks, comments and shell comments are fine.
    expect(
      renderProblems(
        '<!-- marker -->\n\nrun `show <id>`\n\n```sh\n# a comment\noxijobs findings show <id>\n```\n\n- `<id>` in a list\n',
      ),
    ).toEqual([]);
  });
});
