import type { DatabaseHealth, HealthProbe } from '@oxicloud/admin-api';
import type pg from 'pg';

/**
 * The admin API's `HealthProbe` on a pg pool: `SELECT 1` raced against
 * `timeoutMs`; never throws. The pool replaces dead connections, so the
 * probe recovers by itself when Postgres comes back.
 */
export function pgHealthProbe(pool: pg.Pool, timeoutMs = 2_000): HealthProbe {
  return {
    async database(): Promise<DatabaseHealth> {
      const started = performance.now();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        await Promise.race([pool.query('SELECT 1'), timeout]);
        return { ok: true, latencyMs: Math.round((performance.now() - started) * 100) / 100 };
      } catch (error) {
        return { ok: false, error: (error as Error).message || String(error) };
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
