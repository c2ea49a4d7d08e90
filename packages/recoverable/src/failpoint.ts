/**
 * Test-only failpoints: named places in the product code where a fault test
 * can kill the process (SIGKILL, no cleanup), to land a crash inside a window
 * too narrow for a kill from outside. Off unless `OXICLOUD_FAILPOINT` is set
 * when this module loads (read once): `<name>` fires on the first hit,
 * `<name>@<n>` on the n-th.
 *
 * Names: `checkpoint.after_batch_writes` (inside the checkpoint transaction,
 * after the batch's own writes, before the cursor UPDATE and the commit).
 */
const armed = parse(process.env['OXICLOUD_FAILPOINT']);
let hits = 0;

function parse(spec: string | undefined): { name: string; at: number } | null {
  if (spec === undefined || spec.trim() === '') return null;
  const [name, at] = spec.trim().split('@');
  const n = at === undefined ? 1 : Number(at);
  return name && Number.isInteger(n) && n >= 1 ? { name, at: n } : null;
}

/** Kills the process here when the failpoint `name` is armed and this is its hit. */
export function failpoint(name: string): void {
  if (armed === null || armed.name !== name) return;
  hits += 1;
  if (hits === armed.at) process.kill(process.pid, 'SIGKILL');
}
