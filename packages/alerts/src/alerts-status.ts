import type { SmtpConfig, SmtpSecurity } from './smtp-config.js';

/** Where a running server sends its alerts. */
export interface AlertsSmtpTarget {
  readonly host: string;
  readonly port: number;
  readonly secure: SmtpSecurity;
}

/**
 * Whether a server sends alerts: on (its SMTP server, and how many admins
 * have an address the alerts go to) or off (the variable that is missing).
 */
export type AlertsStatus =
  | { readonly enabled: true; readonly smtp: AlertsSmtpTarget; readonly adminRecipients: number }
  | {
      readonly enabled: false;
      /** The variable whose absence turns alerts off: `OXICLOUD_SMTP_HOST`. */
      readonly missing: string;
      readonly adminRecipients: number;
    };

/**
 * The status for the settings {@link smtpConfigFromEnv} returned (`null`:
 * `OXICLOUD_SMTP_HOST` is unset, the only way alerts are off; any other
 * missing or bad variable refuses the settings) and the number of admins
 * with an e-mail address.
 */
export function alertsStatus(smtp: SmtpConfig | null, adminRecipients: number): AlertsStatus {
  if (smtp === null) return { enabled: false, missing: 'OXICLOUD_SMTP_HOST', adminRecipients };
  return { enabled: true, smtp: { host: smtp.host, port: smtp.port, secure: smtp.secure }, adminRecipients };
}

function admins(count: number): string {
  return count === 1 ? '1 admin with an e-mail address' : `${count} admins with an e-mail address`;
}

/**
 * What the status means, in words, without the leading on/off: e.g.
 * `SMTP 127.0.0.1:25 (OXICLOUD_SMTP_TLS=none), 1 admin with an e-mail address`,
 * or `OXICLOUD_SMTP_HOST is not set`.
 */
export function describeAlertsStatus(status: AlertsStatus): string {
  if (!status.enabled) return `${status.missing} is not set`;
  const { host, port, secure } = status.smtp;
  const to =
    status.adminRecipients === 0
      ? 'but no admin has an e-mail address, so none is sent'
      : admins(status.adminRecipients);
  return `SMTP ${host}:${port} (OXICLOUD_SMTP_TLS=${secure}), ${to}`;
}
