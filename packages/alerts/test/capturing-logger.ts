import type { Logger } from '@oxicloud/scheduler';

export interface LogLine {
  readonly level: 'info' | 'warn' | 'error' | 'debug';
  readonly fields: Record<string, unknown>;
  readonly message: string | undefined;
}

/** A Logger that keeps every line. */
export class CapturingLogger implements Logger {
  readonly lines: LogLine[] = [];
  info(fields: object, message?: string): void {
    this.lines.push({ level: 'info', fields: { ...fields }, message });
  }
  warn(fields: object, message?: string): void {
    this.lines.push({ level: 'warn', fields: { ...fields }, message });
  }
  error(fields: object, message?: string): void {
    this.lines.push({ level: 'error', fields: { ...fields }, message });
  }
  debug(fields: object, message?: string): void {
    this.lines.push({ level: 'debug', fields: { ...fields }, message });
  }
  events(event: string): LogLine[] {
    return this.lines.filter((line) => line.fields['event'] === event);
  }
}
