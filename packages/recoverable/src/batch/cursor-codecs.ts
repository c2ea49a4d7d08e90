import { RecoverableError } from '../recoverable-error.js';

/**
 * How a walk turns its string key into the opaque cursor bytes the engine
 * stores, and back. Byte order must equal the key order of the walk.
 */
export interface CursorCodec {
  /** What the key is, for messages: `blob hash`, `file id`. */
  readonly keyName: string;
  /** @throws {RecoverableError} `INVALID_CURSOR` when `key` is not a key of this codec. */
  encode(key: string): Uint8Array;
  /** @throws {RecoverableError} `INVALID_CURSOR` when the bytes are not a cursor of this codec (a cursor of another job). */
  decode(bytes: Uint8Array): string;
}

const HASH_PATTERN = /^[0-9a-f]{64}$/;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function invalid(message: string): RecoverableError {
  return new RecoverableError('INVALID_CURSOR', message);
}

/** Cursor = the 32 bytes of a BLAKE3 hex hash (byte order = hex order). */
export const hashCursor: CursorCodec = {
  keyName: 'blob hash',
  encode(key) {
    if (!HASH_PATTERN.test(key)) {
      throw invalid(`not a BLAKE3 hash: ${JSON.stringify(key)}; expected 64 lowercase hex characters`);
    }
    return Uint8Array.from(Buffer.from(key, 'hex'));
  },
  decode(bytes) {
    if (bytes.length !== 32) throw invalid(`a blob-hash cursor is 32 bytes, got ${bytes.length}`);
    return Buffer.from(bytes).toString('hex');
  },
};

/** Cursor = a non-negative `serial`/`bigserial` id as 8 big-endian bytes (byte order = numeric order). */
export const serialCursor: CursorCodec = {
  keyName: 'serial id',
  encode(key) {
    if (!/^(0|[1-9]\d{0,18})$/.test(key) || BigInt(key) > 0x7fffffffffffffffn) {
      throw invalid(`not a serial id: ${JSON.stringify(key)}; expected a whole number from 0 to 2^63 - 1`);
    }
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setBigUint64(0, BigInt(key));
    return bytes;
  },
  decode(bytes) {
    if (bytes.length !== 8) throw invalid(`a serial-id cursor is 8 bytes, got ${bytes.length}`);
    return new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0).toString();
  },
};

/** Cursor = the 16 bytes of a UUID in canonical order (byte order = Postgres `uuid` order). */
export const uuidCursor: CursorCodec = {
  keyName: 'id',
  encode(key) {
    const lower = key.toLowerCase();
    if (!UUID_PATTERN.test(lower)) {
      throw invalid(`not a UUID: ${JSON.stringify(key)}; expected 8-4-4-4-12 hex digits`);
    }
    return Uint8Array.from(Buffer.from(lower.replaceAll('-', ''), 'hex'));
  },
  decode(bytes) {
    if (bytes.length !== 16) throw invalid(`a UUID cursor is 16 bytes, got ${bytes.length}`);
    const hex = Buffer.from(bytes).toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  },
};

/** Hex of a cursor, for log lines and messages (`null` for no cursor). */
export function cursorHex(cursor: Uint8Array | null): string | null {
  return cursor === null ? null : Buffer.from(cursor).toString('hex');
}
