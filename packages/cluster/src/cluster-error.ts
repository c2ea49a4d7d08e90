/** The fixed set of codes a {@link ClusterError} carries. */
export type ClusterErrorCode =
  /** A factory got options outside their allowed range. */
  | 'INVALID_OPTIONS'
  /** The cluster tables do not exist: call `migrate()`. */
  | 'SCHEMA_MISSING'
  /** The cluster tables are older than this build needs: call `migrate()`. */
  | 'SCHEMA_OUTDATED'
  /** A schema file failed to apply; nothing was applied. */
  | 'SCHEMA_MIGRATION_FAILED';

/**
 * The one error class of `@oxicloud/cluster`. Messages say what was wrong and
 * what is allowed; the original error is kept as `cause`.
 */
export class ClusterError extends Error {
  override readonly name = 'ClusterError';
  readonly code: ClusterErrorCode;

  constructor(code: ClusterErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
