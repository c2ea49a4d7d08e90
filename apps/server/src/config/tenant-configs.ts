import {
  type DedupGcConfig,
  dedupGcConfigFromEnv,
  type FilesConsistencyConfig,
  filesConsistencyConfigFromEnv,
  type GrantCleanupConfig,
  type GrantsConsistencyConfig,
  grantCleanupConfigFromEnv,
  grantsConsistencyConfigFromEnv,
  isTenantsError,
  type RunRetentionConfig,
  runRetentionConfigFromEnv,
  type StorageReconcileConfig,
  storageReconcileConfigFromEnv,
  type TrashCleanupConfig,
  trashCleanupConfigFromEnv,
} from '@oxicloud/tenants';
import { ServerError } from '../server-error.js';

/** The env-derived configs of the Part 1 tenants (each tenant owns its variables). */
export interface TenantConfigs {
  readonly trashCleanup: TrashCleanupConfig;
  readonly storageReconcile: StorageReconcileConfig;
  readonly dedupGc: DedupGcConfig;
  readonly grantCleanup: GrantCleanupConfig;
  readonly grantsConsistency: GrantsConsistencyConfig;
  /** `files_consistency` (`OXICLOUD_ENABLE_MUSIC`, OxiCloud's). @defaultValue audio on */
  readonly filesConsistency?: FilesConsistencyConfig;
  /** `run_retention` (`OXICLOUD_JOB_RUN_RETENTION_*`). @defaultValue its defaults (90 days, daily) */
  readonly runRetention?: RunRetentionConfig;
}

/**
 * Reads every tenant's own variables (`OXICLOUD_TRASH_CLEANUP_*`, …) through
 * the tenant's `*ConfigFromEnv`, collecting every problem into one
 * `BAD_CONFIG` error, like `loadConfig`.
 */
export function tenantConfigsFromEnv(env: Readonly<Record<string, string | undefined>>): TenantConfigs {
  const problems: string[] = [];
  const read = <T>(fn: (e: typeof env) => T): T | undefined => {
    try {
      return fn(env);
    } catch (error) {
      if (!isTenantsError(error)) throw error;
      problems.push(error.message);
      return undefined;
    }
  };
  const trashCleanup = read(trashCleanupConfigFromEnv);
  const storageReconcile = read(storageReconcileConfigFromEnv);
  const dedupGc = read(dedupGcConfigFromEnv);
  const grantCleanup = read(grantCleanupConfigFromEnv);
  const grantsConsistency = read(grantsConsistencyConfigFromEnv);
  const runRetention = read(runRetentionConfigFromEnv);
  const filesConsistency = filesConsistencyConfigFromEnv(env);
  if (
    problems.length > 0 ||
    !trashCleanup ||
    !storageReconcile ||
    !dedupGc ||
    !grantCleanup ||
    !grantsConsistency ||
    !runRetention
  ) {
    throw new ServerError('BAD_CONFIG', `invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
  return {
    trashCleanup,
    storageReconcile,
    dedupGc,
    grantCleanup,
    grantsConsistency,
    filesConsistency,
    runRetention,
  };
}
