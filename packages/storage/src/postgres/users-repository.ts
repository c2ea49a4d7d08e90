import { StorageError } from '../storage-error.js';

/** The subset of `pg`'s Pool (or Client) this repository needs. */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
}

/** A row of `auth.users`, the fields the server and the admin API use. */
export interface UserRow {
  readonly id: string;
  readonly username: string;
  readonly role: 'admin' | 'user';
  /** `null` when the user has none (read by {@link PgUsersRepository.findById} only). */
  readonly email?: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function toUser(row: Record<string, unknown> | undefined): UserRow | null {
  if (!row) return null;
  const role = row['role'];
  return {
    id: String(row['id']),
    username: String(row['username']),
    role: role === 'admin' ? 'admin' : 'user',
    ...('email' in row ? { email: typeof row['email'] === 'string' ? row['email'] : null } : {}),
  };
}

/**
 * `auth.users` lookups for the admin API (it satisfies the admin API's
 * `AdminUserLookup` port) and the server's first-boot admin.
 *
 * @example
 * ```ts
 * const users = new PgUsersRepository(pool);
 * const { created } = await users.ensureFirstAdmin('admin');
 * ```
 */
export class PgUsersRepository {
  constructor(private readonly db: PgQueryable) {}

  /** The user with this id, or `null` (also for a string that is not a UUID). */
  async findById(id: string): Promise<UserRow | null> {
    if (!UUID.test(id)) return null;
    const { rows } = await this.db.query('SELECT id, username, role, email FROM auth.users WHERE id = $1', [
      id,
    ]);
    return toUser(rows[0]);
  }

  /** The user with this username, or `null`. */
  async findByUsername(username: string): Promise<UserRow | null> {
    const { rows } = await this.db.query('SELECT id, username, role FROM auth.users WHERE username = $1', [
      username,
    ]);
    return toUser(rows[0]);
  }

  /** Creates a user; throws `INVALID_ARGUMENT` when the username is empty or taken. */
  async create(user: {
    readonly username: string;
    readonly role: 'admin' | 'user';
    readonly email?: string;
  }) {
    if (user.username === '') throw new StorageError('INVALID_ARGUMENT', 'a username must not be empty');
    const { rows } = await this.db.query(
      `INSERT INTO auth.users (username, role, email) VALUES ($1, $2, $3)
       ON CONFLICT (username) DO NOTHING RETURNING id, username, role`,
      [user.username, user.role, user.email ?? null],
    );
    const created = toUser(rows[0]);
    if (!created) {
      throw new StorageError('INVALID_ARGUMENT', `a user named "${user.username}" already exists`);
    }
    return created;
  }

  /**
   * Creates an admin named `username` when NO admin exists yet (one statement,
   * safe against a concurrent first boot). Returns the created row, or `null`
   * when an admin already existed or the name is taken by a non-admin.
   */
  async ensureFirstAdmin(username: string, email?: string): Promise<UserRow | null> {
    const { rows } = await this.db.query(
      `INSERT INTO auth.users (username, role, email)
       SELECT $1, 'admin', $2 WHERE NOT EXISTS (SELECT 1 FROM auth.users WHERE role = 'admin')
       ON CONFLICT (username) DO NOTHING
       RETURNING id, username, role`,
      [username, email ?? null],
    );
    return toUser(rows[0]);
  }

  /** The e-mail address of `username`: `null` when it has none, `undefined` when there is no such user. */
  async findEmail(username: string): Promise<string | null | undefined> {
    const { rows } = await this.db.query('SELECT email FROM auth.users WHERE username = $1', [username]);
    if (rows.length === 0) return undefined;
    const email = rows[0]?.['email'];
    return typeof email === 'string' ? email : null;
  }

  /**
   * Sets (or replaces) the e-mail address of `username`. Returns the address
   * it had before (`null` for none), or `undefined` when there is no such user.
   * With `onlyIfUnset`, an existing address is kept (and returned).
   */
  async setEmail(
    username: string,
    email: string,
    options: { readonly onlyIfUnset?: boolean } = {},
  ): Promise<string | null | undefined> {
    const { rows } = await this.db.query(
      `WITH before AS (SELECT id, email FROM auth.users WHERE username = $1 FOR UPDATE)
       UPDATE auth.users u SET email = $2
         FROM before
        WHERE u.id = before.id AND (NOT $3 OR before.email IS NULL)
       RETURNING before.email AS previous`,
      [username, email, options.onlyIfUnset === true],
    );
    if (rows.length > 0) {
      const previous = rows[0]?.['previous'];
      return typeof previous === 'string' ? previous : null;
    }
    return this.findEmail(username);
  }

  /** How many users have role `admin`. */
  async countAdmins(): Promise<number> {
    const { rows } = await this.db.query("SELECT count(*)::int AS n FROM auth.users WHERE role = 'admin'");
    return Number(rows[0]?.['n'] ?? 0);
  }
}
