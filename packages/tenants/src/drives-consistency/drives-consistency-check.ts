/**
 * drives_consistency: the usage counters against the rows they count.
 *
 * The five decisions (ConsistencyCheck's "for implementors"):
 *
 * 1. Direction. Forward only, within the DB: there is no storage side.
 *    Three phases: (1) each drive's `used_bytes` against `SUM(size)` of its
 *    files (the adapter's rule: live files on OxiCloud's domain); (2) each
 *    user's envelope `auth.users.storage_used_bytes` against
 *    `SUM(used_bytes)` of their drives; (3) each drive's shape: its root
 *    folder and its owner grants (fact sheet §12 items 5 and 8).
 * 2. Severity. The usage kinds are `Drift`: an accounting mismatch, no bytes
 *    are lost and nothing is unreachable; only quota enforcement and the
 *    usage display are off, and storage_reconcile repairs them.
 *    `drive_without_owner` and `drive_root_mismatch` are `DataLoss`: nobody
 *    can open a drive no one owns, and a drive whose root is missing, not a
 *    root, another drive's or shared shows its user no tree or someone
 *    else's. `personal_drive_owner_mismatch` is `Drift`: the drive is
 *    reachable, but who it belongs to is ambiguous (two user owners, or a
 *    default user who is not its owner).
 * 3. Cursor. Phase byte + 16-byte UUID of the last drive (phases 1, 3) or
 *    user (phase 2); every walk is a keyset walk on the primary key.
 * 4. Grace. 0 (none): a counter and the sum it should equal are read by one
 *    statement, in one snapshot, so there are no "young rows" to exclude.
 *    Writers that update the counter in a separate transaction are covered by
 *    Pass 2, which re-reads each drifting row right before recording it.
 * 5. Batch. 1000 rows or 30 s (the shared `runBatches` driver), checkpoint +
 *    status poll between batches; findings idempotent on (run, kind, id).
 * 6. Closing (findings across runs). A `Completed` run walked every drive and
 *    every user with no grace, so a drift it did not report again (and pass 2
 *    did not drop) is `fixed`, and so is one whose drive or user was deleted.
 *    Magnitude of both kinds: the absolute byte delta `|recorded − actual|`.
 */
import {
  type CheckOptions,
  type CheckStore,
  CONSISTENCY_LOG_TARGET,
  type ConsistencyCheck,
  type Inconsistency,
  twoPass,
} from '@oxicloud/consistency';
import {
  decodePhaseCursor,
  encodePhaseCursor,
  type RunOutcome,
  runBatches,
  type ScanBatch,
  scanBatch,
  uuidCursor,
} from '@oxicloud/recoverable';
import type { Logger } from '@oxicloud/scheduler';
import type {
  DriveShapeAnomaly,
  DriveUsageDrift,
  DriveUsageScan,
  UserUsageDrift,
} from './drive-usage-scan.js';

/** Job name of the check. */
export const DRIVES_CONSISTENCY_CHECK_NAME = 'drives_consistency';
/** Finding kinds of drives_consistency. */
export const DRIVE_USED_BYTES_DRIFT = 'drive_used_bytes_drift';
export const USER_USED_BYTES_DRIFT = 'user_used_bytes_drift';
export const DRIVE_WITHOUT_OWNER = 'drive_without_owner';
export const DRIVE_ROOT_MISMATCH = 'drive_root_mismatch';
export const PERSONAL_DRIVE_OWNER_MISMATCH = 'personal_drive_owner_mismatch';

const PHASE_DRIVES = 1;
const PHASE_USERS = 2;
const PHASE_SHAPE = 3;
const KEY_LENGTHS = { [PHASE_DRIVES]: 16, [PHASE_USERS]: 16, [PHASE_SHAPE]: 16 };

/** Options of {@link createDrivesConsistencyCheck}. */
export interface DrivesConsistencyCheckOptions {
  readonly scan: DriveUsageScan;
  /** Debug line per batch. */
  readonly logger?: Logger;
}

