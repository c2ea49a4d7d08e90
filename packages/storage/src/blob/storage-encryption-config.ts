import { createSecretKey, type KeyObject } from 'node:crypto';
import { StorageError } from '../storage-error.js';

/** The environment variables {@link storageEncryptionFromEnv} reads: OxiCloud's own names and meaning. */
export const STORAGE_ENCRYPTION_ENV = {
  enabled: 'OXICLOUD_STORAGE_ENCRYPTION_ENABLED',
  key: 'OXICLOUD_STORAGE_ENCRYPTION_KEY',
} as const;

/** Bytes of an AES-256 key. */
export const STORAGE_ENCRYPTION_KEY_BYTES = 32;

const STANDARD_BASE64_32 = /^[A-Za-z0-9+/]{43}=$/;

type Env = Readonly<Record<string, string | undefined>>;

/** What is wrong with `value` as standard base64 of 32 bytes, without ever showing it; `null` when nothing is. */
function keyProblem(value: string): string | null {
  if (STANDARD_BASE64_32.test(value) && Buffer.from(value, 'base64').toString('base64') === value)
    return null;
  if (/[-_]/.test(value) && /^[A-Za-z0-9\-_]+=*$/.test(value)) {
    return 'it uses the URL-safe base64 alphabet (- and _); use the standard one (+ and /)';
  }
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value)) {
    return `it has characters outside standard base64 (${value.length} characters given)`;
  }
  const decoded = Buffer.from(value, 'base64').byteLength;
  if (value.length === 43 && decoded === STORAGE_ENCRYPTION_KEY_BYTES) {
    return "its '=' padding is missing (standard base64 of 32 bytes is 44 characters ending in '=')";
  }
  if (decoded !== STORAGE_ENCRYPTION_KEY_BYTES) return `it decodes to ${decoded} bytes, not 32`;
  return 'it is not canonical standard base64 (the last character before the padding is off)';
}

const KEY_RULE =
  "the standard base64 (A-Z a-z 0-9 + /, with '=' padding) of exactly 32 bytes, 44 characters, " +
  'for example from `openssl rand -base64 32`';

/**
 * Parses an AES-256 key given as standard base64 of exactly 32 bytes
 * (OxiCloud's `OXICLOUD_STORAGE_ENCRYPTION_KEY` format) into a `KeyObject`,
 * whose bytes never show up in logs or `JSON.stringify`. Throws
 * `INVALID_CONFIG` naming `name` and what is allowed; the value itself never
 * appears in the message.
 *
 * @example
 * ```ts
 * const key = parseStorageEncryptionKey(process.env.OXICLOUD_STORAGE_ENCRYPTION_KEY ?? '');
 * ```
 */
export function parseStorageEncryptionKey(value: string, name = 'the storage encryption key'): KeyObject {
  const problem = typeof value === 'string' ? keyProblem(value) : 'it is not a string';
  if (problem !== null) {
    throw new StorageError(
      'INVALID_CONFIG',
      `${name} is not a valid key: ${problem}. It must be ${KEY_RULE}`,
    );
  }
  return createSecretKey(Buffer.from(value, 'base64'));
}

/**
 * Reads OxiCloud's encryption-at-rest settings:
 *
 * | variable | default | meaning |
 * |---|---|---|
 * | `OXICLOUD_STORAGE_ENCRYPTION_ENABLED` | `false` | `true`/`false` (also `1`/`0`, `yes`/`no`) |
 * | `OXICLOUD_STORAGE_ENCRYPTION_KEY` | — | required when enabled: standard base64 of 32 bytes |
 *
 * Returns the key when encryption is enabled, `null` when it is not (a key
 * set without `…_ENABLED=true` is ignored, as OxiCloud does). Every problem
 * is reported in one `INVALID_CONFIG` error naming each variable and what is
 * allowed, never the key.
 *
 * @example
 * ```ts
 * const encryption = storageEncryptionFromEnv(process.env);
 * const blobs = encryption === null ? base : new EncryptedBlobStorage({ inner: base, key: encryption.key });
 * ```
 */
export function storageEncryptionFromEnv(env: Env): { readonly key: KeyObject } | null {
  const { enabled: ENABLED, key: KEY } = STORAGE_ENCRYPTION_ENV;
  const raw = env[ENABLED]?.trim().toLowerCase() ?? '';
  let enabled: boolean;
  if (raw === '' || ['false', '0', 'no'].includes(raw)) enabled = false;
  else if (['true', '1', 'yes'].includes(raw)) enabled = true;
  else {
    throw new StorageError(
      'INVALID_CONFIG',
      `${ENABLED}=${JSON.stringify(env[ENABLED])} is not a boolean: use true or false (default false)`,
    );
  }
  if (!enabled) return null;
  const value = env[KEY]?.trim() ?? '';
  if (value === '') {
    throw new StorageError(
      'INVALID_CONFIG',
      `${KEY} (unset) is required when ${ENABLED}=true: ${KEY_RULE} (the key OxiCloud encrypts its blobs with)`,
    );
  }
  return { key: parseStorageEncryptionKey(value, KEY) };
}
