import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/** The parts of a node id: `<host>:<pid>:<6 hex>`. */
export interface NodeIdParts {
  readonly host: string;
  readonly pid: number;
  readonly suffix: string;
}

const SUFFIX = /^[0-9a-f]{6}$/;

/**
 * A fresh node id for this process: `${os.hostname()}:${process.pid}:${6
 * random hex}`. The random part tells two incarnations with the same pid
 * apart (a container restarted as pid 1).
 *
 * @example
 * ```ts
 * createNodeId(); // 'web-1:4127:9f03ac'
 * ```
 */
export function createNodeId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

/** The parts of a node id made by {@link createNodeId}, or `null` for any other text. */
export function parseNodeId(id: string): NodeIdParts | null {
  const suffixAt = id.lastIndexOf(':');
  const pidAt = id.lastIndexOf(':', suffixAt - 1);
  if (suffixAt < 0 || pidAt <= 0) return null;
  const pidText = id.slice(pidAt + 1, suffixAt);
  const suffix = id.slice(suffixAt + 1);
  if (!/^\d{1,10}$/.test(pidText) || !SUFFIX.test(suffix)) return null;
  return { host: id.slice(0, pidAt), pid: Number(pidText), suffix };
}

/** `true` while a process with this pid exists on this host (`process.kill(pid, 0)`). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, it is someone else's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * `true` when `owner` names a process of this host that is gone: its pid is
 * not alive, or it is this process's own pid (an earlier incarnation, as a
 * container restarted as pid 1). A `null` owner (a row written before schema
 * version 4) counts as gone too. Another host's node is never judged here:
 * its lease tells.
 */
export function isDeadLocalOwner(
  owner: string | null,
  self: { readonly host: string; readonly pid: number } = { host: hostname(), pid: process.pid },
  alive: (pid: number) => boolean = isProcessAlive,
): boolean {
  if (owner === null) return true;
  const parts = parseNodeId(owner);
  if (parts === null || parts.host !== self.host) return false;
  return parts.pid === self.pid || !alive(parts.pid);
}
