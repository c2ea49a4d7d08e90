import type { BlobIndexScan } from '../storage-consistency/blob-index-scan.js';
import {
  ORPHAN_FILE_THUMBNAIL,
  ORPHAN_THUMBNAIL,
  ORPHAN_TRANSCODED_IMAGE,
} from '../storage-consistency/storage-consistency-check.js';
import type { DerivedFiles, ThumbnailStore } from '../storage-consistency/thumbnail-store.js';
import { bytes, type RepairAction, short, skipped } from './repair-action.js';
import {
  type ActionLine,
  changedSincePlan,
  lineBase,
  needsPerson,
  type RepairFinding,
} from './repair-line.js';

/** Options of {@link createThumbnailActions}: the store of OxiCloud's derived files and the index that says what exists. */
export interface ThumbnailActionsOptions {
  readonly thumbnails: ThumbnailStore;
  readonly index: Pick<BlobIndexScan, 'unknownContentHashes' | 'unknownFileIds'>;
}

/** What a line is about: the derived files of a content hash, or of a file id by family. */
type Owner = { readonly by: 'hash'; readonly id: string } | { readonly by: 'file'; readonly id: string };

const ownerOf = (kind: string, id: string): Owner =>
  kind === ORPHAN_THUMBNAIL ? { by: 'hash', id } : { by: 'file', id };

/**
 * `orphan_thumbnail`, `orphan_file_thumbnail` and `orphan_transcoded_image`
 * → remove the files: OxiCloud's thumbnails and transcoded images are
 * caches it makes again on demand (fact sheet §10), and these belong to
 * content no row names or to a file that no longer exists. Plan and apply
 * ask the index again whether the hash or the file exists (it may have come
 * back: an upload of the same content, a restore) and re-list the files;
 * apply removes exactly the planned files, and skips when the owner came
 * back or the files changed. There is no row to lock: a thumbnail OxiCloud
 * writes between the re-check and the removal is made again on its next
 * request (Regenerable, never user bytes).
 */
export function createThumbnailActions(options: ThumbnailActionsOptions): RepairAction {
  const { thumbnails, index } = options;

  /** The owner's derived files of the finding's family now, and whether the owner still exists. */
  async function current(
    kind: string,
    owner: Owner,
  ): Promise<{ exists: boolean; derived: DerivedFiles | null }> {
    if (owner.by === 'hash') {
      const unknown = (await index.unknownContentHashes?.([owner.id])) ?? [];
      const entry = await thumbnails.stat(owner.id);
      return { exists: !unknown.includes(owner.id), derived: entry };
    }
    const unknown = (await index.unknownFileIds?.([owner.id])) ?? [];
    const entry = await thumbnails.statByFileId(owner.id);
    const derived = kind === ORPHAN_FILE_THUMBNAIL ? entry?.externalThumbnails : entry?.transcoded;
    return { exists: !unknown.includes(owner.id), derived: derived ?? null };
  }

  const state = (d: DerivedFiles) => ({ files: [...d.files].sort(), bytes: d.bytes });

  return {
    kinds: [ORPHAN_THUMBNAIL, ORPHAN_FILE_THUMBNAIL, ORPHAN_TRANSCODED_IMAGE],
    async plan(finding: RepairFinding) {
      const owner = ownerOf(finding.kind, finding.resourceId);
      const resource = {
        type: owner.by === 'hash' ? 'thumbnail' : 'file_derivatives',
        id: finding.resourceId,
      };
      if (thumbnails.remove === undefined) {
        return needsPerson(finding, resource, 'the thumbnail store is read-only here');
      }
      const now = await current(finding.kind, owner);
      if (now.exists) {
        return needsPerson(
          finding,
          resource,
          owner.by === 'hash'
            ? 'a file, manifest or blob names this content again: its thumbnails are in use'
            : 'the file exists again: its derived files are in use',
        );
      }
      if (now.derived === null)
        return needsPerson(finding, resource, 'no such file is left: nothing to remove');
      const line: ActionLine = {
        type: 'action',
        ...lineBase(finding),
        action: 'remove_orphan_derived_files',
        resource,
        summary: `remove ${now.derived.files.length} derived file(s) of ${owner.by === 'hash' ? 'content' : 'file'} ${short(finding.resourceId)} (${bytes(now.derived.bytes)} bytes)`,
        before: state(now.derived),
        after: { files: [], bytes: 0 },
        derived: [],
      };
      return line;
    },
    async apply(line) {
      if (thumbnails.remove === undefined) return skipped('the thumbnail store is read-only here');
      const owner = ownerOf(line.fingerprint.kind, line.resource.id);
      const now = await current(line.fingerprint.kind, owner);
      if (now.exists)
        return skipped(
          `${owner.by === 'hash' ? 'the content' : 'the file'} ${line.resource.id} exists again`,
        );
      if (now.derived === null) return skipped('no such file is left');
      const changed = changedSincePlan(line.before, state(now.derived));
      if (changed !== null) return skipped(`the derived files of ${line.resource.id} ${changed}`);
      const removed = await thumbnails.remove(now.derived.files);
      return { status: 'applied', before: state(now.derived), after: { files: [], bytes: 0, removed } };
    },
    async verify(line) {
      const owner = ownerOf(line.fingerprint.kind, line.resource.id);
      const now = await current(line.fingerprint.kind, owner);
      return now.exists || now.derived === null
        ? null
        : `${now.derived.files.length} derived file(s) are still there`;
    },
  };
}
