import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AdminUserRecord, signAdminToken, verifyAdminToken } from '@oxicloud/admin-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../config/server-config.js';
import { ServerError } from '../server-error.js';
import { OXICLOUD_JWT_SECRET_FILE, resolveJwtSecret } from './jwt-secret.js';

const ENGINE_SECRET = 'the-engine-own-secret-of-at-least-32-bytes';
const OXICLOUD_SECRET = 'oxicloud-session-secret-of-at-least-32-bytes';
const admin: AdminUserRecord = {
  id: '0190a4b2-3333-7000-8000-000000000003',
  username: 'admin',
  role: 'admin',
};

describe('resolveJwtSecret', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'oxijobs-jwt-secret-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("signs with OXIJOBS_JWT_SECRET beside OXICLOUD_JWT_SECRET; a token signed with OxiCloud's value is refused", async () => {
    const config = loadConfig(
      { OXICLOUD_DATA_DIR: dir, OXIJOBS_JWT_SECRET: ENGINE_SECRET, OXICLOUD_JWT_SECRET: OXICLOUD_SECRET },
      dir,
    );
    const resolved = await resolveJwtSecret(config);
    expect(resolved).toEqual({ secret: ENGINE_SECRET, source: 'OXIJOBS_JWT_SECRET' });
    const ours = await signAdminToken({ secret: resolved.secret, user: admin, expiresInSeconds: 60 });
    await expect(verifyAdminToken(ours, resolved.secret)).resolves.toMatchObject({ userId: admin.id });
    const withOxiCloudSecret = await signAdminToken({
      secret: OXICLOUD_SECRET,
      user: admin,
      expiresInSeconds: 60,
    });
    await expect(verifyAdminToken(withOxiCloudSecret, resolved.secret)).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
      message: 'the bearer token signature does not verify',
    });
  });

  it("never falls back to OXICLOUD_JWT_SECRET: with only OxiCloud's, the engine generates its own", async () => {
    const config = loadConfig({ OXICLOUD_DATA_DIR: dir, OXICLOUD_JWT_SECRET: OXICLOUD_SECRET }, dir);
    const resolved = await resolveJwtSecret(config);
    expect(resolved.source).toBe('generated');
    expect(resolved.secret).not.toBe(OXICLOUD_SECRET);
    expect(readFileSync(join(dir, 'jwt-secret'), 'utf8').trim()).toBe(resolved.secret);
    // The next command reads the same file.
    expect(await resolveJwtSecret(config)).toMatchObject({ secret: resolved.secret, source: 'file' });
  });

  it('refuses a secret that is the one OxiCloud keeps in <storage root>/.jwt_secret', async () => {
    const oxicloud = join(dir, 'oxicloud');
    mkdirSync(join(oxicloud, 'storage'), { recursive: true });
    writeFileSync(join(oxicloud, 'storage', OXICLOUD_JWT_SECRET_FILE), `${ENGINE_SECRET}\n`);
    const env = { OXICLOUD_DATA_DIR: join(dir, 'data'), OXIJOBS_OXICLOUD_WORKDIR: oxicloud };
    const error = await resolveJwtSecret(
      loadConfig({ ...env, OXIJOBS_JWT_SECRET: ENGINE_SECRET }, dir),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).code).toBe('BAD_CONFIG');
    expect((error as Error).message).toBe(
      `the engine's token secret (OXIJOBS_JWT_SECRET) is OxiCloud's session secret in ${join(oxicloud, 'storage', '.jwt_secret')}: ` +
        "the engine signs its admin tokens with a secret of its own, never OxiCloud's; give it another one (e.g. `openssl rand -hex 32`)",
    );
    expect((error as Error).message).not.toContain(ENGINE_SECRET);
    // Another secret beside OxiCloud's file is fine; so is the generated one.
    await expect(
      resolveJwtSecret(loadConfig({ ...env, OXIJOBS_JWT_SECRET: OXICLOUD_SECRET }, dir)),
    ).resolves.toMatchObject({ source: 'OXIJOBS_JWT_SECRET' });
    await expect(resolveJwtSecret(loadConfig(env, dir))).resolves.toMatchObject({ source: 'generated' });
  });
});
