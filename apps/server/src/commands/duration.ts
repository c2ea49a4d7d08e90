const UNITS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;
const DURATION = /^(\d+)(s|m|h|d)$/;
/** The longest token lifetime `oxijobs token` mints: 365 days. */
export const MAX_TOKEN_SECONDS = 365 * 86_400;

/**
 * Parses `30s`, `15m`, `12h`, `7d` into seconds; `undefined` when the text is
 * not such a duration or is zero or longer than 365 days.
 */
export function parseDurationSeconds(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  const seconds = Number(match[1]) * UNITS[match[2] as keyof typeof UNITS];
  return seconds > 0 && seconds <= MAX_TOKEN_SECONDS ? seconds : undefined;
}
