import type { ConsistencyCheck } from './consistency-check.js';

/**
 * Marker + registration contract for any adapter that persists state OUTSIDE
 * process memory: blobs on disk or S3, database tables, on-disk caches.
 *
 * It is a SUPERTYPE of every state-owning port (`interface BlobStorage
 * extends StatefulAdapter`, the storage repositories likewise), which means:
 * NO NEW ADAPTER COMPILES without declaring its consistency contract. The
 * compiler is the enforcement; this comment is the education.
 *
 * # For implementors adding a new stateful adapter
 *
 * You cannot skip this. If you are reading this because your class does not
 * compile, work through:
 *
 * 1. **Am I actually stateful?** State means bytes or rows outside process
 *    memory that can desync from other subsystems. Config, session caches
 *    and derived indexes are NOT stateful here (they can be dropped and
 *    rebuilt). If you are not stateful, your port should not extend
 *    `StatefulAdapter` either, so this error means the port's author already
 *    decided you were.
 *
 * 2. **What are the DIRECTIONS of drift I can detect?** Almost every
 *    stateful adapter has both: backward (my storage → the DB that
 *    references it): orphans; forward (the DB → my storage): missing.
 *    Return one check that covers both by sequencing phases, or two checks
 *    (one per direction). The former is easier to operate.
 *
 * 3. **What is the SEVERITY of each finding?** See `Severity`: missing
 *    user-uploaded data is `DataLoss`; missing server-derived data is
 *    `Regenerable`; orphan bytes are `Reclaimable`; accounting drift is `Drift`.
 *
 * 4. **What CURSOR fits my walk?** Content-addressed → the hash; UUID-keyed
 *    → the UUID; path-keyed → the path bytes. It is opaque bytes to the
 *    framework: decode it inside your check.
 *
 * See `storage_consistency` in `@oxicloud/tenants` for the canonical check.
 *
 * @example
 * ```ts
 * class MyBlobStore implements BlobStorage {
 *   subsystem() { return 'blobs'; }
 *   consistencyChecks() { return [this.storageCheck]; }
 *   // …the BlobStorage methods
 * }
 * ```
 */
export interface StatefulAdapter {
  /**
   * Subsystem slug, lowercase snake_case, unique per adapter: `blobs`,
   * `folder_tree`, `used_bytes`, `files`.
   */
  subsystem(): string;
  /**
   * REQUIRED, no default. Every consistency check this adapter contributes;
   * most contribute one.
   *
   * Returning `[]` is a red flag. If your adapter has state but no check,
   * either your state is fully covered by another adapter's check (say
   * exactly WHERE in a comment on this method), or you have not written the
   * check yet: return `[]` with a `TODO(consistency): add <name> check`
   * comment. Reviewers grep `TODO(consistency)` and ask when it lands.
   */
  consistencyChecks(): readonly ConsistencyCheck[];
}
