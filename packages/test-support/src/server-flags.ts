/**
 * Server settings of every Postgres the harness starts (embedded or in a
 * container), as `postgres` command-line flags: no durability (a test
 * database is thrown away) and room for the connections of parallel files
 * (under `pnpm test`, of every package's files: the pass shares one server).
 */
export const SERVER_FLAGS: readonly string[] = [
  '-c',
  'fsync=off',
  '-c',
  'synchronous_commit=off',
  '-c',
  'full_page_writes=off',
  '-c',
  'max_connections=500',
];
