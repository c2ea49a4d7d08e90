import type { StatefulAdapter } from '@oxicloud/consistency';
import type { ScanPage } from '../ports/scan-page.js';

/**
 * The resource types a grant can name: OxiCloud's six (`storage.role_grants.resource_type`);
 * the deprecated engine model has only the first three.
 */
export type GrantResourceType = 'drive' | 'folder' | 'file' | 'calendar' | 'address_book' | 'playlist';

/** A role grant that points at nothing, or that `grant_cleanup` should have deleted long ago. */
export interface GrantAnomaly {
  readonly grantId: string;
  /** The grantee: on OxiCloud's domain a user, a group or a share token (per its `subject_type`); on the engine model a user. */
  readonly subjectId: string;
  readonly resourceType: GrantResourceType;
  readonly resourceId: string;
  readonly role: string;
  /** When the grant was made (OxiCloud's `granted_at`; the engine model's `created_at`): the dangling grace runs from it. */
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  /** Whether the resource `resource_id` names (per `resource_type`) exists (on OxiCloud's domain, and the subject too). */
  readonly resourceExists: boolean;
  /** `expires_at` is at or before the scan's `lingerBefore`. */
  readonly lingering: boolean;
}

/** The boundaries of a grant scan (all from the run's `startedAt`, never the wall clock). */
export interface GrantScanOptions {
  /** The run's "now": a grant with `expires_at` at or before it grants nothing any more. */
  readonly now: Date;
  /** Only grants created at or before this instant can be dangling (grace). */
  readonly createdBefore: Date;
  /** A grant that expired at or before this instant is lingering (cleanup grace + margin before `now`). */
  readonly lingerBefore: Date;
}

/**
 * What `grants_consistency` reads: `storage.role_grants` walked by grant id,
 * each grant's resource looked up by primary key in the table its
 * `resource_type` names (`resource_id` has no foreign key). A state-owning
 * port: the adapter returns `grants_consistency` from `consistencyChecks()`.
 */
export interface GrantScan extends StatefulAdapter {
  /**
   * Up to `limit` grants with id > `afterId` in id order; the anomalies are
   * the unexpired grants whose resource is gone (old enough) and the grants
   * expired at or before `lingerBefore`.
   */
  scanGrants(
    afterId: string | null,
    limit: number,
    options: GrantScanOptions,
  ): Promise<ScanPage<GrantAnomaly>>;
  /** Pass 2: re-reads these grants and their resources now; returns those still anomalous. */
  reverifyGrants(grantIds: readonly string[], options: GrantScanOptions): Promise<GrantAnomaly[]>;
  /** Rows the walk will examine, from planner statistics; `null` when unknown. */
  estimateRows(): Promise<number | null>;
}
