import type { Transporter } from 'nodemailer';
import nodemailer from 'nodemailer';
import type { EmailMessage, EmailSender } from './email-sender.js';
import type { SmtpConfig } from './smtp-config.js';

/** Timeouts of the SMTP adapter, in milliseconds. */
export interface SmtpTimeouts {
  /** @defaultValue 10_000 */
  readonly connectionTimeoutMs?: number;
  /** @defaultValue 10_000 */
  readonly greetingTimeoutMs?: number;
  /** @defaultValue 30_000 */
  readonly socketTimeoutMs?: number;
}

/**
 * The {@link EmailSender} on SMTP (nodemailer). One pooled-less transport;
 * each `send` opens a connection, so a relay that was down comes back without
 * a restart.
 *
 * @example
 * ```ts
 * const config = smtpConfigFromEnv(process.env);
 * const sender = config === null ? null : new SmtpEmailSender(config);
 * ```
 */
export class SmtpEmailSender implements EmailSender {
  readonly #transport: Transporter;
  readonly #from: string;

  constructor(config: SmtpConfig, timeouts: SmtpTimeouts = {}) {
    this.#from = config.from;
    this.#transport = nodemailer.createTransport({
      host: config.host,
      port: config.port,
      secure: config.secure === 'tls',
      requireTLS: config.secure === 'starttls',
      ignoreTLS: config.secure === 'none',
      ...(config.user === undefined ? {} : { auth: { user: config.user, pass: config.password ?? '' } }),
      connectionTimeout: timeouts.connectionTimeoutMs ?? 10_000,
      greetingTimeout: timeouts.greetingTimeoutMs ?? 10_000,
      socketTimeout: timeouts.socketTimeoutMs ?? 30_000,
    });
  }

  async send(message: EmailMessage): Promise<void> {
    await this.#transport.sendMail({
      from: this.#from,
      to: [...message.to],
      subject: message.subject,
      text: message.text,
      html: message.html,
    });
  }

  /** Closes the transport (idle connections). */
  close(): void {
    this.#transport.close();
  }
}
