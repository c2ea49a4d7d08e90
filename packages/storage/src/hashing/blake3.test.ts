import { randomBytes } from 'node:crypto';
import { createBLAKE3 } from 'hash-wasm';
import { describe, expect, it } from 'vitest';
import { BLAKE3_EMPTY, blake3Hex, createBlake3Hasher } from './blake3.js';

describe('blake3Hex', () => {
  it('matches the official BLAKE3 test vectors', () => {
    expect(BLAKE3_EMPTY).toBe('af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262');
    expect(blake3Hex(new Uint8Array())).toBe(BLAKE3_EMPTY);
    expect(blake3Hex(Buffer.from('abc'))).toBe(
      '6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85',
    );
  });

  it('agrees with an independent implementation (hash-wasm) across chunk boundaries', async () => {
    const reference = await createBLAKE3();
    for (const length of [1, 1023, 1024, 1025, 2048, 31_744, 1_000_003, 5 * 1024 * 1024]) {
      const bytes = randomBytes(length);
      reference.init();
      reference.update(bytes);
      expect(blake3Hex(bytes), `length ${length}`).toBe(reference.digest('hex'));
    }
  });

  it('hashes incrementally to the same digest', () => {
    const bytes = randomBytes(3_000_001);
    const hasher = createBlake3Hasher();
    for (let offset = 0; offset < bytes.length; offset += 65_537)
      hasher.update(bytes.subarray(offset, offset + 65_537));
    expect(hasher.digestHex()).toBe(blake3Hex(bytes));
  });
});
