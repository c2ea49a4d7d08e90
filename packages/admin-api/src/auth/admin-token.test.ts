import { randomUUID } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { AdminApiError } from '../errors.js';
import type { AdminUserRecord } from '../ports/admin-user-lookup.js';
import { signAdminToken, TOKEN_AUDIENCE, TOKEN_ISSUER, verifyAdminToken } from './admin-token.js';

/** The engine's secret (`OXIJOBS_JWT_SECRET`) and OxiCloud's session secret (`OXICLOUD_JWT_SECRET`): never the same. */
const ENGINE_SECRET = 'the-engine-own-secret-of-at-least-32-bytes';
const OXICLOUD_SECRET = 'oxicloud-session-secret-of-at-least-32-bytes';
const key = (secret: string) => new TextEncoder().encode(secret);

const admin: AdminUserRecord = { id: randomUUID(), username: 'admin', role: 'admin' };

/**
 * A token with the claim layout of an OxiCloud session (its `JwtClaims`:
 * `sub`, `exp`, `iat`, `jti`, `username`, `email`, `role`; HS256; no `iss`,
 * no `aud`), for `admin`, signed with `secret`.
 */
function oxicloudSessionToken(secret: string, extra: Record<string, unknown> = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    jti: randomUUID(),
    username: admin.username,
    email: 'admin@example.org',
    role: 'admin',
    ...extra,
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(admin.id)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(key(secret));
}

async function refusal(token: string, secret: string): Promise<AdminApiError> {
  try {
    await verifyAdminToken(token, secret);
  } catch (error) {
    expect(error).toBeInstanceOf(AdminApiError);
    return error as AdminApiError;
  }
  throw new Error('verifyAdminToken accepted the token');
}

describe("the engine's admin token", () => {
  it('carries its own issuer and audience, and no claim of an OxiCloud session', async () => {
    const token = await signAdminToken({ secret: ENGINE_SECRET, user: admin, expiresInSeconds: 600 });
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'HS256', typ: 'JWT' });
    const claims = decodeJwt(token);
    expect(claims).toEqual({
      sub: admin.id,
      role: 'admin',
      username: 'admin',
      iss: 'oxijobs',
      aud: 'oxijobs-admin',
      iat: expect.any(Number),
      exp: (claims.iat ?? 0) + 600,
    });
    expect([TOKEN_ISSUER, TOKEN_AUDIENCE]).toEqual(['oxijobs', 'oxijobs-admin']);
    // OxiCloud's verifier (jsonwebtoken, HS256, no audience expected) refuses any token with an `aud`,
    // and its claims type needs `jti` and `email`, which this token does not have.
    expect(claims).not.toHaveProperty('jti');
    expect(claims).not.toHaveProperty('email');
    // Nor does OxiCloud's secret verify it: the engine signs with its own.
    await expect(jwtVerify(token, key(OXICLOUD_SECRET), { algorithms: ['HS256'] })).rejects.toThrow(
      'signature verification failed',
    );
    await expect(verifyAdminToken(token, ENGINE_SECRET)).resolves.toMatchObject({
      userId: admin.id,
      role: 'admin',
    });
  });

  it('refuses an OxiCloud session token, even one signed with the engine secret, as not issued for it', async () => {
    const error = await refusal(await oxicloudSessionToken(ENGINE_SECRET), ENGINE_SECRET);
    expect(error.code).toBe('UNAUTHENTICATED');
    expect(error.message).toBe(
      `the bearer token was not issued for this engine's admin API (it needs iss "oxijobs" and aud "oxijobs-admin"; ` +
        'an OxiCloud session token is not one): mint one with `oxijobs token --user <admin>`',
    );
  });

  it("refuses an OxiCloud session token signed with OxiCloud's secret (the signature does not verify)", async () => {
    const error = await refusal(await oxicloudSessionToken(OXICLOUD_SECRET), ENGINE_SECRET);
    expect(error.code).toBe('UNAUTHENTICATED');
    expect(error.message).toBe('the bearer token signature does not verify');
  });

  it('refuses a token that has the issuer but not the audience, or another audience or issuer', async () => {
    for (const extra of [
      { iss: TOKEN_ISSUER },
      { iss: TOKEN_ISSUER, aud: 'oxicloud' },
      { iss: 'oxicloud-jobs', aud: TOKEN_AUDIENCE },
      { aud: TOKEN_AUDIENCE },
    ]) {
      const error = await refusal(await oxicloudSessionToken(ENGINE_SECRET, extra), ENGINE_SECRET);
      expect(error.message, JSON.stringify(extra)).toMatch(
        /^the bearer token was not issued for this engine/,
      );
    }
    // With both, the same layout is accepted (the claims are what makes it the engine's, beside the secret).
    const both = await oxicloudSessionToken(ENGINE_SECRET, { iss: TOKEN_ISSUER, aud: TOKEN_AUDIENCE });
    await expect(verifyAdminToken(both, ENGINE_SECRET)).resolves.toMatchObject({ userId: admin.id });
  });
});
