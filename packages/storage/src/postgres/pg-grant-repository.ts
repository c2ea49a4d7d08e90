import type { DeletedGrant, GrantRepository } from '@oxicloud/tenants';
import { type Kysely, sql } from 'kysely';
import type { StorageDatabase } from './database.js';

interface GrantRow {
  id: string;
  subject_id: string;
  resource_type: string;
  resource_id: string;
  role: string;
  expires_at: Date;
}

/**
 * {@link GrantRepository} on `storage.role_grants`: one `DELETE … RETURNING`
 * per batch over the oldest expired grants (`FOR UPDATE SKIP LOCKED`, so
 * two cleaners never delete the same row twice).
 */
export class PgGrantRepository implements GrantRepository {
  readonly #db: Kysely<StorageDatabase>;

  constructor(db: Kysely<StorageDatabase>) {
    this.#db = db;
  }

  async deleteExpiredGrants(cutoff: Date, limit: number): Promise<DeletedGrant[]> {
    const { rows } = await sql<GrantRow>`
      DELETE FROM storage.role_grants WHERE id IN (
        SELECT id FROM storage.role_grants
         WHERE expires_at < ${cutoff}
         ORDER BY expires_at, id
         LIMIT ${limit}
           FOR UPDATE SKIP LOCKED)
      RETURNING id, subject_id, resource_type, resource_id, role, expires_at`.execute(this.#db);
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