type DriveItem = { readonly phase: typeof PHASE_DRIVES; readonly drift: DriveUsageDrift };
type UserItem = { readonly phase: typeof PHASE_USERS; readonly drift: UserUsageDrift };
type ShapeItem = { readonly phase: typeof PHASE_SHAPE; readonly anomaly: DriveShapeAnomaly };
type Item = DriveItem | UserItem | ShapeItem;

function driveFinding(d: DriveUsageDrift): Inconsistency {
  return {
    kind: DRIVE_USED_BYTES_DRIFT,
    severity: 'Drift',
    resourceId: d.driveId,
    detail: {
      recorded: d.recordedBytes,
      actual: d.actualBytes,
      delta: d.recordedBytes - d.actualBytes,
      owner_id: d.ownerId,
    },
    magnitude: Math.abs(d.recordedBytes - d.actualBytes),
  };
}

function userFinding(u: UserUsageDrift): Inconsistency {
  return {
    kind: USER_USED_BYTES_DRIFT,
    severity: 'Drift',
    resourceId: u.userId,
    detail: {
      recorded: u.recordedBytes,
      actual: u.actualBytes,
      delta: u.recordedBytes - u.actualBytes,
      drive_count: u.driveCount,
    },
    magnitude: Math.abs(u.recordedBytes - u.actualBytes),
  };
}

/** The findings a drive of a broken shape stands for: no owner, or its owner problems; and its root. */
export function driveShapeFindings(a: DriveShapeAnomaly): Inconsistency[] {
  const out: Inconsistency[] = [];
  const common = {
    drive_kind: a.driveKind,
    default_for_user: a.defaultForUser,
    root_folder_id: a.rootFolderId,
  };
  if (a.ownerGrants === 0) {
    out.push({ kind: DRIVE_WITHOUT_OWNER, severity: 'DataLoss', resourceId: a.driveId, detail: common });
  } else if (a.ownerProblems.length > 0) {
    out.push({
      kind: PERSONAL_DRIVE_OWNER_MISMATCH,
      severity: 'Drift',
      resourceId: a.driveId,
      detail: { ...common, problems: [...a.ownerProblems], user_owner_grants: a.userOwnerGrants },
    });
  }
  if (a.rootProblems.length > 0) {
    out.push({
      kind: DRIVE_ROOT_MISMATCH,
      severity: 'DataLoss',
      resourceId: a.driveId,
      detail: { ...common, problems: [...a.rootProblems] },
    });
  }
  return out;
}

/**
 * The `drives_consistency` check over a {@link DriveUsageScan}. Findings:
 * `drive_used_bytes_drift` (resource = drive id) and `user_used_bytes_drift`
 * (resource = user id), both `Drift`, detail `{ recorded, actual, delta }`
 * (`delta = recorded − actual`).
 */
