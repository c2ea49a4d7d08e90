/**
 * The fixed set of codes a {@link DatasetError} carries. Callers branch on
 * the code, never on the message.
 *
 * - `INVALID_OPTIONS`: an option (or a CLI flag) is out of its allowed range;
 *   the message names it, the bad value and what is allowed.
 * - `ALREADY_SEEDED`: the database already holds a dataset with this seed
 *   (its usernames exist); use another seed or a fresh database.
 * - `FAULT_NOT_APPLICABLE`: the clean dataset has too few candidates for a
 *   requested fault (for example no user with two drives); the message says
 *   which option to raise.
 * - `GENERATION_FAILED`: a database or blob-storage call failed; the original
 *   error is the `cause`. Rows are rolled back, and the blob bytes this
 *   call wrote that no row describes are deleted again.
 */
export type DatasetErrorCode =
  | 'INVALID_OPTIONS'
  | 'ALREADY_SEEDED'
  | 'FAULT_NOT_APPLICABLE'
  | 'GENERATION_FAILED';

/** The one error class of `@oxicloud/dataset`. */
export class DatasetError extends Error {
  override readonly name = 'DatasetError';
  readonly code: DatasetErrorCode;

  constructor(code: DatasetErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** Whether `value` is a {@link DatasetError}, optionally with the given code. */
export function isDatasetError(value: unknown, code?: DatasetErrorCode): value is DatasetError {
  return value instanceof DatasetError && (code === undefined || value.code === code);
}
