/**
 * Codes a {@link ServerError} can carry.
 *
 * - `BAD_CONFIG`: an environment variable is out of its allowed range (the message names each one).
 * - `BAD_ARGUMENT`: a command-line value is out of its allowed range.
 * - `DATABASE_UNAVAILABLE`: neither `DATABASE_URL` nor the embedded Postgres could be reached or started.
 * - `MIGRATION_FAILED`: a migration failed; the migrations package's error is the `cause`.
 * - `DATABASE_REFUSED`: the database is one this build must not migrate (OxiCloud's own, one of the engine's old storage model, or one recorded with another storage domain); nothing was written.
 * - `USER_NOT_FOUND`, `NOT_ADMIN`: `oxijobs token` was asked for an unknown or non-admin user.
 * - `HTTP_LISTEN_FAILED`: the HTTP port could not be bound.
 * - `NOT_AVAILABLE`: a command whose implementation has not landed yet.
 * - `ALERT_SEND_FAILED`: `oxijobs alerts test` could not deliver (the message says why and what to set).
 * - `SEED_FAILED`: `oxijobs seed` could not generate (the seed is already in the database, or a write failed).
 */
export type ServerErrorCode =
  | 'BAD_CONFIG'
  | 'BAD_ARGUMENT'
  | 'DATABASE_UNAVAILABLE'
  | 'MIGRATION_FAILED'
  | 'DATABASE_REFUSED'
  | 'USER_NOT_FOUND'
  | 'NOT_ADMIN'
  | 'HTTP_LISTEN_FAILED'
  | 'NOT_AVAILABLE'
  | 'ALERT_SEND_FAILED'
  | 'SEED_FAILED';

/** The one error class of the server; the CLI prints its message (no stack) and exits non-zero. */
export class ServerError extends Error {
  override readonly name = 'ServerError';
  constructor(
    readonly code: ServerErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
