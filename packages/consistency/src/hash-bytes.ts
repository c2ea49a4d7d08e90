import { ConsistencyError } from './consistency-error.js';

const HASH_PATTERN = /^[0-9a-f]{64}$/;

/**
 * The 32 bytes of a BLAKE3 hex hash (64 lowercase hex characters). Byte order
 * equals the order of the hex strings, so the bytes make a resumable cursor.
 *
 * @throws {ConsistencyError} `INVALID_KEY` when `hex` is not 64 lowercase hex characters.
 */
export function hashHexToBytes(hex: string): Uint8Array {
  if (!HASH_PATTERN.test(hex)) {
    throw new ConsistencyError(
      'INVALID_KEY',
      `not a BLAKE3 hash: ${JSON.stringify(hex)}; expected 64 lowercase hex characters`,
    );
  }
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

/**
 * The 64-character lowercase hex of a 32-byte hash.
 *
 * @throws {ConsistencyError} `INVALID_KEY` when `bytes` is not 32 bytes long.
 */
export function bytesToHashHex(bytes: Uint8Array): string {
  if (bytes.length !== 32) {
    throw new ConsistencyError('INVALID_KEY', `a BLAKE3 hash is 32 bytes, got ${bytes.length}`);
  }
  return Buffer.from(bytes).toString('hex');
}
