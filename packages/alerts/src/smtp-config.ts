import { AlertsError } from './alerts-error.js';

/** Transport security: none, STARTTLS required after connecting, or TLS from the first byte. */
export type SmtpSecurity = 'none' | 'starttls' | 'tls';

/** The allowed values of `OXICLOUD_SMTP_SECURE`. */
export const SMTP_SECURITY_VALUES: readonly SmtpSecurity[] = ['none', 'starttls', 'tls'];

/** Validated SMTP settings, from {@link smtpConfigFromEnv}. */
export interface SmtpConfig {
  readonly host: string;
  /** @defaultValue 587, or 465 when `secure` is `tls` */
  readonly port: number;
  /** @defaultValue 'starttls' */
  readonly secure: SmtpSecurity;
  /** Set together with `password`, or neither (no AUTH). */
  readonly user: string | undefined;
  readonly password: string | undefined;
  /** The From header, e.g. `OxiCloud <alerts@example.org>`. */
  readonly from: string;
}

/** A process environment (or a copy of one). */
export type Env = Readonly<Record<string, string | undefined>>;

function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function invalid(message: string): AlertsError {
  return new AlertsError('INVALID_CONFIG', message);
}

/**
 * Reads the SMTP settings from the environment.
 *
 * | variable | allowed | default |
 * | --- | --- | --- |
 * | `OXICLOUD_SMTP_HOST` | host name or IP; unset = alerts off | unset |
 * | `OXICLOUD_SMTP_PORT` | integer 1–65535 | 587, or 465 with `tls` |
 * | `OXICLOUD_SMTP_SECURE` | `none`, `starttls`, `tls` | `starttls` |
 * | `OXICLOUD_SMTP_USER` / `OXICLOUD_SMTP_PASSWORD` | both or neither | unset (no AUTH) |
 * | `OXICLOUD_SMTP_FROM` | an address (`alerts@example.org` or `Name <alerts@example.org>`); required with a host | — |
 *
 * @returns `null` when `OXICLOUD_SMTP_HOST` is unset or empty: SMTP is not
 *   configured and alerts are off (no mail, no error; `alertsStatus` says so).
 * @throws AlertsError `INVALID_CONFIG` naming the variable and what is allowed.
 */
export function smtpConfigFromEnv(env: Env): SmtpConfig | null {
  const host = read(env, 'OXICLOUD_SMTP_HOST');
  if (host === undefined) return null;
  if (/\s/.test(host)) {
    throw invalid(
      `OXICLOUD_SMTP_HOST must be a host name or IP address without spaces, got ${JSON.stringify(host)}`,
    );
  }

  const secureRaw = read(env, 'OXICLOUD_SMTP_SECURE')?.toLowerCase() ?? 'starttls';
  if (!(SMTP_SECURITY_VALUES as readonly string[]).includes(secureRaw)) {
    throw invalid(
      `OXICLOUD_SMTP_SECURE must be one of ${SMTP_SECURITY_VALUES.join(', ')}, got ${JSON.stringify(secureRaw)}`,
    );
  }
  const secure = secureRaw as SmtpSecurity;

  const portRaw = read(env, 'OXICLOUD_SMTP_PORT');
  let port = secure === 'tls' ? 465 : 587;
  if (portRaw !== undefined) {
    port = Number(portRaw);
    if (!/^\d+$/.test(portRaw) || !Number.isInteger(port) || port < 1 || port > 65_535) {
      throw invalid(`OXICLOUD_SMTP_PORT must be an integer from 1 to 65535, got ${JSON.stringify(portRaw)}`);
    }
  }

  const user = read(env, 'OXICLOUD_SMTP_USER');
  const password = env['OXICLOUD_SMTP_PASSWORD'] === '' ? undefined : env['OXICLOUD_SMTP_PASSWORD'];
  if ((user === undefined) !== (password === undefined)) {
    throw invalid(
      'OXICLOUD_SMTP_USER and OXICLOUD_SMTP_PASSWORD must be set together (SMTP AUTH) or both left unset (no AUTH)',
    );
  }

  const from = read(env, 'OXICLOUD_SMTP_FROM');
  if (from === undefined) {
    throw invalid(
      'OXICLOUD_SMTP_FROM is required when OXICLOUD_SMTP_HOST is set: an address such as alerts@example.org or "OxiCloud <alerts@example.org>"',
    );
  }
  if (!/^[^\s@<>]+@[^\s@<>]+$|<[^\s@<>]+@[^\s@<>]+>$/.test(from)) {
    throw invalid(
      `OXICLOUD_SMTP_FROM must be an address such as alerts@example.org or "OxiCloud <alerts@example.org>", got ${JSON.stringify(from)}`,
    );
  }

  return { host, port, secure, user, password, from };
}
