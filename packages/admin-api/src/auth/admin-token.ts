import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { AdminApiError } from '../errors.js';
import { type AdminUserRecord, USER_ROLES, type UserRole } from '../ports/admin-user-lookup.js';

/** The smallest HS256 secret accepted: 32 bytes (256 bits), the size of the hash. */
export const MIN_SECRET_BYTES = 32;

/**
 * The `iss` claim of every token this package mints and accepts: the engine,
 * never OxiCloud (whose session tokens carry no `iss`).
 */
export const TOKEN_ISSUER = 'oxijobs';

/**
 * The `aud` claim of every token this package mints and accepts: the
 * engine's admin API. A token without it (an OxiCloud session token: `sub`,
 * `exp`, `iat`, `jti`, `username`, `email`, `role`, no `iss`, no `aud`) is
 * refused even when its signature verifies; and OxiCloud's verifier
 * (jsonwebtoken's HS256 `Validation` with no audience set) refuses a token
 * that carries an `aud`, so a token minted here is no OxiCloud session.
 */
export const TOKEN_AUDIENCE = 'oxijobs-admin';

/** The claims of a verified admin token. */
export interface AdminTokenClaims {
  /** `sub`: the user's id (`auth.users.id`). */
  readonly userId: string;
  /** The `role` claim at signing time; the middleware re-checks it against `auth.users`. */
  readonly role: UserRole;
  /** The `username` claim, informational. */
  readonly username: string | undefined;
  /** `exp` as a Date. */
  readonly expiresAt: Date;
}

/** Turns a secret into HS256 key bytes, refusing one shorter than {@link MIN_SECRET_BYTES}. */
export function tokenKey(secret: string | Uint8Array): Uint8Array {
  const key = typeof secret === 'string' ? new TextEncoder().encode(secret) : secret;
  if (key.byteLength < MIN_SECRET_BYTES) {
    throw new AdminApiError(
      'BAD_OPTIONS',
      `the JWT secret is ${key.byteLength} bytes long; at least ${MIN_SECRET_BYTES} bytes are required for HS256`,
    );
  }
  return key;
}

/**
 * Mints a bearer token (JWT, HS256) for a user: `sub` = user id, `role`,
 * `username`, `iat`, `exp`, `iss` ({@link TOKEN_ISSUER}) and `aud`
 * ({@link TOKEN_AUDIENCE}). Beside OxiCloud the secret is the engine's own
 * (`OXIJOBS_JWT_SECRET`), never OxiCloud's session secret.
 *
 * @example
 * ```ts
 * const token = await signAdminToken({ secret, user, expiresInSeconds: 12 * 3600 });
 * fetch('/api/admin/jobs', { headers: { authorization: `Bearer ${token}` } });
 * ```
 */
export async function signAdminToken(options: {
  readonly secret: string | Uint8Array;
  readonly user: AdminUserRecord;
  readonly expiresInSeconds: number;
  /** Defaults to the current time. */
  readonly now?: Date;
}): Promise<string> {
  const { user, expiresInSeconds } = options;
  if (!Number.isFinite(expiresInSeconds) || expiresInSeconds <= 0) {
    throw new AdminApiError(
      'BAD_OPTIONS',
      `expiresInSeconds is ${expiresInSeconds}; a positive number of seconds is required`,
    );
  }
  const iat = Math.floor((options.now ?? new Date()).getTime() / 1000);
  return new SignJWT({ role: user.role, username: user.username })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(user.id)
    .setIssuer(TOKEN_ISSUER)
    .setAudience(TOKEN_AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(iat + Math.ceil(expiresInSeconds))
    .sign(tokenKey(options.secret));
}

/**
 * Verifies a token's signature (HS256 only), issuer ({@link TOKEN_ISSUER}),
 * audience ({@link TOKEN_AUDIENCE}) and expiry. Throws {@link AdminApiError}
 * `UNAUTHENTICATED` with a reason a client can act on: a token of another
 * issuer or audience (an OxiCloud session token) is refused as one.
 */
export async function verifyAdminToken(
  token: string,
  secret: string | Uint8Array,
): Promise<AdminTokenClaims> {
  let payload: Awaited<ReturnType<typeof jwtVerify>>['payload'];
  try {
    ({ payload } = await jwtVerify(token, tokenKey(secret), {
      algorithms: ['HS256'],
      issuer: TOKEN_ISSUER,
      audience: TOKEN_AUDIENCE,
    }));
  } catch (cause) {
    if (cause instanceof AdminApiError) throw cause;
    const reason =
      cause instanceof joseErrors.JWTExpired
        ? 'the bearer token has expired; mint a new one with `oxijobs token --user <admin>`'
        : cause instanceof joseErrors.JWSSignatureVerificationFailed
          ? 'the bearer token signature does not verify'
          : cause instanceof joseErrors.JWTClaimValidationFailed &&
              (cause.claim === 'iss' || cause.claim === 'aud')
            ? `the bearer token was not issued for this engine's admin API (it needs iss "${TOKEN_ISSUER}" and aud "${TOKEN_AUDIENCE}"; an OxiCloud session token is not one): mint one with \`oxijobs token --user <admin>\``
            : 'the bearer token is not a valid admin token';
    throw new AdminApiError('UNAUTHENTICATED', reason, { cause });
  }
  const role = payload['role'];
  if (typeof payload.sub !== 'string' || !isUserRole(role) || payload.exp === undefined) {
    throw new AdminApiError('UNAUTHENTICATED', 'the bearer token lacks the sub, role or exp claim');
  }
  const username = payload['username'];
  return {
    userId: payload.sub,
    role,
    username: typeof username === 'string' ? username : undefined,
    expiresAt: new Date(payload.exp * 1000),
  };
}

function isUserRole(value: unknown): value is UserRole {
  return typeof value === 'string' && (USER_ROLES as readonly string[]).includes(value);
}
