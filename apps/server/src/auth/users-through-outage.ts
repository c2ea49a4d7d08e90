import type { AdminUserLookup, AdminUserRecord } from '@oxicloud/admin-api';
import { isConnectionLoss } from '@oxicloud/recoverable';

/** How long a user checked before an outage stays trusted while the database is unreachable. */
export const OUTAGE_USER_TRUST_MS = 10 * 60_000;

/**
 * The admin API's user lookup, able to ride out a database outage: a user
 * found within the last {@link OUTAGE_USER_TRUST_MS} is answered from memory
 * while the database is unreachable (and only then), so an operator can
 * still cancel a run during an outage; the cancel lands when the database
 * is back. Any other error, or a user not seen recently, fails as before.
 */
export function usersThroughOutage(
  users: AdminUserLookup,
  options: { trustMs?: number; now?: () => number } = {},
): AdminUserLookup {
  const trustMs = options.trustMs ?? OUTAGE_USER_TRUST_MS;
  const now = options.now ?? Date.now;
  const seen = new Map<string, { user: AdminUserRecord | null; at: number }>();
  return {
    async findById(id) {
      try {
        const user = await users.findById(id);
        if (seen.size > 1_000) seen.clear();
        seen.set(id, { user, at: now() });
        return user;
      } catch (error) {
        const known = seen.get(id);
        if (known && isConnectionLoss(error) && now() - known.at <= trustMs) return known.user;
        throw error;
      }
    },
  };
}
