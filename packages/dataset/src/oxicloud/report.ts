/**
 * The report of an OxiCloud-shaped dataset: counts per kind, the faults,
 * the time per phase, and a one-paragraph summary for the CLI.
 */
import type { Severity } from '@oxicloud/consistency/severity';
import type { OxiCloudFaultExpectation } from './faults.js';
import type { OxiCloudFaultRecord } from './inject-faults.js';
import type { ResolvedOxiCloudDatasetOptions } from './options.js';

/** Counts of the CLEAN dataset (before faults). */
export interface OxiCloudDatasetCounts {
  /** Internal users (admins included). */
  readonly users: number;
  readonly admins: number;
  readonly externalUsers: number;
  readonly groups: number;
  readonly groupMembers: number;
  readonly personalDrives: number;
  readonly sharedDrives: number;
  /** Folders, the drives' root folders included. */
  readonly folders: number;
  readonly trashedFolders: number;
  readonly files: number;
  /** Files by content kind. */
  readonly multiChunkFiles: number;
  readonly oneChunkFiles: number;
  readonly emptyFiles: number;
  readonly legacyFiles: number;
  readonly imageFiles: number;
  readonly trashedFiles: number;
  /** Trashed files trashed more than 30 days ago (with their folder or alone). */
  readonly oldTrashedFiles: number;
  /** Files whose content at least one other file has too (same manifest or legacy blob). */
  readonly dedupFiles: number;
  /** `storage.chunk_manifests` rows (the empty manifest included when there are empty files). */
  readonly manifests: number;
  /** `storage.blobs` rows of chunks (one-chunk files' rows included). */
  readonly chunkBlobs: number;
  /** Chunk rows listed by two manifests or more (different files sharing chunks). */
  readonly sharedChunks: number;
  /** `storage.blobs` rows of legacy whole-file blobs. */
  readonly legacyBlobs: number;
  /** Σ sizes of the objects written to the blob store (each distinct chunk and legacy blob once). */
  readonly blobBytes: number;
  /** Σ `files.size` over all files (trashed included). */
  readonly fileBytes: number;
  /** Σ `files.size` over live files (what the drives' `used_bytes` add up to). */
  readonly liveFileBytes: number;
  /** Thumbnail files written (three per image content; 0 without `storageRoot`). */
  readonly thumbnails: number;
  /** Grants: drive owner grants, the externals' grants and the share links' token grants. */
  readonly grants: number;
  /** Share links (`storage.shares`), each with its one viewer token grant on a live file. */
  readonly shares: number;
  /** Faces (`faces.faces`): two on one live image of each default drive, each with its file's content hash. */
  readonly faces: number;
  /**
   * Audio tags rows (`audio.file_metadata`) OxiCloud's extractor leaves: one per audio file read at its raw
   * path (legacy or one-chunk) on a local unencrypted store, none elsewhere (§9).
   */
  readonly audioMetadata: number;
  /** Depth of the deepest folder (root folders are 0). */
  readonly maxFolderDepth: number;
}

/** The phases of a generation, in order. */
export type OxiCloudDatasetPhase =
  | 'plan'
  | 'blob_bytes'
  | 'users'
  | 'drives'
  | 'folders'
  | 'files'
  | 'content_rows'
  | 'usage'
  | 'faults'
  | 'commit'
  | 'after_commit';

/** Per-phase progress, for a CLI progress line. */
export interface OxiCloudDatasetProgress {
  readonly phase: OxiCloudDatasetPhase;
  readonly done: number;
  readonly total: number;
  readonly elapsedMs: number;
}

/** What {@link generateOxiCloudDataset} produced. */
export interface OxiCloudDatasetReport {
  readonly options: ResolvedOxiCloudDatasetOptions;
  /** Usernames are `<usernamePrefix>u000001`, … (externals `…x000001`). */
  readonly usernamePrefix: string;
  readonly counts: OxiCloudDatasetCounts;
  /** One record per requested fault, in `OXICLOUD_FAULT_NAMES` order. */
  readonly faults: readonly OxiCloudFaultRecord[];
  readonly phaseMs: Readonly<Partial<Record<OxiCloudDatasetPhase, number>>>;
  readonly durationMs: number;
}

function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

