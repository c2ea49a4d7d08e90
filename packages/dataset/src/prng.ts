/**
 * Seeded pseudo-random numbers: deterministic across runs and machines, so
 * the same seed gives the same dataset. Not for cryptography.
 */

/** Mixes whole numbers into one 32-bit value (murmur3 finaliser per part). */
export function mix32(...parts: readonly number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    // Fold numbers above 2^32 in as two halves.
    const lo = part >>> 0;
    const hi = Math.floor(part / 4294967296) >>> 0;
    for (const v of [lo, hi]) {
      h = Math.imul(h ^ v, 0x85ebca6b);
      h ^= h >>> 13;
      h = Math.imul(h, 0xc2b2ae35);
      h ^= h >>> 16;
    }
  }
  return h >>> 0;
}

/** sfc32: a small, fast generator with a 128-bit state. */
export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(...seedParts: readonly number[]) {
    this.a = mix32(1, ...seedParts);
    this.b = mix32(2, ...seedParts);
    this.c = mix32(3, ...seedParts);
    this.d = 1;
    for (let i = 0; i < 12; i++) this.nextU32();
  }

  /** A uniform 32-bit unsigned integer. */
  nextU32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** A uniform float in [0, 1). */
  next(): number {
    return this.nextU32() / 4294967296;
  }

  /** A uniform whole number in [min, max] (inclusive). */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** `true` with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Fills `out` with random 32-bit words. */
  fill(out: Uint32Array): void {
    let { a, b, c, d } = this;
    for (let i = 0; i < out.length; i++) {
      const t = (((a + b) | 0) + d) | 0;
      d = (d + 1) | 0;
      a = b ^ (b >>> 9);
      b = (c + (c << 3)) | 0;
      c = (c << 21) | (c >>> 11);
      c = (c + t) | 0;
      out[i] = t;
    }
    this.a = a;
    this.b = b;
    this.c = c;
    this.d = d;
  }
}
