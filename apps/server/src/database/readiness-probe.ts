import type { ReadinessProbe, ReadinessReport } from '@oxicloud/admin-api';
import { engineFiles, migrationStatus, type StorageDomain, storageDomainFiles } from '@oxicloud/migrations';
import type pg from 'pg';
import { CONFIG_DEFAULTS } from '../config/env-vars.js';

/** Replaces addresses and host:port pairs in a driver message (the probe is public). */
export function withoutAddresses(message: string): string {
  return message
    .replace(/\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b/g, '<address>')
    .replace(/\[?[0-9a-f]*:[0-9a-f:]*:[0-9a-f]*\]?(?::\d+)?/gi, (m) => (m.length > 3 ? '<address>' : m))
    .replace(/\b[a-z0-9.-]+\.[a-z]{2,}:\d+\b/gi, '<address>');
}

/**
 * The admin API's `ReadinessProbe` on a pg pool: the database answers (a
 * query within `timeoutMs`), the schema is at this build's newest migration,
 * no migration is pending and none was edited after it was applied (the
 * files of the storage domain `domain`). Never throws; names the failing part.
 */
export function pgReadinessProbe(
  pool: pg.Pool,
  timeoutMs = 2_000,
  domain: StorageDomain = CONFIG_DEFAULTS.storageDomain,
  database: { readonly sidecar: boolean; readonly engineSchema: string } = {
    sidecar: false,
    engineSchema: 'jobs',
  },
): ReadinessProbe {
  const files = database.sidecar ? engineFiles() : storageDomainFiles(domain);
  return {
    async check(): Promise<ReadinessReport> {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        const status = await Promise.race([migrationStatus(pool, files, database), timeout]);
        const schemaOk = status.current === status.expected && status.unknown.length === 0;
        const migrationsOk = status.pending.length === 0 && status.changed.length === 0;
        return {
          database: { ok: true },
          schema: {
            ok: schemaOk,
            expected: status.expected,
            current: status.current,
            ...(status.unknown.length > 0 ? { unknown: status.unknown } : {}),
          },
          migrations: {
            ok: migrationsOk,
            pending: status.pending,
            ...(status.changed.length > 0 ? { changed: status.changed } : {}),
          },
        };
      } catch (error) {
        const message = (error as Error).message || String(error);
        return {
          database: { ok: false, error: withoutAddresses(message) },
          schema: {
            ok: false,
            expected: null,
            current: null,
            error: 'not checked: the database does not answer',
          },
          migrations: { ok: false, pending: [], error: 'not checked: the database does not answer' },
        };
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
