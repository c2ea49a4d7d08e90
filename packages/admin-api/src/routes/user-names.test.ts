import { describe, expect, it } from 'vitest';
import type { AdminUserLookup, AdminUserRecord } from '../ports/admin-user-lookup.js';
import { userNames } from './user-names.js';

const NAMED = '0193a000-0000-7000-8000-0000000000a1';
const MAILED = '0193a000-0000-7000-8000-0000000000b2';
const GONE = '0193a000-0000-7000-8000-0000000000c3';

/** The port over a fixed set of users (a unit test of the naming, not of `auth.users`). */
function lookup(users: readonly AdminUserRecord[], calls: string[] = []): AdminUserLookup {
  return {
    findById: async (id) => {
      calls.push(id);
      return users.find((u) => u.id === id) ?? null;
    },
  };
}

describe('userNames', () => {
  it('names a user by username, a user without one by e-mail, and leaves out the gone and the non-users', async () => {
    const calls: string[] = [];
    const names = await userNames(
      lookup(
        [
          { id: NAMED, username: 'ada', role: 'admin', email: 'ada@example.org' },
          { id: MAILED, username: '', role: 'admin', email: 'grace@example.org' },
        ],
        calls,
      ),
      [NAMED, MAILED, GONE, 'system', null, NAMED],
    );
    expect(Object.fromEntries(names)).toEqual({ [NAMED]: 'ada', [MAILED]: 'grace@example.org' });
    // One look-up per distinct user id; `system` is not looked up.
    expect(calls.sort()).toEqual([NAMED, MAILED, GONE].sort());
  });

  it('answers no names, rather than failing, when the lookup fails', async () => {
    const failing: AdminUserLookup = { findById: () => Promise.reject(new Error('connection refused')) };
    expect((await userNames(failing, [NAMED])).size).toBe(0);
    expect((await userNames(undefined, [NAMED])).size).toBe(0);
  });
});
