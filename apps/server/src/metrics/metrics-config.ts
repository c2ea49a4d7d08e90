import { ServerError } from '../server-error.js';

type Env = Readonly<Record<string, string | undefined>>;

export const METRICS_ADDR_ENV = 'OXICLOUD_METRICS_ADDR';
export const METRICS_TOKEN_ENV = 'OXICLOUD_METRICS_TOKEN';
/** Loopback only: never a public interface by default. */
export const DEFAULT_METRICS_ADDR = '127.0.0.1:9464';

/** Where `/metrics` is served, or `null` when it is off. */
export interface MetricsConfig {
  readonly host: string;
  readonly port: number;
  /** A bearer token every scrape must send; `null` = none (the bind alone guards it). */
  readonly token: string | null;
  /** `true` when the address is the default (a busy default port is logged, not fatal). */
  readonly isDefault: boolean;
}

const ADDR = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/;

/**
 * Reads `OXICLOUD_METRICS_ADDR` (`host:port`, `[v6]:port`; default
 * `127.0.0.1:9464`; set but empty = no metrics listener) and
 * `OXICLOUD_METRICS_TOKEN` (optional bearer token, at least 16 characters).
 *
 * @throws ServerError `BAD_CONFIG` naming the variable and what is allowed.
 */
export function metricsConfigFromEnv(env: Env): MetricsConfig | null {
  const raw = env[METRICS_ADDR_ENV];
  if (raw !== undefined && raw.trim() === '') return null;
  const addr = raw?.trim() ?? DEFAULT_METRICS_ADDR;
  const match = ADDR.exec(addr);
  const port = match ? Number(match[3]) : Number.NaN;
  if (!match || !(port >= 0 && port <= 65_535)) {
    throw new ServerError(
      'BAD_CONFIG',
      `${METRICS_ADDR_ENV}=${JSON.stringify(raw)} is not allowed: expected host:port (port 0-65535), ` +
        `for example ${DEFAULT_METRICS_ADDR} or [::1]:9464; set it empty to turn the metrics listener off`,
    );
  }
  const token = env[METRICS_TOKEN_ENV]?.trim() ?? '';
  if (token !== '' && token.length < 16) {
    throw new ServerError(
      'BAD_CONFIG',
      `${METRICS_TOKEN_ENV} is too short: use at least 16 characters (or unset it for no token)`,
    );
  }
  return {
    host: match[1] ?? match[2] ?? '127.0.0.1',
    port,
    token: token === '' ? null : token,
    isDefault: raw === undefined,
  };
}
