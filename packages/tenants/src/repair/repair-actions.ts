import type { RepairStore, RepairTx } from '../ports/repair-store.js';
import { type BlobActionsOptions, createBlobActions } from './blob-actions.js';
import { recountBlobRow } from './blob-counter-action.js';
import { setFileSizeFromBlob } from './blob-size-action.js';
import { recomputeDerivedColumn } from './derived-column-action.js';
import { deleteStaleFace } from './face-actions.js';
import { recomputeFolderPath } from './folder-path-action.js';
import { deleteGrant } from './grant-actions.js';
import { raiseManifestRefCount } from './manifest-counter-action.js';
import { needsPersonKinds } from './needs-person-kinds.js';
import { deleteDanglingReference } from './reference-actions.js';
import type { RepairAction } from './repair-action.js';
import {
  type ActionLine,
  type AlreadyConsistent,
  needsPerson,
  type RepairFinding,
  type RepairLine,
  type RepairState,
} from './repair-line.js';
import { createRestoreBytesAction, type RestoreBytesOptions } from './restore-bytes-action.js';
import { createThumbnailActions, type ThumbnailActionsOptions } from './thumbnail-actions.js';
import { resolveTrashedParent } from './trashed-parent-action.js';
import { recomputeDriveUsage, recomputeUserUsage } from './usage-actions.js';

/** Options of {@link createRepairActions}. */
export interface RepairActionsOptions {
  readonly store: RepairStore;
  /** The blob actions (orphan_blob, missing_blob); without them those kinds need a person. */
  readonly blobs?: Omit<BlobActionsOptions, 'store'>;
  /**
   * Restoring bytes from the other backend (`missing_blob_bytes`,
   * `blob_hash_mismatch`); without it those kinds need a person.
   */
  readonly restore?: RestoreBytesOptions;
  /**
   * Removing OxiCloud's thumbnails and transcoded images of content or files
   * that no longer exist; without it those kinds need a person.
   */
  readonly thumbnails?: ThumbnailActionsOptions;
}

/** What applying one line did, after its transaction and any post-commit step. */
export type AppliedLine =
  | { readonly status: 'applied'; readonly before: RepairState; readonly after: RepairState }
  | AlreadyConsistent
  | { readonly status: 'skipped'; readonly reason: string };

/** The actions by finding kind, and the two steps over a {@link RepairStore}. */
export interface RepairActions {
  /** The finding kinds some action handles. */
  readonly kinds: readonly string[];
  /** The line for one finding, read in a read-only transaction. */
  plan(finding: RepairFinding): Promise<RepairLine>;
  /**
   * Applies one line inside `tx` (the caller's transaction, where it writes
   * its audit row too). For an action with `verifyFirst` (usage and blob
   * counters), first re-checks the resource with the predicate of the check
   * that found it: when that passes already, nothing is written and the
   * outcome is `already_consistent`. Returns the outcome; `afterCommit`
   * must run after `tx` commits.
   */
  applyIn(line: ActionLine, tx: RepairTx): ReturnType<RepairAction['apply']>;
  /** `applyIn` in a transaction of its own, then the post-commit step. */
  apply(line: ActionLine): Promise<AppliedLine>;
  /** Re-checks the line's resource (read-only): `null` when it passes, else why not. */
  verify(line: ActionLine): Promise<string | null>;
}

/**
 * The repair actions over `store`: drive and user usage drift, folder
 * path/lpath, file size from blob, live rows under a trashed parent,
 * (with `blobs`) orphan and missing blob rows, (with `restore`) bytes
 * restored from the other backend; then blob counters, dangling and
 * lingering grants, and the issue 19 kinds that always need a person.
 */
export function createRepairActions(options: RepairActionsOptions): RepairActions {
  const { store } = options;
  const list: RepairAction[] = [
    recomputeDriveUsage,
    recomputeUserUsage,
    recomputeFolderPath,
    setFileSizeFromBlob,
    resolveTrashedParent,
    recountBlobRow,
    raiseManifestRefCount,
    recomputeDerivedColumn,
    deleteGrant,
    deleteDanglingReference,
    deleteStaleFace,
    needsPersonKinds,
  ];
  if (options.blobs) list.push(createBlobActions({ ...options.blobs, store }));
  if (options.restore) list.push(createRestoreBytesAction(options.restore));
  if (options.thumbnails) list.push(createThumbnailActions(options.thumbnails));
  const byKind = new Map<string, RepairAction>();
  for (const action of list) for (const kind of action.kinds) byKind.set(kind, action);

  const actionFor = (kind: string) => byKind.get(kind);

  async function applyIn(line: ActionLine, tx: RepairTx) {
    const action = actionFor(line.fingerprint.kind);
    if (action === undefined)
      return { status: 'skipped' as const, reason: `no repair action for kind ${line.fingerprint.kind}` };
    if (action.verifyFirst === true && (await action.verify(line, tx)) === null) {
      return { status: 'already_consistent' as const };
    }
    return action.apply(line, tx);
  }

  return {
    kinds: [...byKind.keys()].sort(),
    async plan(finding) {
      const action = actionFor(finding.kind);
      if (action === undefined) {
        return needsPerson(
          finding,
          { type: 'unknown', id: finding.resourceId },
          `no safe repair action for ${finding.checkName} ${finding.kind}`,
        );
      }
      return store.read((tx) => action.plan(finding, tx));
    },
    applyIn,
    async verify(line) {
      const action = actionFor(line.fingerprint.kind);
      if (action === undefined) return `no repair action for kind ${line.fingerprint.kind}`;
      return store.read((tx) => action.verify(line, tx));
    },
    async apply(line) {
      const outcome = await store.write((tx) => applyIn(line, tx));
      if (outcome.status !== 'applied') return outcome;
      if (outcome.afterCommit === undefined) {
        return { status: 'applied', before: outcome.before, after: outcome.after };
      }
      const finished = await outcome.afterCommit();
      return { status: 'applied', before: outcome.before, after: { ...outcome.after, ...finished } };
    },
  };
}

/**
 * The line with the operator's choice made: its `after` and `derived` become
 * the chosen alternative's. Returns `null` when the line offers no such choice.
 */
export function chooseLine(line: ActionLine, choiceId: string): ActionLine | null {
  const chosen = line.choices?.find((c) => c.id === choiceId);
  if (chosen === undefined) return null;
  return { ...line, choice: chosen.id, after: chosen.after, derived: chosen.derived };
}
