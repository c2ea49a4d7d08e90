/**
 * The fixed set of codes a {@link StorageError} carries. Callers branch on
 * the code, never on the message.
 *
 * - `INVALID_HASH`: a blob key is not 64 lowercase hex characters (a BLAKE3
 *   hex digest). Raised before any file or network call.
 * - `INVALID_ARGUMENT`: another argument is out of its allowed range (a
 *   negative size, a `limit` that is not a positive integer).
 * - `NOT_FOUND`: the blob (or row) does not exist.
 * - `SIZE_MISMATCH`: the bytes written differ in length from the size the
 *   caller announced; nothing was stored.
 *   On a read (`openFileContent`): a stored chunk, or a legacy blob, is
 *   longer or shorter than the size its manifest (or row) declares.
 * - `HASH_MISMATCH`: the BLAKE3 of the bytes differs from the key they are
 *   stored (or announced) under.
 * - `BACKEND_ERROR`: the disk, the S3 service or a hashing worker failed;
 *   the original error is the `cause`.
 * - `CONFLICT`: a row changed under a write that required it unchanged (a
 *   repair marking a blob while a reference to it appeared); nothing written.
 * - `INVALID_CONFIG`: a factory option or environment variable is out of its
 *   allowed range; the message names it, the bad value and what is allowed.
 * - `DECRYPTION_FAILED`: an object of an encrypted store (`EncryptedBlobStorage`)
 *   does not decrypt: its AES-256-GCM tag does not match (the key is not the
 *   one it was written with, or the stored bytes were altered), or it is
 *   shorter than the 28 bytes of nonce and tag (truncated, or never
 *   encrypted). No plaintext is returned.
 */
export const STORAGE_ERROR_CODES = [
  'INVALID_HASH',
  'INVALID_ARGUMENT',
  'NOT_FOUND',
  'SIZE_MISMATCH',
  'HASH_MISMATCH',
  'BACKEND_ERROR',
  'INVALID_CONFIG',
  'CONFLICT',
  'DECRYPTION_FAILED',
] as const;

/** One of {@link STORAGE_ERROR_CODES}. */
export type StorageErrorCode = (typeof STORAGE_ERROR_CODES)[number];

/** The one error class of `@oxicloud/storage`. */
export class StorageError extends Error {
  override readonly name = 'StorageError';
  readonly code: StorageErrorCode;

  constructor(code: StorageErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** Whether `value` is a {@link StorageError}, optionally with the given code. */
export function isStorageError(value: unknown, code?: StorageErrorCode): value is StorageError {
  return value instanceof StorageError && (code === undefined || value.code === code);
}

/**
 * Converts anything thrown by a backend into a {@link StorageError}: a
 * `StorageError` passes through unchanged, anything else becomes
 * `BACKEND_ERROR` with `message` as context and the original as `cause`.
 */
export function toStorageError(error: unknown, message: string): StorageError {
  if (error instanceof StorageError) return error;
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return new StorageError('BACKEND_ERROR', `${message}: ${detail}`, { cause: error });
}