export function createDrivesConsistencyCheck(options: DrivesConsistencyCheckOptions): ConsistencyCheck {
  const { scan, logger } = options;

  async function fetchBatch(cursor: Uint8Array | null, limit: number): Promise<ScanBatch<Item>> {
    const at =
      cursor === null
        ? { phase: PHASE_DRIVES, key: new Uint8Array() }
        : decodePhaseCursor(cursor, KEY_LENGTHS);
    const after = at.key.length === 0 ? null : uuidCursor.decode(at.key);
    if (at.phase === PHASE_DRIVES) {
      const page = await scan.scanDriveUsage(after, limit);
      if (page.lastKey === null) {
        return { scanned: 0, items: [], cursor: encodePhaseCursor(PHASE_USERS), done: false };
      }
      return {
        scanned: page.scanned,
        items: page.anomalies.map((drift) => ({ phase: PHASE_DRIVES, drift })),
        // A short page is the last one: go straight to the users phase.
        cursor:
          page.scanned < limit
            ? encodePhaseCursor(PHASE_USERS)
            : encodePhaseCursor(PHASE_DRIVES, uuidCursor.encode(page.lastKey)),
        done: false,
      };
    }
    if (at.phase === PHASE_USERS) {
      const page = await scan.scanUserUsage(after, limit);
      const last = page.lastKey === null || page.scanned < limit;
      return {
        scanned: page.scanned,
        items: page.anomalies.map((drift) => ({ phase: PHASE_USERS, drift })),
        // The last page of users: the drive shapes next.
        cursor:
          last || page.lastKey === null
            ? encodePhaseCursor(PHASE_SHAPE)
            : encodePhaseCursor(PHASE_USERS, uuidCursor.encode(page.lastKey)),
        done: false,
      };
    }
    const page = await scan.scanDriveShape(after, limit);
    return {
      scanned: page.scanned,
      items: page.anomalies.map((anomaly) => ({ phase: PHASE_SHAPE, anomaly })),
      cursor:
        page.lastKey === null
          ? encodePhaseCursor(PHASE_SHAPE, at.key)
          : encodePhaseCursor(PHASE_SHAPE, uuidCursor.encode(page.lastKey)),
      done: page.lastKey === null || page.scanned < limit,
    };
  }

  async function processBatch(store: CheckStore, items: readonly Item[]) {
    const drives = items
      .filter((i): i is DriveItem => i.phase === PHASE_DRIVES)
      .map((i) => driveFinding(i.drift));
    const users = items
      .filter((i): i is UserItem => i.phase === PHASE_USERS)
      .map((i) => userFinding(i.drift));
    const shapes = items
      .filter((i): i is ShapeItem => i.phase === PHASE_SHAPE)
      .flatMap((i) => driveShapeFindings(i.anomaly));
    if (drives.length > 0) {
      return twoPass(store, drives, async (cs) =>
        (await scan.reverifyDriveUsage(cs.map((c) => c.resourceId))).map(driveFinding),
      );
    }
    if (shapes.length > 0) {
      return twoPass(store, shapes, async (cs) =>
        (await scan.reverifyDriveShape([...new Set(cs.map((c) => c.resourceId))])).flatMap(
          driveShapeFindings,
        ),
      );
    }
    return twoPass(store, users, async (cs) =>
      (await scan.reverifyUserUsage(cs.map((c) => c.resourceId))).map(userFinding),
    );
  }

  return {
    name: DRIVES_CONSISTENCY_CHECK_NAME,
    subsystem: scan.subsystem(),
    order: 10,
    countMeaning:
      'findings this run found: drives and users whose stored used bytes drifted from their files, and drives of a broken shape',
    kinds: [
      {
        kind: DRIVE_USED_BYTES_DRIFT,
        severity: 'Drift',
        meaning: "the drive's used_bytes differs from the sum of its files' sizes (trashed included)",
        magnitude: 'bytes',
        repair:
          "recompute_drive_used_bytes: used_bytes := the sum of its files; the owner's envelope moves by the delta",
      },
      {
        kind: USER_USED_BYTES_DRIFT,
        severity: 'Drift',
        meaning: "the user's storage_used_bytes differs from the sum of their drives' used_bytes",
        magnitude: 'bytes',
        repair: 'recompute_user_used_bytes: the envelope := the sum of the drives',
      },
      {
        kind: DRIVE_WITHOUT_OWNER,
        severity: 'DataLoss',
        meaning: 'no owner grant in force names the drive: nobody can open it (fact sheet §12 item 8)',
        repair: null,
      },
      {
        kind: DRIVE_ROOT_MISMATCH,
        severity: 'DataLoss',
        meaning:
          "the drive's root folder is unset, missing, not a root, another drive's, or shared with another drive " +
          '(detail.problems; §12 item 5)',
        repair: null,
      },
      {
        kind: PERSONAL_DRIVE_OWNER_MISMATCH,
        severity: 'Drift',
        meaning:
          'a personal drive without exactly one user owner grant, or whose default_for_user is not that owner ' +
          '(detail.problems; §12 item 8)',
        repair: null,
      },
    ],
    graceWindowMs: () => 0,
    concurrentSafe: () => true,
    estimateTotal: () => scan.estimateRows(),
    runResumable(store: CheckStore, runOptions: CheckOptions, signal: AbortSignal): Promise<RunOutcome> {
      return runBatches({
        logTarget: CONSISTENCY_LOG_TARGET,
        store,
        signal,
        name: DRIVES_CONSISTENCY_CHECK_NAME,
        logger,
        batchSize: runOptions.batchSize,
        throttleMs: runOptions.throttleMs,
        batch: scanBatch(fetchBatch, (items) => processBatch(store, items)),
      });
    },
  };
}
