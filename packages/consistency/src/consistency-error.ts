/** The fixed set of codes a {@link ConsistencyError} carries. */
export type ConsistencyErrorCode =
  /** Two registered adapters contribute checks with the same name. */
  | 'DUPLICATE_CHECK'
  /** A factory got options outside their allowed range. */
  | 'INVALID_OPTIONS'
  /** A check's (or job's) declaration is incomplete: a finding kind without a meaning, twice, of an unknown severity. */
  | 'INVALID_DECLARATION'
  /** A run recorded a finding whose kind its job does not declare, or with another severity than declared. */
  | 'UNDECLARED_FINDING'
  /** Reading or writing `jobs.run_findings` failed. */
  | 'DATABASE'
  /** `jobs.run_findings` (or the `jobs.recoverable_runs` it needs) does not exist: call `migrate()`. */
  | 'SCHEMA_MISSING'
  /** `jobs.run_findings` is older than this build needs: call `migrate()`. */
  | 'SCHEMA_OUTDATED'
  /** A schema file failed to apply; nothing was applied. */
  | 'SCHEMA_MIGRATION_FAILED'
  /** No finding (or run) with that id. */
  | 'FINDING_NOT_FOUND'
  /** A decision the finding's state does not allow (accepting a fixed finding, reopening an open one). */
  | 'INVALID_TRANSITION'
  /** A list cursor that this store did not hand out. */
  | 'INVALID_CURSOR'
  /** No repair plan with that id. */
  | 'PLAN_NOT_FOUND'
  /** A repair plan in a state that does not allow the call (choosing on an approved plan). */
  | 'PLAN_CONFLICT';

/**
 * The one error class of `@oxicloud/consistency`. Messages say what was wrong
 * and what is allowed; the original error is kept as `cause`.
 */
export class ConsistencyError extends Error {
  override readonly name = 'ConsistencyError';
  readonly code: ConsistencyErrorCode;

  constructor(code: ConsistencyErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
