import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  blobKeyStartAfter,
  blobObjectKey,
  hashOfBlobFileName,
  hashOfBlobObjectKey,
  isBlobPrefixDir,
  localBlobDir,
  localBlobPath,
  localBlobsDir,
} from './blob-layout.js';
import { MALFORMED_KEYS } from './blob-storage.contract.js';

const HASH = 'af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262';

describe("OxiCloud's blob layout", () => {
  it('names an object <aa>/<hash>.blob, under .blobs on a local disk', () => {
    expect(blobObjectKey(HASH)).toBe(`af/${HASH}.blob`);
    expect(localBlobsDir('/srv/storage')).toBe(join('/srv/storage', '.blobs'));
    expect(localBlobDir('/srv/storage', HASH)).toBe(join('/srv/storage', '.blobs', 'af'));
    expect(localBlobPath('/srv/storage', HASH)).toBe(join('/srv/storage', '.blobs', 'af', `${HASH}.blob`));
  });

  it('validates the hash before naming anything', () => {
    for (const key of MALFORMED_KEYS) {
      expect(() => blobObjectKey(key)).toThrow(expect.objectContaining({ code: 'INVALID_HASH' }));
      expect(() => localBlobPath('/srv/storage', key)).toThrow(
        expect.objectContaining({ code: 'INVALID_HASH' }),
      );
    }
  });

  it('parses back exactly the names it makes', () => {
    expect(hashOfBlobObjectKey(`af/${HASH}.blob`)).toBe(HASH);
    expect(hashOfBlobFileName('af', `${HASH}.blob`)).toBe(HASH);
    for (const key of [
      `ab/${HASH}.blob`, // wrong folder
      `af/${HASH}`,
      `af/${HASH}.blob.tmp`,
      `af/${HASH.toUpperCase()}.blob`,
      `AF/${HASH}.blob`,
      `/af/${HASH}.blob`,
      `x/af/${HASH}.blob`,
      `af/${HASH.slice(0, 63)}.blob`,
      `${HASH}.blob`,
      'zz/notahash.blob',
    ]) {
      expect(hashOfBlobObjectKey(key), key).toBeNull();
    }
    for (const name of [`${HASH}`, `.tmp-${HASH}-1`, `${HASH}.BLOB`, 'notahash.blob', `${HASH}.blob~`]) {
      expect(hashOfBlobFileName('af', name), name).toBeNull();
    }
    expect(hashOfBlobFileName('ab', `${HASH}.blob`)).toBeNull();
    expect(['00', 'af', 'ff'].every(isBlobPrefixDir)).toBe(true);
    expect(['zz', 'a', 'abc', 'AF', '.tmp'].some(isBlobPrefixDir)).toBe(false);
  });

  it('maps a list position to the key after which exactly the later hashes come, in key order', () => {
    const hashes = Array.from({ length: 2000 }, () => randomBytes(32).toString('hex'));
    hashes.push(`af${'0'.repeat(62)}`, `af${'f'.repeat(62)}`, `a${'0'.repeat(63)}`, 'f'.repeat(64));
    const keys = hashes.map(blobObjectKey);
    // Key order is hash order (byte order, as S3 sorts).
    const byKey = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect(byKey.map((k) => hashOfBlobObjectKey(k))).toEqual([...hashes].sort());
    const positions = [
      ...hashes.slice(0, 50),
      ...hashes.slice(0, 50).flatMap((h) => [h.slice(0, 1), h.slice(0, 2), h.slice(0, 3), h.slice(0, 63)]),
      '0',
      'f',
      'ff',
      'af',
      `af${'0'.repeat(62)}`,
      '0'.repeat(64),
    ];
    for (const position of positions) {
      const after = blobKeyStartAfter(position);
      const viaKeys = keys
        .filter((k) => Buffer.compare(Buffer.from(k), Buffer.from(after)) > 0)
        .map(hashOfBlobObjectKey);
      expect(viaKeys.sort(), position).toEqual(hashes.filter((h) => h > position).sort());
    }
  });
});
