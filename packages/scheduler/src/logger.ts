/**
 * The structured logger every package logs through: the subset of pino's
 * `Logger` the packages need (pino satisfies it as it is). Fields first,
 * message second. Lines carry a `target` field (`oxicloud::scheduler`,
 * `oxicloud::consistency`, `audit`, …).
 */
export interface Logger {
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
  debug(fields: object, message?: string): void;
}

/** A logger that drops everything (the default where none is given). */
export const silentLogger: Logger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
};
