/** A role grant removed by the `grant_cleanup` tenant. */
export interface DeletedGrant {
  readonly id: string;
  readonly subjectId: string;
  readonly resourceType: string;
  readonly resourceId: string;
  readonly role: string;
  readonly expiresAt: Date;
}

/** The role grants the `grant_cleanup` tenant deletes. */
export interface GrantRepository {
  /**
   * Deletes up to `limit` grants with `expires_at < cutoff` (oldest first)
   * in one statement and returns them; grants without `expires_at` never expire.
   */
  deleteExpiredGrants(cutoff: Date, limit: number): Promise<DeletedGrant[]>;
}
