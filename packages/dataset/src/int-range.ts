/** An inclusive whole-number range. */
export interface IntRange {
  readonly min: number;
  readonly max: number;
}
