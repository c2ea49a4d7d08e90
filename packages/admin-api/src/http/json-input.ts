import { AdminApiError } from '../errors.js';
import { hasLoneSurrogate } from '../text/unicode-text.js';

/** The deepest nesting of objects and arrays a request body may have (run params are flat). */
export const MAX_JSON_DEPTH = 8;

/**
 * `true` when the JSON text nests objects / arrays deeper than `max`. Scans
 * the text without parsing it (brackets inside strings do not count), so a
 * body nested 100,000 deep is refused before anything recursive sees it.
 */
export function jsonNestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c)
        i++; // a backslash escapes the next character
      else if (ch === 0x22) inString = false;
      continue;
    }
    if (ch === 0x22) inString = true;
    else if (ch === 0x7b || ch === 0x5b) {
      depth++;
      if (depth > max) return true;
    } else if (ch === 0x7d || ch === 0x5d) depth--;
  }
  return false;
}

/** Why a string is refused, or `undefined` when it is fine: no NUL, well-formed UTF-16 (no lone surrogate). */
export function unsafeStringReason(value: string): string | undefined {
  if (value.includes('\u0000')) return 'contains a NUL character (\\u0000)';
  if (hasLoneSurrogate(value)) return 'contains a lone surrogate (\\ud800-\\udfff without its pair)';
  return undefined;
}

/**
 * The first string (key or value) in `value` that {@link unsafeStringReason}
 * refuses, as `where: why`; `undefined` when every string is fine. `value`
 * must already be depth-bounded (see {@link jsonNestsDeeperThan}).
 */
export function findUnsafeString(value: unknown, where = 'params'): string | undefined {
  if (typeof value === 'string') {
    const reason = unsafeStringReason(value);
    return reason ? `${where} ${reason}` : undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const entries = Array.isArray(value)
    ? value.map((item, index) => [String(index), item] as const)
    : Object.entries(value);
  for (const [key, item] of entries) {
    const keyReason = Array.isArray(value) ? undefined : unsafeStringReason(key);
    const shownKey = JSON.stringify(key.slice(0, 64));
    if (keyReason) return `${where}: the key ${shownKey} ${keyReason}`;
    const found = findUnsafeString(
      item,
      Array.isArray(value) ? `${where}[${key}]` : `${where}.${key.slice(0, 64)}`,
    );
    if (found) return found;
  }
  return undefined;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Parses the bytes of a request body that must be a JSON object of run
 * params: valid UTF-8, valid JSON, an object, nested at most
 * {@link MAX_JSON_DEPTH} deep, no string with a NUL or a lone surrogate, and
 * `force` / `deep` (when present) JSON booleans. Throws `MALFORMED_JSON` or
 * `INVALID_PARAMS` saying what is allowed.
 */
export function parseParamsBody(bytes: Uint8Array): Record<string, unknown> {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch (cause) {
    throw new AdminApiError(
      'MALFORMED_JSON',
      'the request body is not valid UTF-8; send a JSON object of run params',
      {
        cause,
      },
    );
  }
  if (jsonNestsDeeperThan(text, MAX_JSON_DEPTH)) {
    throw new AdminApiError(
      'INVALID_PARAMS',
      `the request body nests objects or arrays more than ${MAX_JSON_DEPTH} levels deep; run params are a flat JSON object`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new AdminApiError(
      'MALFORMED_JSON',
      `the request body is not valid JSON (${(cause as Error).message.slice(0, 200)}); send a JSON object of run params`,
      { cause },
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    const got = parsed === null ? 'null' : Array.isArray(parsed) ? 'an array' : `a ${typeof parsed}`;
    throw new AdminApiError(
      'MALFORMED_JSON',
      `the request body must be a JSON object of run params, got ${got}`,
    );
  }
  const unsafe = findUnsafeString(parsed);
  if (unsafe) {
    throw new AdminApiError(
      'INVALID_PARAMS',
      `${unsafe}; strings in run params must be well-formed Unicode without NUL characters`,
    );
  }
  const params = parsed as Record<string, unknown>;
  for (const key of ['force', 'deep'] as const) {
    const value = params[key];
    if (value !== undefined && typeof value !== 'boolean') {
      throw new AdminApiError(
        'INVALID_PARAMS',
        `params.${key} must be true or false (a JSON boolean), got ${JSON.stringify(value).slice(0, 100)}`,
      );
    }
  }
  return params;
}
