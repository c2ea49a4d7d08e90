import { describe, expect, it } from 'vitest';
import { short } from '../src/repair/repair-action.js';

describe('short ids in repair summaries', () => {
  it('tells apart UUIDv7s made in the same second by their random tail', () => {
    const a = '01936f2a-7c10-7a2b-9c3d-4e5f60718293';
    const b = '01936f2a-7c10-7d4e-8f90-a1b2c3d4e5f6';
    expect(short(a)).toBe('…4e5f60718293');
    expect(short(b)).toBe('…a1b2c3d4e5f6');
    expect(short(a)).not.toBe(short(b));
  });

  it('keeps the head of a blob hash, and a short id whole', () => {
    expect(short('af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262')).toBe('af1349b9…');
    expect(short('abc')).toBe('abc');
  });
});
