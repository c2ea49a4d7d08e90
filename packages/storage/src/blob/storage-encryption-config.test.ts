import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { StorageError } from '../storage-error.js';
import { parseStorageEncryptionKey, storageEncryptionFromEnv } from './storage-encryption-config.js';

function failure(run: () => unknown): StorageError {
  try {
    run();
  } catch (error) {
    if (error instanceof StorageError) return error;
    throw error;
  }
  throw new Error('expected a StorageError');
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** The same 32 bytes with one of the two unused bits of the last character set: Node decodes it, strict decoders refuse it. */
function nonCanonical(standard: string): string {
  const last = ALPHABET[ALPHABET.indexOf(standard[42]!) | 1]!;
  return `${standard.slice(0, 42)}${last}=`;
}

describe('parseStorageEncryptionKey', () => {
  it('accepts the standard base64 of exactly 32 bytes', () => {
    const bytes = randomBytes(32);
    const key = parseStorageEncryptionKey(bytes.toString('base64'));
    expect(key.type).toBe('secret');
    expect(key.export().equals(bytes)).toBe(true);
    // a KeyObject keeps its bytes out of logs and JSON
    expect(JSON.stringify({ key })).not.toContain(bytes.toString('base64'));
  });

  it('refuses anything else, saying what is wrong and what is allowed, never the value', () => {
    const bytes = randomBytes(32);
    const standard = bytes.toString('base64');
    const cases: Array<[string, string]> = [
      [randomBytes(31).toString('base64'), 'decodes to 31 bytes, not 32'],
      [randomBytes(33).toString('base64'), 'decodes to 33 bytes, not 32'],
      [randomBytes(64).toString('base64'), 'decodes to 64 bytes, not 32'],
      [standard.slice(0, 43), "'=' padding is missing"],
      [nonCanonical(standard), 'not canonical'],
      [Buffer.alloc(32, 0xfb).toString('base64url'), 'URL-safe'], // -_v7-_v7…
      [`${standard.slice(0, 20)} ${standard.slice(21)}`, 'outside standard base64'],
      [bytes.toString('hex'), 'decodes to 48 bytes'],
      ['', 'decodes to 0 bytes'],
    ];
    for (const [value, mention] of cases) {
      const error = failure(() => parseStorageEncryptionKey(value, 'OXICLOUD_STORAGE_ENCRYPTION_KEY'));
      expect(error.code).toBe('INVALID_CONFIG');
      expect(error.message, value).toContain(mention);
      expect(error.message).toContain('OXICLOUD_STORAGE_ENCRYPTION_KEY is not a valid key');
      expect(error.message).toContain('standard base64');
      expect(error.message).toContain('exactly 32 bytes');
      if (value !== '') expect(error.message).not.toContain(value);
    }
  });
});

describe('storageEncryptionFromEnv', () => {
  const key = randomBytes(32).toString('base64');

  it('is off unless OXICLOUD_STORAGE_ENCRYPTION_ENABLED is true; a key alone is ignored, as OxiCloud does', () => {
    expect(storageEncryptionFromEnv({})).toBeNull();
    expect(storageEncryptionFromEnv({ OXICLOUD_STORAGE_ENCRYPTION_KEY: key })).toBeNull();
    expect(
      storageEncryptionFromEnv({
        OXICLOUD_STORAGE_ENCRYPTION_ENABLED: 'false',
        OXICLOUD_STORAGE_ENCRYPTION_KEY: 'not a key',
      }),
    ).toBeNull();
    for (const on of ['true', 'TRUE', '1', 'yes', ' true ']) {
      const config = storageEncryptionFromEnv({
        OXICLOUD_STORAGE_ENCRYPTION_ENABLED: on,
        OXICLOUD_STORAGE_ENCRYPTION_KEY: ` ${key}\n`,
      });
      expect(config?.key.export().toString('base64'), on).toBe(key);
    }
  });

  it('refuses enabled without a key, a bad key and a bad switch, naming the variable', () => {
    const missing = failure(() => storageEncryptionFromEnv({ OXICLOUD_STORAGE_ENCRYPTION_ENABLED: 'true' }));
    expect(missing.code).toBe('INVALID_CONFIG');
    expect(missing.message).toContain(
      'OXICLOUD_STORAGE_ENCRYPTION_KEY (unset) is required when OXICLOUD_STORAGE_ENCRYPTION_ENABLED=true',
    );
    expect(missing.message).toContain('standard base64');
    const short = randomBytes(16).toString('base64');
    const bad = failure(() =>
      storageEncryptionFromEnv({
        OXICLOUD_STORAGE_ENCRYPTION_ENABLED: 'true',
        OXICLOUD_STORAGE_ENCRYPTION_KEY: short,
      }),
    );
    expect(bad.message).toContain(
      'OXICLOUD_STORAGE_ENCRYPTION_KEY is not a valid key: it decodes to 16 bytes',
    );
    expect(bad.message).not.toContain(short);
    const notBoolean = failure(() => storageEncryptionFromEnv({ OXICLOUD_STORAGE_ENCRYPTION_ENABLED: 'on' }));
    expect(notBoolean.message).toContain(
      'OXICLOUD_STORAGE_ENCRYPTION_ENABLED="on" is not a boolean: use true or false',
    );
  });
});
