/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/** `true` when `text` holds a lone surrogate (not well-formed UTF-16; Postgres refuses it in jsonb). */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/** `text` with every lone surrogate replaced by U+FFFD (what `String.prototype.toWellFormed` does on ES2024). */
export function toWellFormedText(text: string): string {
  return text.replace(LONE_SURROGATES, '\uFFFD');
}

/** `true` when `text` holds a C0 control character (NUL included) or DEL. */
export function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
