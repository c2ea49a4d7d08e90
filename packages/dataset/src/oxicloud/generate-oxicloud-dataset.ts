import { readsMediaAtRawPath } from '@oxicloud/storage';
import type { BlobStorage } from '@oxicloud/tenants';
import type pg from 'pg';
import type { DatasetLogger } from '../dataset-logger.js';
import { DatasetError, isDatasetError } from '../errors.js';
import { rows, type SqlClient } from '../sql-client.js';
import { insertContentRows, writeContentBytes } from './content-writer.js';
import { insertFaces } from './faces-writer.js';
import {
  injectOxiCloudFaults,
  type OxiCloudFaultRecord,
  type OxiCloudStorageAction,
} from './inject-faults.js';
import { insertItemReferences } from './item-references-writer.js';
import { insertAudioMetadata } from './media-metadata-writer.js';
import {
  type OxiCloudDatasetOptions,
  type ResolvedOxiCloudDatasetOptions,
  resolveOxiCloudDatasetOptions,
} from './options.js';
import { type OxiCloudDatasetPlan, oxiUsernamePrefix, planOxiCloudDataset } from './plan.js';
import type {
  OxiCloudDatasetCounts,
  OxiCloudDatasetPhase,
  OxiCloudDatasetProgress,
  OxiCloudDatasetReport,
} from './report.js';
import { writeFileIdFiles, writeFileIdThumbnails, writeThumbnails } from './thumbnails.js';
import { insertFiles, insertFolders } from './tree-writer.js';
import {
  createScratchTables,
  insertDrives,
  insertMemberGrants,
  insertUsersAndGroups,
  recomputeUsage,
} from './users-drives-writer.js';

/** Input of {@link generateOxiCloudDataset}. */
export interface GenerateOxiCloudDatasetInput {
  /** A database with OxiCloud's storage domain (`migrations/oxicloud-domain/`). One connection is used. */
  readonly pool: pg.Pool;
  /** Where the chunk and legacy blob bytes go: any `BlobStorage` (local, S3, encrypting or not). */
  readonly blobs: BlobStorage;
  readonly options: OxiCloudDatasetOptions;
  /**
   * OxiCloud's storage root (`OXICLOUD_STORAGE_PATH`): the image files'
   * thumbnails are written under `<storageRoot>/.thumbnails/`. Without it no
   * thumbnails are written (and `orphan_thumbnail` cannot be injected).
   */
  readonly storageRoot?: string;
  /** Sets a stored blob's modification time (local disk only), so `orphan_blob_on_disk` is older than a grace window. */
  readonly backdateBlob?: (hash: string, modifiedAt: Date) => Promise<void>;
  readonly logger?: DatasetLogger;
  readonly onProgress?: (progress: OxiCloudDatasetProgress) => void;
}

const TARGET = 'oxicloud::dataset';
const THIRTY_DAYS = 30 * 86_400;

