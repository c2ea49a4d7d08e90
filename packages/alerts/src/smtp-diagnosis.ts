import type { SmtpConfig } from './smtp-config.js';

/** The fields nodemailer puts on a failed send. */
interface SmtpFailure {
  readonly code?: string;
  readonly responseCode?: number;
  readonly response?: string;
  readonly command?: string;
  readonly message?: string;
}

/**
 * Explains a failed SMTP send to an operator: what happened (connection
 * refused, TLS required or unavailable, authentication failed, a recipient
 * refused) and which `OXICLOUD_SMTP_*` variable to change, followed by what
 * the server or the socket said.
 *
 * @example
 * ```ts
 * try { await sender.send(message); } catch (error) { console.error(describeSmtpError(error, config)); }
 * ```
 */
export function describeSmtpError(error: unknown, config: SmtpConfig): string {
  const e = (typeof error === 'object' && error !== null ? error : { message: String(error) }) as SmtpFailure;
  const where = `${config.host}:${config.port}`;
  const said = (e.response ?? e.message ?? String(error)).trim();
  const message = e.message ?? '';
  if (/ECONNREFUSED/.test(message)) {
    return `connection refused by ${where}: no SMTP server listens there (check OXICLOUD_SMTP_HOST and OXICLOUD_SMTP_PORT)`;
  }
  if (/ENOTFOUND|EAI_AGAIN/.test(message)) {
    return `cannot resolve the host ${config.host} (check OXICLOUD_SMTP_HOST): ${said}`;
  }
  if (/ETIMEDOUT|timeout/i.test(message) || e.code === 'ETIMEDOUT') {
    return `no answer from ${where} in time (check OXICLOUD_SMTP_HOST, OXICLOUD_SMTP_PORT and the firewall): ${said}`;
  }
  if (
    e.code === 'ETLS' ||
    (config.secure === 'starttls' && /STARTTLS/i.test(message) && e.command === 'STARTTLS')
  ) {
    return (
      `${where} does not offer STARTTLS, and OXICLOUD_SMTP_TLS is "${config.secure}": ` +
      `for a plain relay (port 25 or a local sink) set OXICLOUD_SMTP_TLS=none (server said: ${said})`
    );
  }
  if (
    config.secure === 'tls' &&
    /wrong version number|ssl3_get_record|packet length too long/i.test(message)
  ) {
    return `${where} does not speak TLS from the first byte (OXICLOUD_SMTP_TLS=tls): use OXICLOUD_SMTP_TLS=starttls (port 587) or none (${said})`;
  }
  if (/certificate|self[- ]signed|unable to verify/i.test(message)) {
    return `the TLS certificate of ${where} was not accepted: ${said}`;
  }
  if (e.responseCode === 530 || /STARTTLS command first|must issue a STARTTLS|TLS required/i.test(said)) {
    return `${where} requires TLS, and OXICLOUD_SMTP_TLS is "${config.secure}": set OXICLOUD_SMTP_TLS=starttls (or tls for port 465) (server said: ${said})`;
  }
  if (e.code === 'EAUTH' || e.responseCode === 535) {
    return config.user === undefined
      ? `${where} requires authentication: set OXICLOUD_SMTP_USER and OXICLOUD_SMTP_PASS (server said: ${said})`
      : `authentication as ${config.user} failed at ${where}: check OXICLOUD_SMTP_USER and OXICLOUD_SMTP_PASS (server said: ${said})`;
  }
  if (e.code === 'EENVELOPE') {
    return `${where} refused the sender or a recipient (check OXICLOUD_SMTP_FROM and the admins' addresses): ${said}`;
  }
  return `sending through ${where} failed${e.code ? ` (${e.code})` : ''}: ${said}`;
}
