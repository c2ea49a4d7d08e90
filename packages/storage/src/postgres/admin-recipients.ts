import { StorageError } from '../storage-error.js';
import type { PgQueryable } from './users-repository.js';

/**
 * The e-mail addresses of every admin in `auth.users`, read at each call (a
 * new admin receives the next alert without a restart). Satisfies the
 * `AdminRecipients` port of @oxicloud/alerts structurally.
 *
 * @example
 * ```ts
 * const recipients = new PgAdminRecipients(pool);
 * await recipients.adminEmails(); // ['ops@example.org', …]
 * ```
 */
export class PgAdminRecipients {
  constructor(private readonly db: PgQueryable) {}

  /**
   * Distinct, non-empty addresses of users with `role = 'admin'`, sorted.
   *
   * @throws StorageError `BACKEND_ERROR` when the query fails (the pg error is the `cause`).
   */
  async adminEmails(): Promise<string[]> {
    try {
      const { rows } = await this.db.query(
        `SELECT DISTINCT btrim(email) AS email
           FROM auth.users
          WHERE role = 'admin' AND email IS NOT NULL AND btrim(email) <> ''
          ORDER BY 1`,
      );
      return rows.map((row) => String(row['email']));
    } catch (cause) {
      throw new StorageError('BACKEND_ERROR', 'could not read the admin e-mail addresses from auth.users', {
        cause,
      });
    }
  }
}
