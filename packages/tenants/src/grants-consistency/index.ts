/** The grants_consistency tenant: each role grant against its resource (dangling) and its expiry (lingering). */
export type { GrantsConsistencyConfig } from './config.js';
export {
  GRANTS_CONSISTENCY_DEFAULTS,
  GRANTS_CONSISTENCY_ENV,
  grantsConsistencyConfigFromEnv,
} from './config.js';
export type { GrantsConsistencyCheckOptions } from './grants-consistency-check.js';
export {
  createGrantsConsistencyCheck,
  DANGLING_GRANT,
  EXPIRED_GRANT_LINGERING,
  GRANTS_CONSISTENCY_CHECK_NAME,
  grantFindings,
} from './grants-consistency-check.js';
