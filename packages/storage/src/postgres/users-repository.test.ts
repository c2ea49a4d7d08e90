import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StorageError } from '../storage-error.js';
import { PgUsersRepository } from './users-repository.js';

describe('PgUsersRepository', () => {
  let db: TestDatabase;
  let users: PgUsersRepository;
  beforeAll(async () => {
    db = await createTestDatabase();
    users = new PgUsersRepository(db.pool);
  });
  afterAll(async () => {
    await db.drop();
  });

  it('creates the first admin only while no admin exists, even when called concurrently', async () => {
    await users.create({ username: 'plain', role: 'user' });
    const results = await Promise.all([users.ensureFirstAdmin('admin'), users.ensureFirstAdmin('admin')]);
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    expect(await users.countAdmins()).toBe(1);
    expect(await users.ensureFirstAdmin('second')).toBeNull();
    expect(await users.findByUsername('second')).toBeNull();
  });

  it('finds users by id and username; a non-UUID id is simply not found', async () => {
    const admin = await users.findByUsername('admin');
    expect(admin).toMatchObject({ username: 'admin', role: 'admin' });
    // By id also with the e-mail (the admin page names a user by it when it has no username).
    expect(await users.findById(admin!.id)).toEqual({ ...admin, email: null });
    const mailed = await users.create({ username: 'mailed', role: 'user', email: 'mailed@example.org' });
    expect(await users.findById(mailed.id)).toMatchObject({
      username: 'mailed',
      email: 'mailed@example.org',
    });
    expect(await users.findById('not-a-uuid')).toBeNull();
    expect(await users.findById('00000000-0000-0000-0000-000000000000')).toBeNull();
    expect(await users.findByUsername('plain')).toMatchObject({ role: 'user' });
  });

  it('refuses a taken or empty username with INVALID_ARGUMENT', async () => {
    await expect(users.create({ username: 'plain', role: 'admin' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: 'a user named "plain" already exists',
    });
    await expect(users.create({ username: '', role: 'user' })).rejects.toBeInstanceOf(StorageError);
  });
});