/**
 * Generates a dataset shaped as OxiCloud's own upload path leaves its
 * database and blob store (OXICLOUD.md §2–§7): users (admins, and external
 * users with no drive), subject groups with members, a default personal
 * drive per internal user and shared drives, each created with the
 * four-write and its owner grants, nested folders, and files of every
 * content kind (multi-chunk with FastCDC-sized chunks, one-chunk, empty,
 * legacy whole-file blobs), deduplicated across files and sharing chunks,
 * with trash as OxiCloud trashes (some older than 30 days), thumbnails and
 * a few faces for the images, and the faults asked for.
 *
 * On the clean part every §12 invariant 1–20 holds: manifest `ref_count` =
 * its files rows (trashed included); chunk `ref_count` = the manifests
 * listing it; legacy `ref_count` = its files rows; `orphaned_at` NULL;
 * `drives.used_bytes` = Σ live files; `users.storage_used_bytes` = Σ the
 * personal drives the user owns; every blob row has its bytes and every
 * object a row. Ids are random UUIDv4 from the database; the same options
 * and seed give the same names, paths, sizes, hashes and fault targets.
 *
 * Bytes are written first (each distinct chunk once, `writeConcurrency` at
 * a time), then every row in ONE transaction with multi-row INSERTs of
 * `rowsPerStatement` rows, then the faults' byte changes and the
 * thumbnails.
 *
 * @throws DatasetError `INVALID_OPTIONS` before anything is written; `ALREADY_SEEDED`;
 *   `FAULT_NOT_APPLICABLE` (rows rolled back, bytes removed); `GENERATION_FAILED` with the cause.
 * @example
 * ```ts
 * import { LocalFsBlobStorage } from '@oxicloud/storage';
 * import { describeOxiCloudDatasetReport, generateOxiCloudDataset } from '@oxicloud/dataset';
 * const report = await generateOxiCloudDataset({
 *   pool,
 *   blobs: new LocalFsBlobStorage({ root: './storage/.blobs' }),
 *   storageRoot: './storage',
 *   options: { users: 50, filesPerDrive: 40, faults: ['missing_manifest'] },
 * });
 * console.log(describeOxiCloudDatasetReport(report));
 * ```
 */
