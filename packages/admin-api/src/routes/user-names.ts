import type { AdminUserLookup } from '../ports/admin-user-lookup.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The most distinct users one answer names (a finding's history, a plan's two actors). */
const MAX_NAMED = 50;

/**
 * What to call the users behind these actor ids (`auth.users` through the
 * {@link AdminUserLookup}): the username, or the e-mail address of a user
 * without one. Actors that are not user ids (`system`, `unknown`), users
 * that are gone, and every user when the lookup fails are left out: a name
 * is a courtesy, never a reason to fail an answer (the page shows the id's
 * end instead).
 */
export async function userNames(
  users: AdminUserLookup | undefined,
  ids: Iterable<string | null | undefined>,
): Promise<ReadonlyMap<string, string>> {
  const names = new Map<string, string>();
  if (!users) return names;
  const wanted = [...new Set([...ids].filter((id): id is string => typeof id === 'string' && UUID.test(id)))];
  await Promise.all(
    wanted.slice(0, MAX_NAMED).map(async (id) => {
      const user = await users.findById(id).catch(() => null);
      const name = user?.username || user?.email;
      if (name) names.set(id, name);
    }),
  );
  return names;
}
