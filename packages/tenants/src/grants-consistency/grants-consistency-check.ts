/**
 * grants_consistency: each role grant against the resource it names and against its expiry.
 *
 * The five decisions (ConsistencyCheck's "for implementors"):
 *
 * 1. Direction. Forward, within the DB: grant → resource. `resource_id` has
 *    no foreign key (it names a drive, folder or file per `resource_type`),
 *    so nothing stops a grant from outliving its resource.
 * 2. Severity.
 *    - `dangling_grant` (an unexpired grant whose resource does not exist):
 *      `Reclaimable`. It grants nothing today, so no user sees a difference;
 *      it is waste, and a resource re-created with that id (an import, a
 *      restore) would silently inherit the access. Deleting the row is the
 *      whole repair.
 *    - `expired_grant_lingering` (a grant still present more than the margin,
 *      7 days by default, past `grant_cleanup`'s grace after its
 *      `expires_at`): `Drift`. An expired grant grants nothing; the finding
 *      means `grant_cleanup` is not running (disabled interval, failing
 *      runs), which is what an operator must fix. An expired grant is only
 *      ever this kind, never also `dangling_grant`: whether its resource
 *      exists no longer matters, and `grant_cleanup` deletes it either way.
 * 3. Cursor. Phase byte 1 + the 16-byte UUID of the last grant: a keyset walk
 *    on the primary key; each resource is one primary-key probe in the same
 *    statement.
 * 4. Grace. `dangling_grant`: 1 h on the grant's `created_at` from the run's
 *    `startedAt` (a share written just before its resource, or a resource
 *    deleted and its grants removed in a later transaction); `force` makes it
 *    0. `expired_grant_lingering` has no grace of its own: its threshold
 *    (`expires_at` + cleanup grace + margin, from `startedAt`) is the
 *    definition of the condition, so `force` does not move it.
 * 5. Batch. 1000 grants or 30 s (`singlePhaseScan` of `@oxicloud/consistency`),
 *    checkpoint + status poll between batches; only the anomalies and the
 *    last id leave Postgres; Pass 2 re-reads each anomalous grant and its
 *    resource before recording (a grant deleted meanwhile, or a resource
 *    that landed, is dropped).
 * 6. Closing (findings across runs). A `Completed` run walked every grant;
 *    a finding it did not report again, that pass 2 did not drop, and whose
 *    last report came from a run whose grace boundary is not later than this
 *    run's is `fixed`; a grant deleted (cleaned up) since fixes its findings.
 *    No kind has a magnitude.
 */
import {
  type CheckOptions,
  type CheckStore,
  type ConsistencyCheck,
  DEFAULT_GRACE_WINDOW_MS,
  effectiveGraceMs,
  graceBoundary,
  type Inconsistency,
  singlePhaseScan,
} from '@oxicloud/consistency';
import { type RunOutcome, uuidCursor } from '@oxicloud/recoverable';
import type { Logger } from '@oxicloud/scheduler';
import { DAY_MS } from '../env.js';
import { TenantsError } from '../errors.js';
import { GRANTS_CONSISTENCY_DEFAULTS } from './config.js';
import type { GrantAnomaly, GrantScan, GrantScanOptions } from './grant-scan.js';

/** Job name of the check. */
export const GRANTS_CONSISTENCY_CHECK_NAME = 'grants_consistency';
/** Finding kinds of grants_consistency. */
export const DANGLING_GRANT = 'dangling_grant';
export const EXPIRED_GRANT_LINGERING = 'expired_grant_lingering';

/** Options of {@link createGrantsConsistencyCheck}. */
export interface GrantsConsistencyCheckOptions {
  readonly scan: GrantScan;
  /** `grant_cleanup`'s grace past `expires_at` (`OXICLOUD_GRANT_CLEANUP_GRACE_SECONDS`). @defaultValue 24 h */
  readonly cleanupGraceMs?: number;
  /** How long past the cleanup grace an expired grant may linger. @defaultValue 7 days */
  readonly lingerMarginMs?: number;
  /** Grace on a grant's `created_at` for `dangling_grant`. @defaultValue 1 h */
  readonly graceWindowMs?: number;
  readonly logger?: Logger;
}