export async function generateOxiCloudDataset(
  input: GenerateOxiCloudDatasetInput,
): Promise<OxiCloudDatasetReport> {
  const options = resolveOxiCloudDatasetOptions(input.options);
  const started = Date.now();
  const phaseMs: Partial<Record<OxiCloudDatasetPhase, number>> = {};
  let phaseStarted = started;
  let current: OxiCloudDatasetPhase = 'plan';
  const progress = (phase: OxiCloudDatasetPhase, done: number, total: number): void => {
    if (phase !== current) {
      phaseMs[current] = Date.now() - phaseStarted;
      input.logger?.info(
        { target: TARGET, event: 'dataset.phase', phase: current, ms: phaseMs[current] },
        `oxicloud dataset phase ${current} done`,
      );
      current = phase;
      phaseStarted = Date.now();
    }
    input.onProgress?.({ phase, done, total, elapsedMs: Date.now() - started });
  };
  const prefix = oxiUsernamePrefix(options.seed);
  const per = options.rowsPerStatement;

  const client = await input.pool.connect();
  const written: string[] = [];
  try {
    const first = `${prefix}u000001`;
    if ((await rows(client, 'SELECT 1 FROM auth.users WHERE username = $1', [first])).length > 0) {
      throw new DatasetError(
        'ALREADY_SEEDED',
        `the database already holds an OxiCloud dataset with seed ${options.seed} (user ${first} exists): ` +
          'use another seed or a fresh database',
      );
    }
    progress('plan', 0, 1);
    const plan = planOxiCloudDataset(options);
    progress('plan', 1, 1);

    let content: Awaited<ReturnType<typeof writeContentBytes>>;
    let faults: OxiCloudFaultRecord[] = [];
    let actions: OxiCloudStorageAction[] = [];
    let rowStats: Awaited<ReturnType<typeof insertContentRows>>;
    let memberGrants: number;
    let shares: number;
    let faces: number;
    let audioMetadata: number;
    try {
      content = await writeContentBytes(plan, input.blobs, options.writeConcurrency, written, (done) =>
        progress('blob_bytes', done, plan.contents.length),
      );
      await client.query('BEGIN');
      try {
        await client.query('SET LOCAL synchronous_commit = off');
        await createScratchTables(client);
        progress('users', 0, plan.users.length);
        const { userIds, groupIds } = await insertUsersAndGroups(client, plan, per);
        progress('drives', 0, plan.drives.length);
        const { driveIds, rootIds } = await insertDrives(client, options, plan, { userIds, groupIds }, per);
        const folderId = await insertFolders(client, plan, { userIds, driveIds, rootIds }, per, (done) =>
          progress(
            'folders',
            done,
            plan.drives.reduce((s, d) => s + d.folders.length - 1, 0),
          ),
        );
        memberGrants = await insertMemberGrants(client, plan, userIds, driveIds, folderId);
        await insertFiles(client, plan, content.digests, { userIds, driveIds, folderId }, per, (done) =>
          progress('files', done, plan.files.length),
        );
        progress('content_rows', 0, 1);
        rowStats = await insertContentRows(client, plan, content.digests, per);
        progress('usage', 0, 1);
        await recomputeUsage(client);
        shares = await insertItemReferences(client);
        faces = await insertFaces(client);
        audioMetadata = await insertAudioMetadata(client, readsMediaAtRawPath(input.blobs));
        progress('faults', 0, options.faults.length);
        ({ records: faults, storageActions: actions } = await injectOxiCloudFaults({
          client,
          options,
          hasStorageRoot: input.storageRoot !== undefined,
          readsRawMedia: readsMediaAtRawPath(input.blobs),
          onFault: (done) => progress('faults', done, options.faults.length),
        }));
        progress('commit', 0, 1);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    } catch (err) {
      // Nothing half-written: the bytes this call put that no row describes are removed again.
      await removeBytesWithoutRows(client, input.blobs, written).catch(() => undefined);
      throw err;
    }

    progress('after_commit', 0, actions.length);
    const imageHashes = content.digests
      .filter((d) => {
        const c = plan.contents[d.contentNo];
        return c?.media === 'image' && c.kind !== 'empty';
      })
      .map((d) => d.fileHash);
    let thumbnails = 0;
    if (input.storageRoot !== undefined) {
      thumbnails = await writeThumbnails(input.storageRoot, options.seed, imageHashes);
      // A few files keyed by file id, for files that exist: not counted in `thumbnails` (three per image).
      await writeFileIdThumbnails(
        input.storageRoot,
        options.seed,
        client,
        imageHashes,
        new Date(Date.now() - 3 * 86_400_000),
      );
      const orphans = actions.flatMap((a) => (a.type === 'thumbnail' ? [a.hash] : []));
      // Made days ago, as the fault's other resources are: past a normal (not forced) run's grace.
      const daysAgo = new Date(Date.now() - 3 * 86_400_000);
      if (orphans.length > 0) await writeThumbnails(input.storageRoot, options.seed + 1, orphans, daysAgo);
      const byFileId = (files: 'ext_thumbnails' | 'transcoded') =>
        actions.flatMap((a) => (a.type === 'file_id_files' && a.files === files ? [a.fileId] : []));
      await writeFileIdFiles(input.storageRoot, options.seed + 2, byFileId('ext_thumbnails'), {
        transcoded: false,
        modifiedAt: daysAgo,
      });
      await writeFileIdFiles(input.storageRoot, options.seed + 3, byFileId('transcoded'), {
        externalThumbnails: false,
        modifiedAt: daysAgo,
      });
    }
    let done = 0;
    for (const action of actions) {
      if (action.type === 'delete') await input.blobs.delete(action.hash);
      else if (action.type === 'put') {
        await input.blobs.put(action.hash, action.bytes, action.bytes.length);
        if (input.backdateBlob) await input.backdateBlob(action.hash, action.modifiedAt);
      }
      progress('after_commit', ++done, actions.length);
    }
    phaseMs[current] = Date.now() - phaseStarted;

    const counts = countDataset(options, plan, {
      ...rowStats,
      blobBytes: content.bytes,
      thumbnails,
      memberGrants,
      shares,
      faces,
      audioMetadata,
    });
    const report: OxiCloudDatasetReport = {
      options,
      usernamePrefix: prefix,
      counts,
      faults,
      phaseMs,
      durationMs: Date.now() - started,
    };
    input.logger?.info(
      {
        target: TARGET,
        event: 'dataset.generated',
        counts,
        faults: faults.map((f) => f.fault),
        ms: report.durationMs,
      },
      'oxicloud dataset generated',
    );
    return report;
  } catch (err) {
    if (isDatasetError(err)) throw err;
    throw new DatasetError(
      'GENERATION_FAILED',
      `oxicloud dataset generation failed in phase ${current}: ${(err as Error).message}`,
      { cause: err },
    );
  } finally {
    client.release();
  }
}

/** Deletes the objects among `hashes` that have no `storage.blobs` row (after a rolled-back generation). */
async function removeBytesWithoutRows(
  client: SqlClient,
  blobs: BlobStorage,
  hashes: readonly string[],
): Promise<void> {
  for (let at = 0; at < hashes.length; at += 10_000) {
    const part = hashes.slice(at, at + 10_000);
    const kept = new Set(
      (
        await rows<{ hash: string }>(client, 'SELECT hash FROM storage.blobs WHERE hash = ANY($1::text[])', [
          part,
        ])
      ).map((r) => r.hash),
    );
    for (const hash of part) if (!kept.has(hash)) await blobs.delete(hash);
  }
}

function countDataset(
  options: ResolvedOxiCloudDatasetOptions,
  plan: OxiCloudDatasetPlan,
  stats: {
    manifests: number;
    chunkRows: number;
    sharedChunks: number;
    legacyRows: number;
    blobBytes: number;
    thumbnails: number;
    memberGrants: number;
    shares: number;
    faces: number;
    audioMetadata: number;
  },
): OxiCloudDatasetCounts {
  const filesOf = new Map<number, number>();
  for (const f of plan.files) filesOf.set(f.contentNo, (filesOf.get(f.contentNo) ?? 0) + 1);
  const kindOf = (no: number) => plan.contents[no]?.kind;
  const files = plan.files;
  const folders = plan.drives.flatMap((d) => d.folders);
  return {
    users: options.users,
    admins: options.admins,
    externalUsers: options.externalUsers,
    groups: plan.groups.length,
    groupMembers: plan.groups.reduce((s, g) => s + g.memberUserNos.length, 0),
    personalDrives: plan.drives.filter((d) => d.kind === 'personal').length,
    sharedDrives: plan.drives.filter((d) => d.kind === 'shared').length,
    folders: folders.length,
    trashedFolders: folders.filter((f) => f.trashedAgo !== null).length,
    files: files.length,
    multiChunkFiles: files.filter((f) => kindOf(f.contentNo) === 'multi_chunk').length,
    oneChunkFiles: files.filter((f) => kindOf(f.contentNo) === 'one_chunk').length,
    emptyFiles: files.filter((f) => kindOf(f.contentNo) === 'empty').length,
    legacyFiles: files.filter((f) => kindOf(f.contentNo) === 'legacy').length,
    imageFiles: files.filter(
      (f) => plan.contents[f.contentNo]?.media === 'image' && kindOf(f.contentNo) !== 'empty',
    ).length,
    trashedFiles: files.filter((f) => f.trashedAgo !== null).length,
    oldTrashedFiles: files.filter((f) => f.trashedAgo !== null && f.trashedAgo > THIRTY_DAYS).length,
    dedupFiles: files.filter((f) => (filesOf.get(f.contentNo) ?? 0) >= 2).length,
    manifests: stats.manifests,
    chunkBlobs: stats.chunkRows,
    sharedChunks: stats.sharedChunks,
    legacyBlobs: stats.legacyRows,
    blobBytes: stats.blobBytes,
    fileBytes: files.reduce((s, f) => s + (plan.contents[f.contentNo]?.size ?? 0), 0),
    liveFileBytes: files
      .filter((f) => f.trashedAgo === null)
      .reduce((s, f) => s + (plan.contents[f.contentNo]?.size ?? 0), 0),
    thumbnails: stats.thumbnails,
    grants: plan.drives.reduce((s, d) => s + d.owners.length, 0) + stats.memberGrants + stats.shares,
    shares: stats.shares,
    faces: stats.faces,
    audioMetadata: stats.audioMetadata,
    maxFolderDepth: plan.maxDepth,
  };
}
