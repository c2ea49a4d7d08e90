/**
 * What every fault injector shares: the context of one injection (the
 * transaction's client, the options, the drives and blobs earlier faults
 * took, the blob-storage changes to make after the commit) and the helpers
 * to pick candidates elsewhere and to refuse a fault the clean dataset
 * cannot hold.
 */
import type { Blake3 } from '../blob-content.js';
import { DatasetError } from '../errors.js';
import type { FaultName } from '../faults.js';
import type { ResolvedDatasetOptions } from '../options.js';
import type { FaultResource } from '../report.js';
import type { SqlClient } from '../sql-client.js';

/** A blob-storage change to make after the rows are committed. */
export type StorageFaultAction =
  | { readonly type: 'delete'; readonly hash: string }
  | { readonly type: 'put'; readonly hash: string; readonly bytes: Uint8Array; readonly modifiedAt: Date };

/** One injection: what the injectors read and what they record for the later ones. */
export interface FaultContext {
  readonly client: SqlClient;
  readonly options: ResolvedDatasetOptions;
  readonly blake3: Blake3;
  /** Drives an earlier fault touched; later faults pick elsewhere. */
  readonly usedDrives: Set<string>;
  /** Blobs an earlier fault's files point at. */
  readonly usedBlobs: Set<string>;
  readonly storage: StorageFaultAction[];
  readonly now: Date;
}

/** Injects one fault into the clean dataset and returns the resources it faulted. */
export type Injector = (ctx: FaultContext) => Promise<FaultResource[]>;

/** MIME types of the media files (left alone by the file and blob faults). */
export const MEDIA = ['audio/mpeg', 'image/jpeg'];
/** One day, in milliseconds. */
export const DAY_MS = 86_400_000;

/** Refuses a fault the clean dataset has too few candidates for (`FAULT_NOT_APPLICABLE`, with what to raise). */
export function notApplicable(fault: FaultName, wanted: number, found: number, advice: string): never {
  throw new DatasetError(
    'FAULT_NOT_APPLICABLE',
    `fault ${fault} needs ${wanted} candidate${wanted === 1 ? '' : 's'} but the clean dataset has ${found}: ${advice}`,
  );
}

/** The drives earlier faults took (a query parameter: later faults pick elsewhere). */
export function excluded(ctx: FaultContext): string[] {
  return [...ctx.usedDrives];
}

/** How many resources each fault injects (`faultsPerKind`). */
export function n(ctx: FaultContext): number {
  return ctx.options.faultsPerKind;
}

/** The drive columns a picked row carries for its label. */
export interface DriveRow {
  drive_id: string;
  username: string;
  drive_name: string;
}

/** `username/drive name`. */
export function driveLabel(r: DriveRow): string {
  return `${r.username}/${r.drive_name}`;
}
