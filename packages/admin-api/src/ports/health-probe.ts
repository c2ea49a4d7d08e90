/** What `GET /healthz` reports about the database. */
export type DatabaseHealth =
  | { readonly ok: true; readonly latencyMs: number }
  | {
      readonly ok: false;
      /** The cause as the driver says it; `/healthz` shows only a fixed public reason derived from it. */
      readonly error: string;
    };

/**
 * The port `GET /healthz` asks. It must not throw and must answer in bounded
 * time (the server's probe runs `SELECT 1` under a timeout).
 */
export interface HealthProbe {
  database(): Promise<DatabaseHealth>;
}
