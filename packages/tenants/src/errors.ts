/**
 * The fixed set of codes a {@link TenantsError} carries. Callers branch on
 * the code, never on the message.
 *
 * - `INVALID_CONFIG`: an environment variable or factory option is out of
 *   its allowed range; the message names the variable, the bad value and
 *   what is allowed.
 * - `INVALID_ARGUMENT`: a call got a value it cannot act on (a repair choice
 *   for a finding the plan does not hold, or one the line does not offer).
 */
export type TenantsErrorCode = 'INVALID_CONFIG' | 'INVALID_ARGUMENT';

/** The one error class of `@oxicloud/tenants`. */
export class TenantsError extends Error {
  override readonly name = 'TenantsError';
  readonly code: TenantsErrorCode;

  constructor(code: TenantsErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** Whether `value` is a {@link TenantsError}, optionally with the given code. */
export function isTenantsError(value: unknown, code?: TenantsErrorCode): value is TenantsError {
  return value instanceof TenantsError && (code === undefined || value.code === code);
}
