import type { PgQueryable } from '../postgres/database.js';
import { StorageError } from '../storage-error.js';

/**
 * The address the first admin gets on OxiCloud's domain when
 * `OXICLOUD_ADMIN_EMAIL` is not set: `auth.users.email` is NOT NULL there
 * (fact sheet §2). The `.invalid` top-level domain never resolves, so no
 * mail goes to it; {@link OxiUsersRepository.setEmail} with `onlyIfUnset`
 * treats it as no address.
 */
export const OXI_FIRST_ADMIN_PLACEHOLDER_EMAIL = 'admin@oxicloud.invalid';

/** A row of `auth.users`, the fields the server and the admin API use. */
export interface UserRow {
  readonly id: string;
  readonly username: string;
  readonly role: 'admin' | 'user';
  /** `null` when the user has none, or only the first admin's placeholder. */
  readonly email?: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const COLUMNS = 'id::text AS id, username, email, role::text AS role';

function toUser(row: Record<string, unknown> | undefined): UserRow | null {
  if (!row) return null;
  const email = typeof row['email'] === 'string' ? row['email'] : null;
  const username = typeof row['username'] === 'string' ? row['username'] : (email ?? String(row['id']));
  return {
    id: String(row['id']),
    // OxiCloud's username is optional (email-only sign-ups): such a user is named by its address.
    username,
    role: row['role'] === 'admin' ? 'admin' : 'user',
    email: email === OXI_FIRST_ADMIN_PLACEHOLDER_EMAIL ? null : email,
  };
}

/**
 * `auth.users` on OxiCloud's storage domain (fact sheet §2) for the server
 * and the admin API: `username` is optional and `email` NOT NULL, `role`
 * is the enum `auth.userrole`, and only `active` users count (a deactivated
 * admin gets no token, and a token it holds stops working).
 *
 * @example
 * ```ts
 * const users = new OxiUsersRepository(pool);
 * await users.findByUsername('ops@example.org'); // a username or an e-mail address
 * ```
 */
export class OxiUsersRepository {
  constructor(private readonly db: PgQueryable) {}

  /** The active user with this id, or `null` (also for a string that is not a UUID). */
  async findById(id: string): Promise<UserRow | null> {
    if (!UUID.test(id)) return null;
    const { rows } = await this.db.query(`SELECT ${COLUMNS} FROM auth.users WHERE id = $1 AND active`, [id]);
    return toUser(rows[0]);
  }

  /** The active user with this username, else with this e-mail address (byte-exact), or `null`. */
  async findByUsername(usernameOrEmail: string): Promise<UserRow | null> {
    const { rows } = await this.db.query(
      `SELECT ${COLUMNS} FROM auth.users
        WHERE active AND (username = $1 OR email = $1)
        ORDER BY (username IS NOT DISTINCT FROM $1) DESC
        LIMIT 1`,
      [usernameOrEmail],
    );
    return toUser(rows[0]);
  }

  /**
   * Creates an admin named `username` (address `email`, else
   * {@link OXI_FIRST_ADMIN_PLACEHOLDER_EMAIL}) when no admin exists yet, in
   * one statement. Returns the created row, or `null` when an admin existed
   * or the name or address is taken.
   */
  async ensureFirstAdmin(username: string, email?: string): Promise<UserRow | null> {
    const { rows } = await this.db.query(
      `INSERT INTO auth.users (username, email, role)
       SELECT $1, $2, 'admin'::auth.userrole
        WHERE NOT EXISTS (SELECT 1 FROM auth.users WHERE role = 'admin')
       ON CONFLICT DO NOTHING
       RETURNING ${COLUMNS}`,
      [username, email ?? OXI_FIRST_ADMIN_PLACEHOLDER_EMAIL],
    );
    return toUser(rows[0]);
  }

  /** The address of `username` (or of the user with that address): `null` for the placeholder, `undefined` when there is no such user. */
  async findEmail(usernameOrEmail: string): Promise<string | null | undefined> {
    const user = await this.findByUsername(usernameOrEmail);
    return user === null ? undefined : (user.email ?? null);
  }

  /**
   * Sets the address of `username`. Returns the one it had before (`null`
   * for the placeholder), or `undefined` when there is no such user. With
   * `onlyIfUnset`, only the placeholder is replaced.
   */
  async setEmail(
    username: string,
    email: string,
    options: { readonly onlyIfUnset?: boolean } = {},
  ): Promise<string | null | undefined> {
    const { rows } = await this.db.query(
      `WITH before AS (SELECT id, email FROM auth.users WHERE username = $1 FOR UPDATE)
       UPDATE auth.users u SET email = $2, updated_at = now()
         FROM before
        WHERE u.id = before.id AND (NOT $3 OR before.email = $4)
       RETURNING before.email AS previous`,
      [username, email, options.onlyIfUnset === true, OXI_FIRST_ADMIN_PLACEHOLDER_EMAIL],
    );
    if (rows.length > 0) {
      const previous = rows[0]?.['previous'];
      return typeof previous === 'string' && previous !== OXI_FIRST_ADMIN_PLACEHOLDER_EMAIL ? previous : null;
    }
    const { rows: found } = await this.db.query('SELECT email FROM auth.users WHERE username = $1', [
      username,
    ]);
    if (found.length === 0) return undefined;
    const current = found[0]?.['email'];
    return typeof current === 'string' && current !== OXI_FIRST_ADMIN_PLACEHOLDER_EMAIL ? current : null;
  }

  /** How many active users have role `admin`. */
  async countAdmins(): Promise<number> {
    const { rows } = await this.db.query(
      "SELECT count(*)::int AS n FROM auth.users WHERE role = 'admin' AND active",
    );
    return Number(rows[0]?.['n'] ?? 0);
  }
}

/**
 * The addresses of every active admin of OxiCloud's `auth.users`, sorted
 * and distinct, without the first admin's placeholder: the `AdminRecipients`
 * port of `@oxicloud/alerts` on OxiCloud's domain.
 */
export class OxiAdminRecipients {
  constructor(private readonly db: PgQueryable) {}

  /** @throws StorageError `BACKEND_ERROR` when the query fails (the pg error is the `cause`). */
  async adminEmails(): Promise<string[]> {
    try {
      const { rows } = await this.db.query(
        `SELECT DISTINCT btrim(email) AS email
           FROM auth.users
          WHERE role = 'admin' AND active AND NOT is_external
            AND btrim(email) <> '' AND email <> $1
          ORDER BY 1`,
        [OXI_FIRST_ADMIN_PLACEHOLDER_EMAIL],
      );
      return rows.map((row) => String(row['email']));
    } catch (cause) {
      throw new StorageError('BACKEND_ERROR', 'could not read the admin e-mail addresses from auth.users', {
        cause,
      });
    }
  }
}
