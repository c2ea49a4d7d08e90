import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  OXI_FIRST_ADMIN_PLACEHOLDER_EMAIL,
  OxiAdminRecipients,
  OxiUsersRepository,
} from './oxi-users-repository.js';

let db: TestDatabase;
let users: OxiUsersRepository;

beforeAll(async () => {
  db = await createTestDatabase({ domain: 'oxicloud', max: 2 });
  users = new OxiUsersRepository(db.pool);
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  await db.pool.query('DELETE FROM auth.users');
});

describe("OxiUsersRepository on OxiCloud's auth.users", () => {
  it('creates the first admin with the placeholder address when none is given, once', async () => {
    const created = await users.ensureFirstAdmin('admin');
    expect(created).toMatchObject({ username: 'admin', role: 'admin', email: null });
    const { rows } = await db.pool.query(
      "SELECT email, role::text AS role FROM auth.users WHERE username = 'admin'",
    );
    expect(rows).toEqual([{ email: OXI_FIRST_ADMIN_PLACEHOLDER_EMAIL, role: 'admin' }]);
    expect(await users.ensureFirstAdmin('admin')).toBeNull();
    expect(await users.countAdmins()).toBe(1);
    // Only the placeholder counts as unset: it is replaced once, then kept.
    expect(await users.setEmail('admin', 'ops@example.org', { onlyIfUnset: true })).toBeNull();
    expect(await users.setEmail('admin', 'other@example.org', { onlyIfUnset: true })).toBe('ops@example.org');
    expect(await users.findEmail('admin')).toBe('ops@example.org');
  });

  it('creates the first admin only while no admin exists, even when called concurrently', async () => {
    await db.pool.query(
      "INSERT INTO auth.users (username, email, role) VALUES ('plain', 'plain@example.org', 'user')",
    );
    const results = await Promise.all([users.ensureFirstAdmin('admin'), users.ensureFirstAdmin('admin')]);
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    expect(await users.countAdmins()).toBe(1);
    expect(await users.ensureFirstAdmin('second')).toBeNull();
    expect(await users.findByUsername('second')).toBeNull();
  });

  it('finds an active user by username or e-mail address, an email-only user named by its address', async () => {
    await db.pool.query(
      `INSERT INTO auth.users (username, email, role, active) VALUES
         ('ops', 'ops@example.org', 'admin', true),
         (NULL, 'mail-only@example.org', 'admin', true),
         ('gone', 'gone@example.org', 'admin', false)`,
    );
    expect(await users.findByUsername('ops')).toMatchObject({ username: 'ops', role: 'admin' });
    expect(await users.findByUsername('ops@example.org')).toMatchObject({ username: 'ops' });
    const mailOnly = await users.findByUsername('mail-only@example.org');
    expect(mailOnly).toMatchObject({ username: 'mail-only@example.org', role: 'admin' });
    expect(await users.findById(mailOnly!.id)).toMatchObject({ username: 'mail-only@example.org' });
    expect(await users.findByUsername('gone')).toBeNull();
    expect(await users.findById('not-a-uuid')).toBeNull();
  });

  it('OxiAdminRecipients: active admins with a real address, sorted, never the placeholder', async () => {
    await users.ensureFirstAdmin('admin');
    await db.pool.query(
      `INSERT INTO auth.users (username, email, role, active) VALUES
         ('bee', 'b@example.org', 'admin', true),
         ('ace', 'a@example.org', 'admin', true),
         ('usr', 'u@example.org', 'user', true),
         ('off', 'off@example.org', 'admin', false)`,
    );
    expect(await new OxiAdminRecipients(db.pool).adminEmails()).toEqual(['a@example.org', 'b@example.org']);
  });
});