/** The one finding an anomalous grant stands for (lingering first: an expired grant is never dangling). */
export function grantFindings(a: GrantAnomaly): Inconsistency[] {
  const base = {
    subject_id: a.subjectId,
    resource_type: a.resourceType,
    resource_id: a.resourceId,
    role: a.role,
    expires_at: a.expiresAt?.toISOString() ?? null,
  };
  if (a.lingering) {
    return [
      {
        kind: EXPIRED_GRANT_LINGERING,
        severity: 'Drift',
        resourceId: a.grantId,
        detail: { ...base, resource_exists: a.resourceExists },
      },
    ];
  }
  if (!a.resourceExists) {
    return [{ kind: DANGLING_GRANT, severity: 'Reclaimable', resourceId: a.grantId, detail: base }];
  }
  return [];
}

function assertMs(name: string, value: number): void {
  if (!(Number.isSafeInteger(value) && value >= 0)) {
    throw new TenantsError(
      'INVALID_CONFIG',
      `grants_consistency ${name}=${value}: expected a whole number of ms >= 0`,
    );
  }
}

/**
 * The `grants_consistency` check over a {@link GrantScan}. Findings
 * (resource = grant id): `dangling_grant` (`Reclaimable`) and
 * `expired_grant_lingering` (`Drift`), detail `{ subject_id, resource_type,
 * resource_id, role, expires_at }`.
 */
export function createGrantsConsistencyCheck(options: GrantsConsistencyCheckOptions): ConsistencyCheck {
  const { scan, logger } = options;
  const graceMs = options.graceWindowMs ?? DEFAULT_GRACE_WINDOW_MS;
  const cleanupGraceMs = options.cleanupGraceMs ?? DAY_MS;
  const lingerMarginMs = options.lingerMarginMs ?? GRANTS_CONSISTENCY_DEFAULTS.lingerMarginDays * DAY_MS;
  assertMs('graceWindowMs', graceMs);
  assertMs('cleanupGraceMs', cleanupGraceMs);
  assertMs('lingerMarginMs', lingerMarginMs);
  const check: ConsistencyCheck = {
    name: GRANTS_CONSISTENCY_CHECK_NAME,
    subsystem: scan.subsystem(),
    order: 36,
    countMeaning:
      'findings this run found: grants on a resource that is gone, and expired grants grant_cleanup left behind',
    kinds: [
      {
        kind: DANGLING_GRANT,
        severity: 'Reclaimable',
        meaning: 'an unexpired role grant whose drive, folder or file is gone',
        repair: 'delete_dangling_grant: delete the grant (the audit row keeps it)',
      },
      {
        kind: EXPIRED_GRANT_LINGERING,
        severity: 'Drift',
        meaning:
          "a grant expired longer than grant_cleanup's grace plus the margin: grant_cleanup is not running",
        repair: 'delete_expired_grant: delete the grant, as grant_cleanup does',
      },
    ],
    graceWindowMs: () => graceMs,
    concurrentSafe: () => true,
    estimateTotal: () => scan.estimateRows(),
    runResumable(store: CheckStore, runOptions: CheckOptions, signal: AbortSignal): Promise<RunOutcome> {
      const scanOptions: GrantScanOptions = {
        now: store.startedAt,
        createdBefore: graceBoundary(store.startedAt, effectiveGraceMs(check, runOptions)),
        lingerBefore: graceBoundary(store.startedAt, cleanupGraceMs + lingerMarginMs),
      };
      return singlePhaseScan({
        name: GRANTS_CONSISTENCY_CHECK_NAME,
        store,
        options: runOptions,
        signal,
        logger,
        key: { codec: uuidCursor, bytes: 16 },
        fetch: (after, limit) => scan.scanGrants(after, limit, scanOptions),
        kinds: check.kinds.map((k) => k.kind),
        resourceOf: (a) => a.grantId,
        reverify: async (items) =>
          (
            await scan.reverifyGrants(
              items.map((a) => a.grantId),
              scanOptions,
            )
          ).flatMap(grantFindings),
      });
    },
  };
  return check;
}
