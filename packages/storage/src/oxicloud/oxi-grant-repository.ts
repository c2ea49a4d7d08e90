import type { DeletedGrant, GrantRepository } from '@oxicloud/tenants';
import { type Kysely, sql } from 'kysely';
import type { OxiCloudDatabase } from './database.js';

interface GrantRow {
  id: string;
  subject_id: string;
  resource_type: string;
  resource_id: string;
  role: string;
  expires_at: Date;
}

/**
 * {@link GrantRepository} on OxiCloud's `storage.role_grants`: what
 * OxiCloud's own `GrantCleanupService` deletes (fact sheet §6), nothing
 * more. One `DELETE … RETURNING` per batch over the oldest grants with
 * `expires_at IS NOT NULL AND expires_at < cutoff` (the job passes
 * `cutoff = now − grace`), `FOR UPDATE SKIP LOCKED`, so two cleaners (this
 * engine and OxiCloud's daemon) never delete the same row twice.
 *
 * Share links: deleting a share's last token grant fires OxiCloud's reverse
 * cascade (`trg_cleanup_share_on_role_grant_delete`), which deletes the
 * `storage.shares` row in the same statement. The repository leaves that to
 * the trigger: it never deletes shares itself and never re-inserts or
 * re-reads them, so the result is exactly what OxiCloud's daemon leaves.
 *
 * @example
 * ```ts
 * const job = createGrantCleanupJob({ repository: new OxiGrantRepository(db), config, logger });
 * ```
 */
export class OxiGrantRepository implements GrantRepository {
  readonly #db: Kysely<OxiCloudDatabase>;

  constructor(db: Kysely<OxiCloudDatabase>) {
    this.#db = db;
  }

  async deleteExpiredGrants(cutoff: Date, limit: number): Promise<DeletedGrant[]> {
    const { rows } = await sql<GrantRow>`
      DELETE FROM storage.role_grants WHERE id IN (
        SELECT id FROM storage.role_grants
         WHERE expires_at IS NOT NULL AND expires_at < ${cutoff}
         ORDER BY expires_at, id
         LIMIT ${limit}
           FOR UPDATE SKIP LOCKED)
      RETURNING id, subject_id, resource_type, resource_id, role::text AS role, expires_at`.execute(this.#db);
    return rows
      .map((r) => ({
        id: r.id,
        subjectId: r.subject_id,
        resourceType: r.resource_type,
        resourceId: r.resource_id,
        role: r.role,
        expiresAt: r.expires_at,
      }))
      .sort((a, b) => a.expiresAt.getTime() - b.expiresAt.getTime() || a.id.localeCompare(b.id));
  }
}
