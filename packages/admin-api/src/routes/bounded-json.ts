import { toWellFormedText } from '../text/unicode-text.js';

/** Longest string kept whole in a bounded copy; longer ones are cut and end in `…`. */
export const MAX_SUMMARY_STRING_CHARS = 120;
/** Deepest object / array kept in a bounded copy unless told otherwise; deeper ones become `{…}` / `[…]`. */
export const MAX_SUMMARY_DEPTH = 3;

const encoder = new TextEncoder();

/** Bytes of `value` as JSON (UTF-8). */
export function jsonBytes(value: unknown): number {
  return encoder.encode(JSON.stringify(value) ?? 'null').length;
}

/**
 * `text` cut to at most `maxChars` characters and `maxBytes` bytes of JSON
 * (escapes counted), ending in `…` when cut; never leaves a lone surrogate.
 */
export function fitString(text: string, maxChars: number, maxBytes: number): { text: string; cut: boolean } {
  const long = text.length > maxChars;
  const kept = long ? text.slice(0, maxChars) : text;
  const wellFormed = toWellFormedText(kept);
  let cut = long || wellFormed !== kept;
  let out = long ? `${wellFormed}…` : wellFormed;
  while (out.length > 1 && jsonBytes(out) > maxBytes) {
    out = `${toWellFormedText(out.slice(0, Math.floor((out.length - 1) * 0.75)))}…`;
    cut = true;
  }
  return jsonBytes(out) > maxBytes ? { text: '', cut: true } : { text: out, cut };
}

interface Bounded {
  readonly value: unknown;
  readonly cut: boolean;
}

function bound(value: unknown, depth: number, cap: number, maxDepth: number): Bounded | undefined {
  if (value === null || typeof value === 'number' || typeof value === 'boolean') {
    return jsonBytes(value) <= cap ? { value, cut: false } : undefined;
  }
  if (typeof value === 'string') {
    const fitted = fitString(value, MAX_SUMMARY_STRING_CHARS, cap);
    return fitted.text === '' && value !== '' ? undefined : { value: fitted.text, cut: fitted.cut };
  }
  if (typeof value !== 'object') return undefined;
  const isArray = Array.isArray(value);
  if (depth >= maxDepth) {
    const placeholder = isArray ? '[…]' : '{…}';
    return jsonBytes(placeholder) <= cap ? { value: placeholder, cut: true } : undefined;
  }
  if (cap < 2) return undefined;
  const entries = isArray ? (value as unknown[]).map((item, i) => [i, item] as const) : Object.entries(value);
  const out: Record<string, unknown> | unknown[] = isArray ? [] : {};
  let used = 2;
  let cut = false;
  for (const [rawKey, item] of entries) {
    const comma = used > 2 ? 1 : 0;
    let keyBytes = comma;
    let key = String(rawKey);
    if (!isArray) {
      const fitted = fitString(key, 64, 200);
      key = fitted.text;
      cut ||= fitted.cut;
      keyBytes += jsonBytes(key) + 1;
    }
    const child = bound(item, depth + 1, cap - used - keyBytes, maxDepth);
    if (child === undefined) {
      cut = true;
      break;
    }
    if (isArray) (out as unknown[]).push(child.value);
    else (out as Record<string, unknown>)[key] = child.value;
    used += keyBytes + jsonBytes(child.value);
    cut ||= child.cut;
  }
  return { value: out, cut };
}

/**
 * A copy of the JSON object `value` that serialises to at most `maxBytes`
 * bytes: strings cut to {@link MAX_SUMMARY_STRING_CHARS} characters, nesting
 * below `maxDepth` (default {@link MAX_SUMMARY_DEPTH}) shown as `{…}` / `[…]`, and the keys that
 * no longer fit left out (in their order). `truncated` says whether anything
 * was cut. What listings show of a run's params and stats.
 */
export function boundedJsonObject(
  value: Readonly<Record<string, unknown>>,
  maxBytes: number,
  maxDepth: number = MAX_SUMMARY_DEPTH,
): { value: Record<string, unknown>; truncated: boolean } {
  const result = bound(value, 0, maxBytes, maxDepth);
  if (result === undefined) return { value: {}, truncated: true };
  return { value: result.value as Record<string, unknown>, truncated: result.cut };
}
