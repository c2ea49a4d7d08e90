import { AlertsError } from './alerts-error.js';

/** Transport security: none, STARTTLS required after connecting, or TLS from the first byte. */
export type SmtpSecurity = 'none' | 'starttls' | 'tls';

/** The canonical values of `OXICLOUD_SMTP_TLS` (OxiCloud's). */
export const SMTP_SECURITY_VALUES: readonly SmtpSecurity[] = ['none', 'starttls', 'tls'];

/**
 * The variables {@link smtpConfigFromEnv} reads: OxiCloud's own names with
 * OxiCloud's meaning (its `docs/config/env.md`), so the engine mails through
 * the relay OxiCloud's environment file names.
 */
export const SMTP_ENV = {
  host: 'OXICLOUD_SMTP_HOST',
  port: 'OXICLOUD_SMTP_PORT',
  tls: 'OXICLOUD_SMTP_TLS',
  user: 'OXICLOUD_SMTP_USER',
  pass: 'OXICLOUD_SMTP_PASS',
  from: 'OXICLOUD_SMTP_FROM',
} as const;

/**
 * The engine's earlier names of two {@link SMTP_ENV} settings, still read
 * with the same meaning (OxiCloud reads neither). Set beside the OxiCloud
 * name to another value, they are an `INVALID_CONFIG` error.
 */
export const SMTP_ENV_ALIASES = {
  tls: 'OXICLOUD_SMTP_SECURE',
  pass: 'OXICLOUD_SMTP_PASSWORD',
} as const;

/** OxiCloud's spellings of the three modes (`SmtpTlsMode::parse`), lower-cased. */
const TLS_SPELLINGS: ReadonlyMap<string, SmtpSecurity> = new Map([
  ['starttls', 'starttls'],
  ['tls', 'tls'],
  ['implicit', 'tls'],
  ['smtps', 'tls'],
  ['none', 'none'],
  ['plain', 'none'],
]);

/** Validated SMTP settings, from {@link smtpConfigFromEnv}. */
export interface SmtpConfig {
  readonly host: string;
  /** @defaultValue 587, whatever `secure` is (OxiCloud's default) */
  readonly port: number;
  /** `OXICLOUD_SMTP_TLS`. @defaultValue 'starttls' */
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
 * Reads the SMTP settings from the environment: OxiCloud's variables, with
 * OxiCloud's meaning, so one environment file serves both.
 *
 * | variable | allowed | default |
 * | --- | --- | --- |
 * | `OXICLOUD_SMTP_HOST` | host name or IP; unset or empty = alerts off (OxiCloud: mail off) | unset |
 * | `OXICLOUD_SMTP_PORT` | integer 1–65535 | 587, whatever `_TLS` says (OxiCloud's default) |
 * | `OXICLOUD_SMTP_TLS` | `starttls`, `tls`, `none` (OxiCloud's spellings `implicit`/`smtps` = `tls`, `plain` = `none` too) | `starttls` |
 * | `OXICLOUD_SMTP_USER` / `OXICLOUD_SMTP_PASS` | both or neither | unset (no AUTH) |
 * | `OXICLOUD_SMTP_FROM` | an address (`alerts@example.org` or `Name <alerts@example.org>`); required with a host | — |
 *
 * The engine's earlier names `OXICLOUD_SMTP_SECURE` (= `_TLS`) and
 * `OXICLOUD_SMTP_PASSWORD` (= `_PASS`) are still read; beside the OxiCloud
 * name with another value they are an error. Where OxiCloud quietly falls
 * back (a `_TLS` or `_PORT` it cannot parse), this refuses the value.
 *
 * @returns `null` when `OXICLOUD_SMTP_HOST` is unset or empty: SMTP is not
 *   configured and alerts are off (no mail, no error; `alertsStatus` says so).
 * @throws AlertsError `INVALID_CONFIG` naming the variable and what is allowed.
 */
export function smtpConfigFromEnv(env: Env): SmtpConfig | null {
  const host = read(env, SMTP_ENV.host);
  if (host === undefined) return null;
  if (/\s/.test(host)) {
    throw invalid(
      `${SMTP_ENV.host} must be a host name or IP address without spaces, got ${JSON.stringify(host)}`,
    );
  }

  const tlsName = read(env, SMTP_ENV.tls) === undefined ? SMTP_ENV_ALIASES.tls : SMTP_ENV.tls;
  const tlsRaw = aliased(env, SMTP_ENV.tls, SMTP_ENV_ALIASES.tls, (v) => {
    const spelled = v.trim().toLowerCase();
    return TLS_SPELLINGS.get(spelled) ?? spelled;
  });
  const secure = tlsRaw === undefined ? 'starttls' : TLS_SPELLINGS.get(tlsRaw.trim().toLowerCase());
  if (secure === undefined) {
    throw invalid(
      `${tlsName} must be one of ${SMTP_SECURITY_VALUES.join(', ')} (OxiCloud's implicit and smtps mean tls, plain means none), got ${JSON.stringify(tlsRaw)}`,
    );
  }

  const portRaw = read(env, SMTP_ENV.port);
  let port = 587;
  if (portRaw !== undefined) {
    port = Number(portRaw);
    if (!/^\d+$/.test(portRaw) || !Number.isInteger(port) || port < 1 || port > 65_535) {
      throw invalid(`${SMTP_ENV.port} must be an integer from 1 to 65535, got ${JSON.stringify(portRaw)}`);
    }
  }

  const user = read(env, SMTP_ENV.user);
  const password = aliased(env, SMTP_ENV.pass, SMTP_ENV_ALIASES.pass, (v) => v, true);
  if ((user === undefined) !== (password === undefined)) {
    throw invalid(
      `${SMTP_ENV.user} and ${SMTP_ENV.pass} must be set together (SMTP AUTH) or both left unset (no AUTH)`,
    );
  }

  const from = read(env, SMTP_ENV.from);
  if (from === undefined) {
    throw invalid(
      `${SMTP_ENV.from} is required when ${SMTP_ENV.host} is set: an address such as alerts@example.org or "OxiCloud <alerts@example.org>"`,
    );
  }
  if (!/^[^\s@<>]+@[^\s@<>]+$|<[^\s@<>]+@[^\s@<>]+>$/.test(from)) {
    throw invalid(
      `${SMTP_ENV.from} must be an address such as alerts@example.org or "OxiCloud <alerts@example.org>", got ${JSON.stringify(from)}`,
    );
  }

  return { host, port, secure, user, password, from };
}

/**
 * `name` (OxiCloud's), else `alias` (the engine's earlier name), as they are
 * (an empty value is unset; a password keeps its spaces). Both set to values
 * that differ once `normalise`d: an error (a secret's values never shown).
 */
function aliased(
  env: Env,
  name: string,
  alias: string,
  normalise: (value: string) => string,
  secret = false,
): string | undefined {
  const get = (n: string) => (env[n] === undefined || env[n] === '' ? undefined : env[n]);
  const value = get(name);
  const old = get(alias);
  if (value !== undefined && old !== undefined && normalise(value) !== normalise(old)) {
    const shown = (n: string, v: string) => (secret ? n : `${n}=${JSON.stringify(v)}`);
    throw invalid(
      `${shown(name, value)} and ${shown(alias, old)} differ: ${alias} is the engine's earlier name of ${name} (OxiCloud's); set ${name} only`,
    );
  }
  return value ?? old;
}
