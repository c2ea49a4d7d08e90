import type { AdminUserLookup, AdminUserRecord } from '@oxicloud/admin-api';
import { describe, expect, it } from 'vitest';
import { usersThroughOutage } from './users-through-outage.js';

const admin: AdminUserRecord = { id: 'u1', username: 'admin', role: 'admin' };
const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

function flaky() {
  let failWith: Error | null = null;
  const lookup: AdminUserLookup = {
    async findById(id) {
      if (failWith) throw failWith;
      return id === admin.id ? admin : null;
    },
  };
  const fail = (e: Error | null): void => {
    failWith = e;
  };
  return { lookup, fail };
}

describe('usersThroughOutage', () => {
  it('answers a user checked recently from memory while the database is unreachable, and only then', async () => {
    let now = 0;
    const db = flaky();
    const users = usersThroughOutage(db.lookup, { trustMs: 1_000, now: () => now });
    expect(await users.findById('u1')).toEqual(admin);
    db.fail(refused());
    now = 900;
    expect(await users.findById('u1')).toEqual(admin);
    // Never seen: the outage is not hidden.
    await expect(users.findById('u2')).rejects.toThrow(/ECONNREFUSED/);
    // Seen too long ago: refused as before.
    now = 1_200;
    await expect(users.findById('u1')).rejects.toThrow(/ECONNREFUSED/);
  });

  it('any other error is not hidden', async () => {
    const db = flaky();
    const users = usersThroughOutage(db.lookup);
    await users.findById('u1');
    db.fail(new Error('permission denied for table users'));
    await expect(users.findById('u1')).rejects.toThrow(/permission denied/);
  });
});
