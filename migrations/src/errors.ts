/**
 * Codes a {@link MigrationError} can carry.
 *
 * - `MIGRATION_FAILED`: a migration (or a package's schema step) failed and was rolled back.
 * - `CHECKSUM_MISMATCH`: an applied migration's file changed since.
 * - `BAD_MIGRATION_NAME`: a `.sql` file in the folder is not named `NNNN_lower_snake.sql`.
 * - `DOMAIN_MISMATCH`: the database was migrated with the other storage domain
 *   (`engine` | `oxicloud`, recorded in `public.oxicloud_storage_domain`);
 *   nothing was written.
 * - `RECOGNITION_FAILED`: `recogniseDatabase` could not read the catalog (a read
 *   failed, or the session it was given was inside a transaction).
 */
export type MigrationErrorCode =
  | 'MIGRATION_FAILED'
  | 'CHECKSUM_MISMATCH'
  | 'BAD_MIGRATION_NAME'
  | 'DOMAIN_MISMATCH'
  | 'RECOGNITION_FAILED';

/** The one error class of this package; `code` says what went wrong. */
export class MigrationError extends Error {
  override readonly name = 'MigrationError';
  constructor(
    readonly code: MigrationErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
