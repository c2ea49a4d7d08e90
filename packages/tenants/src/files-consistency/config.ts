import type { TenantEnv } from '../env.js';

/** Environment variables of `files_consistency`: OxiCloud's own, read with OxiCloud's meaning. */
export const FILES_CONSISTENCY_ENV = {
  music: 'OXICLOUD_ENABLE_MUSIC',
} as const;

/** Validated configuration of `files_consistency`. */
export interface FilesConsistencyConfig {
  /**
   * OxiCloud's music feature is on, so its extractor writes audio tags rows
   * (`audio.file_metadata`): a deep run looks for missing ones (§9).
   */
  readonly audio: boolean;
}

/**
 * Reads `files_consistency`'s configuration: `OXICLOUD_ENABLE_MUSIC` as
 * OxiCloud reads it (`src/common/config.rs`): exactly `true` or `false`
 * sets it; unset, or any other value, which OxiCloud ignores, keeps its
 * default, on. The engine follows what OxiCloud does rather than refuse a
 * value OxiCloud accepts.
 */
export function filesConsistencyConfigFromEnv(env: TenantEnv): FilesConsistencyConfig {
  return { audio: env[FILES_CONSISTENCY_ENV.music] !== 'false' };
}
