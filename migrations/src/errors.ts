/** Codes a {@link MigrationError} can carry. */
export type MigrationErrorCode = 'MIGRATION_FAILED' | 'CHECKSUM_MISMATCH' | 'BAD_MIGRATION_NAME';

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
