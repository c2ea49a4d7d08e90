/** One e-mail: a plain-text part and an HTML part of the same content. */
export interface EmailMessage {
  /** Every recipient; one message is sent to all of them. */
  readonly to: readonly string[];
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

/**
 * The port alerts send mail through. {@link SmtpEmailSender} implements it on
 * SMTP; the server passes `null` to {@link JobAlerts} when SMTP is not
 * configured (alerts become a silent no-op).
 */
export interface EmailSender {
  /**
   * Delivers the message; rejects when the transport fails. What it resolves
   * with is the adapter's own receipt (the SMTP adapter's answer), which
   * alerts do not read.
   */
  send(message: EmailMessage): Promise<unknown>;
}
