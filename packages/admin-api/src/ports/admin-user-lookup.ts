/**
 * Roles a user can have: the one list (the CHECK constraint on
 * `auth.users.role` repeats it, tied by `sql-enum-constraints.test.ts`).
 */
export const USER_ROLES = ['admin', 'user'] as const;

/** A role a user can have: one of {@link USER_ROLES}. */
export type UserRole = (typeof USER_ROLES)[number];

/** The fields of a user the admin API checks a token against. */
export interface AdminUserRecord {
  readonly id: string;
  readonly username: string;
  readonly role: UserRole;
  /** The user's e-mail address: the page names a user without a username by it. */
  readonly email?: string | null;
}

/**
 * The port the auth middleware checks every verified token against
 * (`auth.users`), so a deleted or demoted user loses access at once even
 * while their token has not expired.
 */
export interface AdminUserLookup {
  /** The user with this id, or `null` when there is none. */
  findById(id: string): Promise<AdminUserRecord | null>;
}