/** A one-paragraph human summary of a report, for the CLI. */
export function describeOxiCloudDatasetReport(report: OxiCloudDatasetReport): string {
  const c = report.counts;
  const faults =
    report.faults.length === 0
      ? 'No faults injected.'
      : `Faults: ${report.faults
          .map(
            (f) => `${f.fault} (${f.resourceIds.length} → §12.${f.expect.invariant ?? '-'} ${f.expect.kind})`,
          )
          .join(', ')}.`;
  return (
    `Generated OxiCloud dataset seed ${report.options.seed} in ${(report.durationMs / 1000).toFixed(1)} s: ` +
    `${c.users} users (${c.admins} admins, ${report.usernamePrefix}…), ${c.externalUsers} external users, ` +
    `${c.groups} groups (${c.groupMembers} members), ${c.personalDrives} personal and ${c.sharedDrives} shared drives, ` +
    `${c.folders} folders (${c.trashedFolders} trashed, depth up to ${c.maxFolderDepth}), ` +
    `${c.files} files (${c.multiChunkFiles} multi-chunk, ${c.oneChunkFiles} one-chunk, ${c.emptyFiles} empty, ` +
    `${c.legacyFiles} legacy; ${c.dedupFiles} deduplicated; ${c.trashedFiles} trashed, ${c.oldTrashedFiles} over 30 days; ` +
    `${formatBytes(c.fileBytes)}), ${c.manifests} manifests, ${c.chunkBlobs} chunk blobs (${c.sharedChunks} shared) and ` +
    `${c.legacyBlobs} legacy blobs (${formatBytes(c.blobBytes)} in the store), ${c.thumbnails} thumbnails, ` +
    `${c.grants} grants, ${c.shares} share links, ${c.faces} faces, ${c.audioMetadata} audio tag rows. ${faults}`
  );
}

/** Every resource each fault touched, one line each (seed's `--list-resources`). */
export function describeOxiCloudFaultResources(report: OxiCloudDatasetReport): string {
  if (report.faults.length === 0) return 'No faults injected.';
  const lines: string[] = [];
  for (const f of report.faults) {
    lines.push(`${f.fault}: ${f.resources.length} resource(s)`);
    for (const r of f.resources) lines.push(`  ${r.type} ${r.id}  ${r.label}`);
  }
  return lines.join('\n');
}

/** One finding a fault must give: the check that records it, its kind and severity, and its resource id. */
export interface OxiCloudExpectedFinding {
  readonly check: string;
  readonly kind: string;
  readonly severity: Severity | undefined;
  readonly resourceId: string;
}

/**
 * The findings one fault record must give (`consistency_batch` with force
 * and deep): none when no check reports it (`check: null`), else one per
 * resource, on the resource's id or, for `findingId: 'file_hash'`, on the
 * content hash the resource belongs to; a resource of the type `also.on`
 * names gives the `also` finding instead.
 */
export function expectedFaultFindings(record: OxiCloudFaultRecord): OxiCloudExpectedFinding[] {
  const e: OxiCloudFaultExpectation = record.expect;
  if (e.check === null) return [];
  const check = e.check;
  return record.resources.map((r) =>
    e.also !== undefined && r.type === e.also.on
      ? { check: e.also.check, kind: e.also.kind, severity: e.also.severity, resourceId: r.id }
      : {
          check,
          kind: e.kind,
          severity: e.severity,
          resourceId: e.findingId === 'file_hash' ? String(r.detail?.['fileHash']) : r.id,
        },
  );
}

/** What `consistency_batch` (force, deep) must report for the injected faults, one line each (printed by seed). */
export function describeOxiCloudExpectedFindings(report: OxiCloudDatasetReport): string {
  const lines = ['Expected findings:'];
  for (const f of report.faults) {
    const { check, kind, severity, invariant, also } = f.expect;
    // One finding per resource, in order: the `also` one on the resources of its type.
    const findings = expectedFaultFindings(f);
    const onAlso = (i: number) => also !== undefined && f.resources[i]?.type === also.on;
    const ids =
      check === null ? f.resourceIds : findings.filter((_, i) => !onAlso(i)).map((x) => x.resourceId);
    lines.push(
      check === null
        ? `  ${f.fault}: no check reports it (${kind}${invariant === null ? '' : `, §12.${invariant}`}) on ${ids.join(', ')}`
        : `  ${f.fault}: ${check} reports ${kind} (${severity ?? '-'}, §12.${invariant ?? '-'}) on ${ids.join(', ')}`,
    );
    if (also !== undefined) {
      const alsoIds = findings.filter((_, i) => onAlso(i)).map((x) => x.resourceId);
      lines.push(
        `  ${f.fault}: ${also.check} reports ${also.kind} (${also.severity}, §12.${also.invariant}) on ${alsoIds.join(', ')}`,
      );
    }
  }
  return lines.join('\n');
}
