import type { AdminApiErrorCode } from '../errors.js';
import type { UserRole } from '../ports/admin-user-lookup.js';

/** Who is calling, as far as the auth middleware got (set even when it then refuses with 403). */
export interface Principal {
  readonly userId: string;
  readonly username: string | undefined;
  /** The role in `auth.users`, or `undefined` when the user no longer exists. */
  readonly role: UserRole | undefined;
}

/** The hono environment of the admin app: per-request variables. */
export interface AdminEnv {
  Variables: {
    /** Set by the auth middleware once a token verifies. */
    principal: Principal | undefined;
    /** The error code of the error response, set when one is built (read by the audit middleware). */
    errorCode: AdminApiErrorCode | undefined;
    /** Set once the audit line of this request has been written. */
    audited: boolean | undefined;
    /** Set once the audit middleware has written its line for this request (it may be mounted twice). */
    auditClosed: boolean | undefined;
  };
}
