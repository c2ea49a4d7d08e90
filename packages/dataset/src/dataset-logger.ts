/** Where the generator tells what it does (the server's logger fits). */
export interface DatasetLogger {
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
}
