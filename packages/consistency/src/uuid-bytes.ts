import { ConsistencyError } from './consistency-error.js';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The 16 bytes of a UUID in its canonical order, so byte order equals
 * Postgres' `uuid` order (the cursor of every UUID-keyed walk).
 *
 * @throws {ConsistencyError} `INVALID_KEY` when `uuid` is not a canonical UUID.
 */
export function uuidToBytes(uuid: string): Uint8Array {
  if (!UUID_PATTERN.test(uuid)) {
    throw new ConsistencyError(
      'INVALID_KEY',
      `not a UUID: ${JSON.stringify(uuid)}; expected 8-4-4-4-12 hex digits`,
    );
  }
  return Uint8Array.from(Buffer.from(uuid.replaceAll('-', ''), 'hex'));
}

/**
 * The canonical lowercase UUID of 16 bytes.
 *
 * @throws {ConsistencyError} `INVALID_KEY` when `bytes` is not 16 bytes long.
 */
export function bytesToUuid(bytes: Uint8Array): string {
  if (bytes.length !== 16) {
    throw new ConsistencyError('INVALID_KEY', `a UUID is 16 bytes, got ${bytes.length}`);
  }
  const hex = Buffer.from(bytes).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
