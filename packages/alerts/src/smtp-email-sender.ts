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

/** What the SMTP server answered to one message. */
export interface SmtpReceipt {
  /** The server's last reply, e.g. `250 2.0.0 Ok: queued as 4F2A1`. */
  readonly response: string;
  readonly accepted: readonly string[];
  readonly rejected: readonly string[];
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

  /** Delivers the message and returns what the SMTP server answered. */
  async send(message: EmailMessage): Promise<SmtpReceipt> {
    const info = await this.#transport.sendMail({
      from: this.#from,
      to: [...message.to],
      subject: message.subject,
      text: message.text,
      html: message.html,
    });
    return {
      response: String(info.response ?? ''),
      accepted: (info.accepted ?? []).map(String),
      rejected: (info.rejected ?? []).map(String),
    };
  }

  /** Closes the transport (idle connections). */
  close(): void {
    this.#transport.close();
  }
}
