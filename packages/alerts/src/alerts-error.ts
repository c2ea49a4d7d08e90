/**
 * The fixed set of codes an {@link AlertsError} carries.
 *
 * - `INVALID_CONFIG`: an environment variable or a factory option is out of
 *   its allowed range; the message names it and says what is allowed.
 */
export type AlertsErrorCode = 'INVALID_CONFIG';

/**
 * The one error class of @oxicloud/alerts. Thrown only while configuring
 * (reading env, constructing); sending an alert never throws.
 */
export class AlertsError extends Error {
  override readonly name = 'AlertsError';
  readonly code: AlertsErrorCode;

  constructor(code: AlertsErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
