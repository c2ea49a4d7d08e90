/**
 * Small helpers of the Part 1 integration tests that no storage domain owns:
 * times and a logger that keeps its lines. Rows come from the OxiCloud
 * fixtures (`oxicloud-domain-fixtures.ts`).
 */

import type { Logger } from '@oxicloud/scheduler';

export function ago(ms: number): Date {
  return new Date(Date.now() - ms);
}

export const HOUR = 3_600_000;
export const DAY = 86_400_000;

/** One captured log line. */
export interface LogLine {
  readonly level: string;
  readonly fields: Record<string, unknown>;
  readonly message: string | undefined;
}

/** A logger that keeps every line, for assertions. */
export function recordingLogger(): Logger & { readonly lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: string) => (fields: object, message?: string) => {
    lines.push({ level, fields: fields as Record<string, unknown>, message });
  };
  return { lines, info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') };
}
