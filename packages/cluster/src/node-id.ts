import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * A new id for this process: `${os.hostname()}:${pid}:${6 random hex}`, e.g.
 * `web-1:4242:a3f09c`. The suffix tells a restarted process with a reused pid
 * from its predecessor.
 */
export function createNodeId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

/** The host and pid an id names, or `null` for an id not made by {@link createNodeId}. */
export function parseNodeId(id: string): { readonly host: string; readonly pid: number } | null {
  const match = /^(.*):(\d+):[0-9a-f]{6}$/.exec(id);
  if (!match) return null;
  return { host: match[1] ?? '', pid: Number(match[2]) };
}
