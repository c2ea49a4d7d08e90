import type { AdminClientSettings } from './admin-client.js';
import { SEVERITIES } from './api-types.js';
import { JobsClientError } from './jobs-client-error.js';

/** Where the CLI finds the server when neither `--url` nor `OXICLOUD_ADMIN_URL` says: the server's default port (`CONFIG_DEFAULTS.httpPort`, not OxiCloud's 8086). */
export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:8087';
/** Per-request timeout when `--timeout` is not given. */
export const DEFAULT_TIMEOUT_SECONDS = 30;
/** A waited Part 1 trigger answers after the run: it gets this long unless `--timeout` says. */
export const DEFAULT_WAITED_TRIGGER_TIMEOUT_SECONDS = 3600;
/** Seconds between polls of `--follow` when `--interval` is not given. */
export const DEFAULT_FOLLOW_INTERVAL_SECONDS = 1;

type Env = Readonly<Record<string, string | undefined>>;

/** The connection flags every `jobs` command takes. */
export interface ConnectionFlags {
  readonly url?: string;
  readonly token?: string;
  readonly timeout?: number;
}

/**
 * The client settings from the flags, else `OXICLOUD_ADMIN_URL` /
 * `OXICLOUD_ADMIN_TOKEN`, else the defaults. Throws a `USAGE` error for a URL
 * that is not http(s) and `NO_TOKEN` when no token is given.
 */
export function resolveConnection(flags: ConnectionFlags, env: Env): AdminClientSettings {
  const fromFlag = flags.url !== undefined;
  const urlText = (flags.url ?? env['OXICLOUD_ADMIN_URL'] ?? '').trim() || DEFAULT_ADMIN_URL;
  let url: URL;
  try {
    url = new URL(urlText);
  } catch (error) {
    throw new JobsClientError(
      'USAGE',
      `${urlSource(fromFlag)}="${urlText}" is not a URL; use e.g. ${DEFAULT_ADMIN_URL}`,
      {
        cause: error,
      },
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new JobsClientError(
      'USAGE',
      `${urlSource(fromFlag)}="${urlText}" must be an http:// or https:// URL, e.g. ${DEFAULT_ADMIN_URL}`,
    );
  }
  const token = (flags.token ?? env['OXICLOUD_ADMIN_TOKEN'] ?? '').trim();
  if (token === '') {
    throw new JobsClientError(
      'NO_TOKEN',
      'no admin token: pass --token <token> or set OXICLOUD_ADMIN_TOKEN; mint one with `oxijobs token --user admin`',
    );
  }
  return {
    baseUrl: `${url.origin}${url.pathname.replace(/\/+$/, '')}`,
    token,
    timeoutMs: (flags.timeout ?? DEFAULT_TIMEOUT_SECONDS) * 1000,
  };
}

function urlSource(fromFlag: boolean): string {
  return fromFlag ? '--url' : 'OXICLOUD_ADMIN_URL';
}

/** Parses a whole number in `[min, max]`; `what` names the allowed range in the error. */
export function parseWholeNumber(value: string, min: number, max: number): number {
  const text = value.trim();
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new RangeError(`use a whole number from ${min} to ${max}`);
  }
  return Number(text);
}

/** Parses seconds (decimals allowed) in `[min, max]`. */
export function parseSeconds(value: string, min: number, max: number): number {
  const text = value.trim();
  const seconds = Number(text);
  if (text === '' || !/^\d+(\.\d+)?$/.test(text) || seconds < min || seconds > max) {
    throw new RangeError(`use a number of seconds from ${min} to ${max}`);
  }
  return seconds;
}

/** Parses `--params`: a JSON object of run params. */
export function parseParams(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new RangeError('use a JSON object, e.g. \'{"batch_size":500,"throttle_ms":50}\'');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new RangeError('use a JSON object (not an array or a scalar), e.g. \'{"batch_size":500}\'');
  }
  return parsed as Record<string, unknown>;
}

/** The `--severity` choices. */
export const SEVERITY_CHOICES: readonly string[] = SEVERITIES;
