/** One line a {@link CapturingLogger} kept. */
export interface LogLine {
  readonly level: 'info' | 'warn' | 'error' | 'debug';
  readonly fields: Record<string, unknown>;
  readonly message: string | undefined;
}

/**
 * A logger that keeps every line, for assertions on emitted events. It has
 * the shape of the `Logger` port of `@oxicloud/scheduler` (fields first,
 * message second), so it fits wherever a package takes a logger.
 */
export class CapturingLogger {
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

  /** Lines whose `event` field equals `event` (and whose `job` equals `job`, when given). */
  events(event: string, job?: string): LogLine[] {
    return this.lines.filter(
      (line) => line.fields['event'] === event && (job === undefined || line.fields['job'] === job),
    );
  }
}
