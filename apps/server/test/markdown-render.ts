import { Lexer, type Token, type Tokens } from 'marked';

/**
 * What a reader sees wrong in a Markdown file once a maintained parser
 * (`marked`, GitHub-flavoured) renders it: a fence left open, a fence that
 * swallows prose or a heading, and `<id>`-like text passed through as an HTML
 * tag (a browser or GitHub hides it). docs-links.test.ts runs it on every doc.
 */

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
