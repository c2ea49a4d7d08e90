/**
 * What every OxiCloud fault injector shares: the context of one injection
 * (the transaction's client, the options, the drives and content hashes
 * earlier faults took, the byte and thumbnail changes to make after the
 * commit), and the pickers and helpers the injectors have in common.
 */
import { blobBytes } from '../../blob-content.js';
import { DatasetError } from '../../errors.js';
import { Prng } from '../../prng.js';
import { rows, type SqlClient } from '../../sql-client.js';
import type { OxiCloudFaultName } from '../faults.js';
import type { ResolvedOxiCloudDatasetOptions } from '../options.js';
import { OXI_STREAM } from '../plan.js';

/** One resource a fault touched. */
export interface OxiCloudFaultResource {
  readonly type:
    | 'user'
    | 'drive'
    | 'folder'
    | 'file'
    | 'blob'
    | 'manifest'
    | 'grant'
    | 'thumbnail'
    | 'favorite'
    | 'share'
    | 'nextcloud_id'
    | 'face';
  /**
   * UUID, a hash for `blob`, `manifest` and `thumbnail`, the serial id for
   * `favorite`: the id the expected finding carries.
   */
  readonly id: string;
  /** A stable label (username, drive, path, file name, content hash): the same for the same seed, unlike ids. */
  readonly label: string;
  readonly detail: Readonly<Record<string, unknown>>;
}

/** A change to make once the rows are committed: blob bytes (port) or thumbnail files (storage root). */
export type OxiCloudStorageAction =
  | { readonly type: 'delete'; readonly hash: string }
  | { readonly type: 'put'; readonly hash: string; readonly bytes: Uint8Array; readonly modifiedAt: Date }
  | { readonly type: 'thumbnail'; readonly hash: string }
  | {
      readonly type: 'file_id_files';
      readonly fileId: string;
      readonly files: 'ext_thumbnails' | 'transcoded';
    };

export interface FaultContext {
  readonly client: SqlClient;
  readonly options: ResolvedOxiCloudDatasetOptions;
  readonly usedDrives: Set<string>;
  readonly usedHashes: Set<string>;
  readonly storage: OxiCloudStorageAction[];
  readonly hasStorageRoot: boolean;
  /** OxiCloud's media extractors read this store's bytes (local, unencrypted): only then are metadata rows written. */
  readonly readsRawMedia: boolean;
  readonly now: Date;
}

export type Injector = (ctx: FaultContext) => Promise<OxiCloudFaultResource[]>;

export const DAY_MS = 86_400_000;

export function notApplicable(
  fault: OxiCloudFaultName,
  wanted: number,
  found: number,
  advice: string,
): never {
  throw new DatasetError(
    'FAULT_NOT_APPLICABLE',
    `fault ${fault} needs ${wanted} candidate${wanted === 1 ? '' : 's'} but the clean dataset has ${found}: ${advice}`,
  );
}

export const n = (ctx: FaultContext) => ctx.options.faultsPerKind;
export const drives = (ctx: FaultContext) => [...ctx.usedDrives];
export const hashes = (ctx: FaultContext) => [...ctx.usedHashes];

/** Runs `pick` (LIMIT 1, seeing the exclusions so far) `n` times; refuses the fault when one comes back empty. */
export async function pickEach<T>(
  ctx: FaultContext,
  fault: OxiCloudFaultName,
  advice: string,
  pick: (i: number) => Promise<T | undefined>,
  use: (row: T) => void,
): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n(ctx); i++) {
    const row = await pick(i);
    if (row === undefined) notApplicable(fault, n(ctx), i, advice);
    use(row);
    out.push(row);
  }
  return out;
}

/** Bytes of a fault: fresh ones no content has (a stream of their own). */
export function faultBytes(ctx: FaultContext, salt: number, i: number): Uint8Array {
  const size = new Prng(ctx.options.seed, OXI_STREAM.faultBytes, salt, i).int(1000, 20_000);
  return blobBytes(ctx.options.seed, OXI_STREAM.faultBytes, salt * 1000 + i, size, 'other');
}

/**
 * Deterministic bytes of one chunk that is not a file's last: FastCDC's
 * minimum, 64 KiB, plus up to 8 KiB (a last chunk may be any size:
 * {@link faultBytes}).
 */
