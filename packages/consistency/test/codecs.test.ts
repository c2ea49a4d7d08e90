import { describe, expect, it } from 'vitest';
import {
  bytesToHashHex,
  bytesToUuid,
  ConsistencyError,
  cursorHex,
  decodePhaseCursor,
  effectiveGraceMs,
  encodePhaseCursor,
  graceBoundary,
  hashHexToBytes,
  uuidToBytes,
} from '../src/index.js';

const uuid = '0190f3a2-7b1c-7def-8abc-0123456789ab';
const hash = 'ab'.repeat(32);

describe('uuid bytes', () => {
  it('round-trips and keeps Postgres uuid order as byte order', () => {
    const bytes = uuidToBytes(uuid);
    expect(bytes).toHaveLength(16);
    expect(bytesToUuid(bytes)).toBe(uuid);
    expect(bytesToUuid(uuidToBytes(uuid.toUpperCase()))).toBe(uuid);
    const a = uuidToBytes('00000000-0000-0000-0000-0000000000ff');
    const b = uuidToBytes('00000000-0000-0000-0000-000000000100');
    expect(Buffer.compare(a, b)).toBe(-1);
  });

  it('refuses malformed input with INVALID_KEY', () => {
    expect(() => uuidToBytes('not-a-uuid')).toThrow(ConsistencyError);
    expect(() => uuidToBytes('not-a-uuid')).toThrow(/expected 8-4-4-4-12 hex digits/);
    expect(() => bytesToUuid(new Uint8Array(15))).toThrow(/16 bytes, got 15/);
  });
});

describe('hash bytes', () => {
  it('round-trips 64 hex characters through 32 bytes', () => {
    const bytes = hashHexToBytes(hash);
    expect(bytes).toHaveLength(32);
    expect(bytesToHashHex(bytes)).toBe(hash);
  });
  it('refuses uppercase, short or non-hex hashes', () => {
    for (const bad of [hash.toUpperCase(), 'ab', 'zz'.repeat(32)]) {
      try {
        hashHexToBytes(bad);
        expect.unreachable();
      } catch (e) {
        expect((e as ConsistencyError).code).toBe('INVALID_KEY');
      }
    }
    expect(() => bytesToHashHex(new Uint8Array(31))).toThrow(/32 bytes, got 31/);
  });
});

describe('phase cursors', () => {
  it('prepend a phase byte to the concatenated key parts', () => {
    const cursor = encodePhaseCursor(1, hashHexToBytes(hash), uuidToBytes(uuid));
    expect(cursor).toHaveLength(1 + 32 + 16);
    expect(cursor[0]).toBe(1);
    const decoded = decodePhaseCursor(cursor, { 1: 48, 2: 16 });
    expect(decoded.phase).toBe(1);
    expect(bytesToHashHex(decoded.key.subarray(0, 32))).toBe(hash);
    expect(bytesToUuid(decoded.key.subarray(32))).toBe(uuid);
    expect(cursorHex(cursor)?.startsWith(`01${hash}`)).toBe(true);
    expect(cursorHex(null)).toBeNull();
  });

  it('an empty key means the start of the phase', () => {
    expect(decodePhaseCursor(encodePhaseCursor(2), { 1: 48, 2: 16 })).toEqual({
      phase: 2,
      key: new Uint8Array(),
    });
  });

  it('refuses unknown phases, wrong key lengths and empty cursors', () => {
    expect(() => decodePhaseCursor(encodePhaseCursor(3), { 1: 48 })).toThrow(
      /phase 3 is unknown; allowed phases: 1/,
    );
    expect(() => decodePhaseCursor(encodePhaseCursor(1, new Uint8Array(5)), { 1: 48 })).toThrow(
      /must be empty or 48 bytes, got 5/,
    );
    expect(() => decodePhaseCursor(new Uint8Array())).toThrow(/no phase byte/);
    expect(() => encodePhaseCursor(256)).toThrow(/0..255/);
  });
});

describe('grace', () => {
  it('counts back from the run start, not from now', () => {
    const startedAt = new Date('2026-01-01T12:00:00Z');
    expect(graceBoundary(startedAt, 3_600_000).toISOString()).toBe('2026-01-01T11:00:00.000Z');
    expect(graceBoundary(startedAt, 0)).toEqual(startedAt);
    expect(() => graceBoundary(startedAt, -1)).toThrow(RangeError);
  });
  it('force makes the grace 0', () => {
    const check = { graceWindowMs: () => 3_600_000 };
    expect(effectiveGraceMs(check, { force: false, deep: false })).toBe(3_600_000);
    expect(effectiveGraceMs(check, { force: true, deep: false })).toBe(0);
  });
});
