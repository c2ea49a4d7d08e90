// Small numeric helpers of the bench.

export function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export function median(values) {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

export function round(n, digits = 0) {
  if (!Number.isFinite(n)) return n;
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** 1234567 → "1,234,567"; fractions keep `digits` decimals. */
export function fmt(n, digits = 0) {
  if (n === null || n === undefined || Number.isNaN(n)) return 'n/a';
  return Number(n).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

/** A ratio with two significant decimals (0.0123 → "0.012", 1.5 → "1.50"). */
export function ratio(n) {
  if (!Number.isFinite(n)) return 'n/a';
  if (n >= 0.1) return n.toFixed(2);
  return n.toPrecision(2);
}

export function mib(bytes) {
  return bytes / (1024 * 1024);
}

export function mb(bytes) {
  return bytes / 1e6;
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