export function faultChunkBytes(ctx: FaultContext, salt: number, i: number): Uint8Array {
  const size = new Prng(ctx.options.seed, OXI_STREAM.faultBytes, salt, i).int(65_536, 73_728);
  return blobBytes(ctx.options.seed, OXI_STREAM.faultBytes, salt * 1000 + i, size, 'other');
}

/** Keeps `users.storage_used_bytes` of a personal drive's owner in step with a change of that drive's bytes. */
export async function addToDrive(ctx: FaultContext, driveId: string, delta: number): Promise<void> {
  await ctx.client.query('UPDATE storage.drives SET used_bytes = used_bytes + $2::bigint WHERE id = $1', [
    driveId,
    delta,
  ]);
  await ctx.client.query(
    `UPDATE auth.users u SET storage_used_bytes = u.storage_used_bytes + $2::bigint
       FROM storage.drives d JOIN storage.role_grants g
         ON g.resource_type = 'drive' AND g.resource_id = d.id AND g.role = 'owner' AND g.subject_type = 'user'
      WHERE d.id = $1 AND d.kind = 'personal' AND u.id = g.subject_id AND NOT u.is_external`,
    [driveId, delta],
  );
}

export interface FileRow {
  id: string;
  name: string;
  blob_hash: string;
  size: string;
  drive_id: string;
  label: string;
  folder_id: string;
}

/** A live file in a live folder, of a drive and a content no earlier fault touched. */
export async function pickLiveFile(
  ctx: FaultContext,
  salt: number,
  i: number,
  extra = '',
): Promise<FileRow | undefined> {
  return (
    await rows<FileRow>(
      ctx.client,
      `SELECT f.id, f.name, f.blob_hash, f.size, f.drive_id, d.label, f.folder_id
         FROM storage.files f JOIN oxi_drives d ON d.id = f.drive_id JOIN storage.folders fo ON fo.id = f.folder_id
        WHERE NOT f.is_trashed AND NOT fo.is_trashed AND f.size > 0
          AND NOT (f.drive_id = ANY($1::uuid[])) AND NOT (f.blob_hash = ANY($2::text[])) ${extra}
        ORDER BY hashtextextended(f.name, $3::bigint + $4::bigint) LIMIT 1`,
      [drives(ctx), hashes(ctx), ctx.options.seed, salt * 1000 + i],
    )
  )[0];
}

export interface DriveRow {
  id: string;
  kind: string;
  label: string;
  used_bytes: string;
}

export async function pickDrive(
  ctx: FaultContext,
  salt: number,
  i: number,
  where: string,
): Promise<DriveRow | undefined> {
  return (
    await rows<DriveRow>(
      ctx.client,
      `SELECT d.id, d.kind, od.label, d.used_bytes FROM storage.drives d JOIN oxi_drives od ON od.id = d.id
        WHERE NOT (d.id = ANY($1::uuid[])) AND ${where}
        ORDER BY hashtextextended(od.label, $2::bigint + $3::bigint) LIMIT 1`,
      [drives(ctx), ctx.options.seed, salt * 1000 + i],
    )
  )[0];
}

export interface FolderRow {
  id: string;
  path: string;
  lpath: string;
  drive_id: string;
  label: string;
}

export async function pickFolder(
  ctx: FaultContext,
  salt: number,
  i: number,
  where: string,
): Promise<FolderRow | undefined> {
  return (
    await rows<FolderRow>(
      ctx.client,
      `SELECT f.id, f.path, f.lpath::text AS lpath, f.drive_id, d.label
         FROM storage.folders f JOIN oxi_drives d ON d.id = f.drive_id
        WHERE f.parent_id IS NOT NULL AND NOT (f.drive_id = ANY($1::uuid[])) AND ${where}
        ORDER BY hashtextextended(d.label || ':' || f.path, $2::bigint + $3::bigint) LIMIT 1`,
      [drives(ctx), ctx.options.seed, salt * 1000 + i],
    )
  )[0];
}

export const LIVE_LEAF =
  'NOT f.is_trashed AND NOT EXISTS (SELECT 1 FROM storage.folders c WHERE c.parent_id = f.id)';
