import { StorageError } from '../storage-error.js';

const BLOB_HASH = /^[0-9a-f]{64}$/;
const HASH_PREFIX = /^[0-9a-f]{1,64}$/;

/** Whether `value` is a blob key: 64 lowercase hex characters (a BLAKE3 hex digest). */
export function isBlobHash(value: unknown): value is string {
  return typeof value === 'string' && BLOB_HASH.test(value);
}

function describe(value: unknown): string {
  if (typeof value !== 'string') return `a value of type ${value === null ? 'null' : typeof value}`;
  const shown = value.length > 80 ? `${value.slice(0, 80)}…` : value;
  return `${JSON.stringify(shown)} (${value.length} characters)`;
}

/**
 * Refuses anything that is not a blob key with `INVALID_HASH`. Every backend
 * calls it first, before any file or network call, which also rules out path
 * traversal (`../`), separators and empty keys.
 *
 * @example
 * ```ts
 * assertBlobHash('af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262'); // ok
 * assertBlobHash('../etc/passwd'); // throws StorageError { code: 'INVALID_HASH' }
 * ```
 */
export function assertBlobHash(hash: unknown): asserts hash is string {
  if (isBlobHash(hash)) return;
  throw new StorageError(
    'INVALID_HASH',
    `invalid blob hash ${describe(hash)}: a blob key must be exactly 64 lowercase hex characters ` +
      '(0-9, a-f), the BLAKE3 hex digest of the bytes',
  );
}

/**
 * Validates a `list()` position: `null`/`undefined` (from the start) or 1 to
 * 64 lowercase hex characters (usually the last hash of the previous page;
 * a shorter prefix such as `7f` is allowed too). Returns it or `null`.
 */
export function normaliseStartAfter(startAfter: string | null | undefined): string | null {
  if (startAfter === null || startAfter === undefined) return null;
  if (typeof startAfter === 'string' && HASH_PREFIX.test(startAfter)) return startAfter;
  throw new StorageError(
    'INVALID_HASH',
    `invalid list position startAfter ${describe(startAfter)}: it must be null or 1 to 64 lowercase hex ` +
      'characters (usually the last hash of the previous page)',
  );
}

/** Validates a `list()` page size: a positive safe integer. */
export function assertListLimit(limit: unknown): asserts limit is number {
  if (typeof limit === 'number' && Number.isSafeInteger(limit) && limit > 0) return;
  throw new StorageError(
    'INVALID_ARGUMENT',
    `invalid list limit ${String(limit)}: it must be a positive integer`,
  );
}

/** Validates an announced blob size: `undefined` or a non-negative safe integer. */
export function assertBlobSize(size: unknown): asserts size is number | undefined {
  if (size === undefined || (typeof size === 'number' && Number.isSafeInteger(size) && size >= 0)) return;
  throw new StorageError(
    'INVALID_ARGUMENT',
    `invalid blob size ${String(size)}: it must be omitted or a non-negative integer number of bytes`,
  );
}
