import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Lexer, type Token, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';

/**
 * Every README and docs file (every tracked `.md`, so README.md, docs/*.md and
 * packages/*\/README.md among them) rendered by a maintained Markdown parser
 * (`marked`, GitHub-flavoured) the way a reader sees it: no fence left open,
 * no fence that swallows prose or a heading, and no `<id>`-like text that the
 * renderer passes through as an HTML tag (a browser or GitHub hides it).
 */
const root = fileURLToPath(new URL('../../..', import.meta.url));

function markdownFiles(): string[] {
  return execFileSync('git', ['ls-files', '*.md'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f !== '' && !f.includes('node_modules/'));
}

/** Languages whose comments start with `#`: a `# word` line in them is a comment, not a heading. */
const HASH_COMMENT_LANGUAGES = new Set([
  'sh',
  'bash',
  'shell',
  'console',
  'zsh',
  'yaml',
  'yml',
  'toml',
  'ini',
  'conf',
  'python',
  'py',
  'dockerfile',
  'make',
  'makefile',
  'text',
  'txt',
]);

/** HTML a doc may hold on purpose: comments (the config table's markers). */
const ALLOWED_HTML = /^<!--[\s\S]*-->\s*$/;

/** A line that reads as Markdown prose: several words and an inline code span or a link. */
function looksLikeProse(line: string): boolean {
  const words = line
    .trim()
    .split(/\s+/)
    .filter((w) => /[A-Za-z]{2,}/.test(w));
  if (words.length < 5) return false;
  const codeSpans = line.match(/`[^`\s][^`]*`/g)?.length ?? 0;
  return codeSpans >= 2 || /\[[^\]]+\]\([^)\s]+\)/.test(line);
}

function isFenced(token: Tokens.Code): boolean {
  return /^ {0,3}(`{3,}|~{3,})/.test(token.raw);
}

/** Whether a fenced code token's raw text ends with a closing fence of its opener. */
function isClosed(token: Tokens.Code): boolean {
  const lines = token.raw.replace(/\n+$/, '').split('\n');
  const opener = /^ {0,3}(`{3,}|~{3,})/.exec(lines[0] ?? '')?.[1] ?? '```';
  if (lines.length < 2) return false;
  const last = lines[lines.length - 1]!.trim();
  return last.length >= opener.length && new RegExp(`^\\${opener[0]}+$`).test(last);
}

/** Every problem a reader would see in `source` once rendered, each as `line N: what`. */
export function renderProblems(source: string): string[] {
  const problems: string[] = [];
  let offset = 0;
  const lineAt = (at: number) => source.slice(0, at).split('\n').length;
  // Inline tags are found in their block's raw text, after the previous one, for their own line.
  let block = { start: 0, raw: '', cursor: 0 };
  const inlineLine = (raw: string): number => {
    const at = block.raw.indexOf(raw, block.cursor);
    if (at < 0) return lineAt(block.start);
    block.cursor = at + raw.length;
    return lineAt(block.start + at);
  };
  const visit = (token: Token, line: number): void => {
    if (token.type === 'code' && isFenced(token as Tokens.Code)) {
      const code = token as Tokens.Code;
      if (!isClosed(code)) {
        problems.push(`line ${line}: a code fence is never closed (it runs to the end of the file)`);
      }
      const language = (code.lang ?? '').split(/\s/)[0]!.toLowerCase();
      code.text.split('\n').forEach((text, i) => {
        const where = `line ${line + 1 + i}`;
        if (/^ {0,3}(`{3,}|~{3,})\S/.test(text)) {
          problems.push(
            `${where}: a fence opener (${text.trim()}) inside a code block: the fences are out of step`,
          );
        } else if (/^#{2,6} \S/.test(text) || (/^# \S/.test(text) && !HASH_COMMENT_LANGUAGES.has(language))) {
          problems.push(`${where}: a heading (${text.trim()}) swallowed by a code block`);
        } else if (language === '' && looksLikeProse(text)) {
          problems.push(`${where}: prose swallowed by a code block: ${text.trim().slice(0, 60)}`);
        }
      });
      return;
    }
    if (token.type === 'html' && !ALLOWED_HTML.test(token.raw.trim())) {
      problems.push(
        `line ${token.block ? line : inlineLine(token.raw)}: ${token.raw.trim().slice(0, 40)} is rendered as raw HTML (put it in backticks or write &lt;…&gt;)`,
      );
      return;
    }
    if (token.type === 'codespan') return;
    const children: Token[] = [];
    if ('tokens' in token && Array.isArray(token.tokens)) children.push(...token.tokens);
    if (token.type === 'list') children.push(...(token as Tokens.List).items);
    if (token.type === 'table') {
      const table = token as Tokens.Table;
      for (const cell of [...table.header, ...table.rows.flat()]) children.push(...cell.tokens);
    }
    for (const child of children) visit(child, line);
  };
  for (const token of new Lexer({ gfm: true }).lex(source)) {
    block = { start: offset, raw: token.raw, cursor: 0 };
    visit(token, lineAt(offset));
    offset += token.raw.length;
  }
  return problems;
}

describe('README and docs render as written', () => {
  const files = markdownFiles();

  it('finds the docs to check', () => {
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
