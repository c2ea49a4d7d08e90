import type { MiddlewareHandler } from 'hono';
import { AdminApiError } from '../errors.js';
import type { AdminEnv } from '../http/admin-env.js';
import type { AdminUserLookup } from '../ports/admin-user-lookup.js';
import { verifyAdminToken } from './admin-token.js';

const BEARER = /^Bearer[ \t]+([^ \t]+)[ \t]*$/i;

/**
 * Admin auth: `Authorization: Bearer <JWT>` (HS256), verified, then checked
 * against `auth.users` through {@link AdminUserLookup}. No, invalid, expired
 * or tampered token → 401 `UNAUTHENTICATED`; a valid token of a user who is
 * not (or no longer) an admin, or no longer exists → 403 `FORBIDDEN`.
 */
export function adminAuth(options: {
  readonly users: AdminUserLookup;
  readonly secret: string | Uint8Array;
}): MiddlewareHandler<AdminEnv> {
  const { users, secret } = options;
  return async (c, next) => {
    const header = c.req.header('authorization');
    if (!header) {
      throw new AdminApiError(
        'UNAUTHENTICATED',
        'missing bearer token: send `Authorization: Bearer <token>` (mint one with `oxijobs token --user <admin>`)',
      );
    }
    const token = BEARER.exec(header)?.[1];
    if (!token) {
      throw new AdminApiError('UNAUTHENTICATED', 'the Authorization header must be `Bearer <token>`');
    }
    const claims = await verifyAdminToken(token, secret);
    let user: Awaited<ReturnType<AdminUserLookup['findById']>>;
    try {
      user = await users.findById(claims.userId);
    } catch (cause) {
      throw new AdminApiError(
        'UNAVAILABLE',
        "cannot check the token's user: the user store does not answer",
        {
          cause,
        },
      );
    }
    c.set('principal', {
      userId: claims.userId,
      username: user?.username ?? claims.username,
      role: user?.role,
    });
    if (!user) {
      throw new AdminApiError('FORBIDDEN', 'the user this token was issued to no longer exists');
    }
    if (user.role !== 'admin') {
      throw new AdminApiError(
        'FORBIDDEN',
        `user "${user.username}" has role "${user.role}"; the admin API needs "admin"`,
      );
    }
    await next();
  };
}
