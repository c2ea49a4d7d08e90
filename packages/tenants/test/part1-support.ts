import type { Logger } from '@oxicloud/scheduler';

/** One captured log line. */
export interface LogLine {
  readonly level: 'info' | 'warn' | 'error' | 'debug';
  readonly fields: Record<string, unknown>;
  readonly message: string | undefined;
}

/** A logger that keeps every line, for assertions. */
export function recordingLogger(): Logger & { readonly lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at =
    (level: LogLine['level']) =>
    (fields: object, message?: string): void => {
      lines.push({ level, fields: fields as Record<string, unknown>, message });
    };
  return { lines, info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') };
}

/** A signal that never fires. */
export function liveSignal(): AbortSignal {
  return new AbortController().signal;
}

/** A fixed clock. */
export const FIXED_NOW = new Date('2026-07-28T12:00:00.000Z');
export const fixedNow = (): Date => new Date(FIXED_NOW);
