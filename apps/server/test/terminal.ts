import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A process as /proc shows it. */
export interface ProcInfo {
  readonly pid: number;
  readonly ppid: number;
  /** Its process group. */
  readonly pgid: number;
  readonly state: string;
  readonly command: string;
}

function procInfo(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid …": comm may hold spaces, so split after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    return { pid, ppid: Number(rest[1]), pgid: Number(rest[2]), state: rest[0] ?? '?', command };
  } catch {
    return undefined;
  }
}

/** Whether `pid` still runs (a zombie no init has reaped yet counts as gone). */
export function running(pid: number): boolean {
  const info = procInfo(pid);
  return info !== undefined && info.state !== 'Z';
}

/** `pid` and every live descendant of it. */
export function processTree(pid: number): ProcInfo[] {
  const all = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => procInfo(Number(name)))
    .filter((p): p is ProcInfo => p !== undefined && p.state !== 'Z');
  const tree: ProcInfo[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.shift()!;
    const self = all.find((p) => p.pid === next);
    if (self) tree.push(self);
    for (const child of all.filter((p) => p.ppid === next)) queue.push(child.pid);
  }
  return tree;
}

/**
 * An interactive bash in a tmux pseudo-terminal, driven as a person would:
 * lines typed with Enter, Ctrl-C as a real key (the terminal sends SIGINT to
 * the foreground process group). Everything the pane shows is appended to
 * `logPath`.
 */
export class Terminal {
  readonly name: string;
  readonly logPath: string;

  constructor(dir: string, label: string) {
    this.name = `oxijobs-${label}-${process.pid}-${Date.now().toString(36)}`;
    this.logPath = join(dir, `${label}-terminal.log`);
    writeFileSync(this.logPath, '');
    execFileSync('tmux', [
      'new-session',
      '-d',
      '-s',
      this.name,
      '-x',
      '220',
      '-y',
      '50',
      'bash --norc --noprofile -i',
    ]);
    execFileSync('tmux', ['pipe-pane', '-t', this.name, `cat >> '${this.logPath}'`]);
  }

  /** The pid of the pane's shell. */
  shellPid(): number {
    return Number(
      execFileSync('tmux', ['list-panes', '-t', this.name, '-F', '#{pane_pid}'], { encoding: 'utf8' }).trim(),
    );
  }

  /** Types `line` and Enter. */
  type(line: string): void {
    execFileSync('tmux', ['send-keys', '-t', this.name, '-l', line]);
    execFileSync('tmux', ['send-keys', '-t', this.name, 'Enter']);
  }

  ctrlC(): void {
    execFileSync('tmux', ['send-keys', '-t', this.name, 'C-c']);
  }

  output(): string {
    return readFileSync(this.logPath, 'utf8');
  }

  /** The pane as a person sees it (the scrollback too): lines rendered, redraws resolved, no escapes. */
  screen(): string {
    return execFileSync('tmux', ['capture-pane', '-p', '-J', '-t', this.name, '-S', '-'], {
      encoding: 'utf8',
    });
  }

  close(): void {
    try {
      execFileSync('tmux', ['kill-session', '-t', this.name], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  }
}

/** Shell-quotes `value` for a line typed into bash. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
