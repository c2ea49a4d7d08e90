import { readdir, readFile, readlink } from 'node:fs/promises';

/** The process listening on a TCP port, as far as /proc lets this user see it. */
export interface PortOwner {
  readonly pid: number;
  /** Its command line, arguments joined by spaces. */
  readonly command: string;
  /** The `-D` data directory when the owner is a Postgres postmaster. */
  readonly postgresDataDir: string | undefined;
}

async function listeningInodes(port: number): Promise<Set<string>> {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = await readFile(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is "ADDR:PORT"; state 0A is LISTEN; the inode is field 9.
      if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '0A' && fields[9]) inodes.add(fields[9]);
    }
  }
  return inodes;
}

/**
 * Who listens on `port` (Linux, through /proc): the pid and command line of
 * the first process holding a listening socket there, or `undefined` when
 * nothing does or this user cannot see the owner.
 */
export async function findPortOwner(port: number): Promise<PortOwner | undefined> {
  const inodes = await listeningInodes(port);
  if (inodes.size === 0) return undefined;
  let pids: string[];
  try {
    pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = await readdir(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode === undefined || !inodes.has(inode)) continue;
      const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => ''))
        .split('\0')
        .filter(Boolean);
      const dashD = argv.indexOf('-D');
      const isPostgres = /(^|\/)(postgres|postmaster)$/.test(argv[0] ?? '');
      return {
        pid: Number(pid),
        command: argv.join(' '),
        postgresDataDir: isPostgres && dashD >= 0 ? argv[dashD + 1] : undefined,
      };
    }
  }
  return undefined;
}
