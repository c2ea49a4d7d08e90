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
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function toUser(row: Record<string, unknown> | undefined): UserRow | null {
  if (!row) return null;
  const role = row['role'];
  return {
    id: String(row['id']),
    username: String(row['username']),
    role: role === 'admin' ? 'admin' : 'user',
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
    const { rows } = await this.db.query('SELECT id, username, role FROM auth.users WHERE id = $1', [id]);
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
  async ensureFirstAdmin(username: string): Promise<UserRow | null> {
    const { rows } = await this.db.query(
      `INSERT INTO auth.users (username, role)
       SELECT $1, 'admin' WHERE NOT EXISTS (SELECT 1 FROM auth.users WHERE role = 'admin')
       ON CONFLICT (username) DO NOTHING
       RETURNING id, username, role`,
      [username],
    );
    return toUser(rows[0]);
  }

  /** How many users have role `admin`. */
  async countAdmins(): Promise<number> {
    const { rows } = await this.db.query("SELECT count(*)::int AS n FROM auth.users WHERE role = 'admin'");
    return Number(rows[0]?.['n'] ?? 0);
  }
}
