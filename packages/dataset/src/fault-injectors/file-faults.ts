/**
 * The file faults (found by `files_consistency`): a live file in a trashed
 * folder, a file whose blob row is gone, a file size that differs from its
 * blob's, a file in another drive's folder, and a MIME type its bytes do not
 * have.
 */
import { blobBytes, STREAM } from '../blob-content.js';
import type { FaultName } from '../faults.js';
import type { FaultResource } from '../report.js';
import { rows, toInt } from '../sql-client.js';
import {
  type DriveRow,
  driveLabel,
  excluded,
  type FaultContext,
  type Injector,
  MEDIA,
  n,
  notApplicable,
} from './fault-context.js';

export const liveFileUnderTrashedFolder: Injector = async (ctx) => {
  const picks = await rows<DriveRow & { id: string; name: string; folder_id: string; path: string }>(
    ctx.client,
    `SELECT fi.id, fi.name, fo.id AS folder_id, fo.path, d.id AS drive_id, d.username, d.name AS drive_name
       FROM storage.files fi
       JOIN storage.folders fo ON fo.id = fi.folder_id
       JOIN ds_drives d ON d.id = fi.drive_id
      WHERE fi.is_trashed AND fo.is_trashed AND NOT (d.id = ANY($1::uuid[]))
      ORDER BY hashtextextended(fi.name, $2::bigint)
      LIMIT $3::int`,
    [excluded(ctx), ctx.options.seed, n(ctx)],
  );
  if (picks.length < n(ctx)) {
    notApplicable(
      'live_file_under_trashed_folder',
      n(ctx),
      picks.length,
      'raise trashedFolderShare or filesPerUser',
    );
  }
  await ctx.client.query(
    'UPDATE storage.files SET is_trashed = false, trashed_at = NULL WHERE id = ANY($1::uuid[])',
    [picks.map((p) => p.id)],
  );
  for (const p of picks) ctx.usedDrives.add(p.drive_id);
  return picks.map((p) => ({
    type: 'file',
    id: p.id,
    label: `${driveLabel(p)}:${p.path}/${p.name}`,
    detail: { folderId: p.folder_id, folderPath: p.path },
  }));
};

async function pickLiveNonMediaFiles(
  ctx: FaultContext,
  fault: FaultName,
  salt: number,
  knownBlobType = false,
) {
  const picks = await rows<
    DriveRow & {
      id: string;
      name: string;
      blob_hash: string;
      size: string;
      blob_size: string;
      path: string | null;
      owner_id: string;
    }
  >(
    ctx.client,
    `SELECT fi.id, fi.name, fi.blob_hash, fi.size, b.size AS blob_size, fo.path,
            d.id AS drive_id, d.username, d.name AS drive_name, u.id AS owner_id
       FROM storage.files fi
       JOIN ds_drives d ON d.id = fi.drive_id
       JOIN ds_users u ON u.user_no = d.user_no
       JOIN storage.blobs b ON b.hash = fi.blob_hash
       LEFT JOIN storage.folders fo ON fo.id = fi.folder_id
      WHERE NOT fi.is_trashed AND (fo.id IS NULL OR NOT fo.is_trashed)
        AND fi.mime_type <> ALL($4::text[]) AND NOT (d.id = ANY($1::uuid[]))
        ${knownBlobType ? "AND COALESCE(b.content_type, 'application/octet-stream') <> 'application/octet-stream'" : ''}
      ORDER BY (b.ref_count >= 2) DESC, hashtextextended(fi.name, $2::bigint + $5::bigint)
      LIMIT $3::int`,
    [excluded(ctx), ctx.options.seed, n(ctx), MEDIA, salt],
  );
  if (picks.length < n(ctx)) notApplicable(fault, n(ctx), picks.length, 'raise users or filesPerUser');
  for (const p of picks) ctx.usedDrives.add(p.drive_id);
  return picks;
}

export const missingBlobRow: Injector = async (ctx) => {
  const picks = await pickLiveNonMediaFiles(ctx, 'missing_blob_row', 17);
  const out: FaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    // Fresh bytes of the file's size: their row and bytes never exist, as if both were deleted.
    const hash = ctx.blake3.hex(blobBytes(ctx.options.seed, STREAM.faultBytes, i, toInt(p.size), 'other'));
    // The files triggers refuse a reference to a blob without a row (0007),
    // so the row exists while the file is pointed at it and goes right after:
    // the state a lost row leaves behind.
    await ctx.client.query(
      'INSERT INTO storage.blobs (hash, size) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING',
      [hash, p.size],
    );
    await ctx.client.query('UPDATE storage.files SET blob_hash = $2 WHERE id = $1', [p.id, hash]);
    await ctx.client.query('DELETE FROM storage.blobs WHERE hash = $1', [hash]);
    ctx.usedBlobs.add(p.blob_hash);
    out.push({
      type: 'file',
      id: p.id,
      label: `${driveLabel(p)}:${p.path ?? ''}/${p.name}`,
      detail: { blobHash: hash, previousBlobHash: p.blob_hash, size: toInt(p.size) },
    });
  }
  return out;
};

export const blobSizeMismatch: Injector = async (ctx) => {
  const picks = await pickLiveNonMediaFiles(ctx, 'blob_size_mismatch', 19);
  const out: FaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    const delta = 1000 + i * 7;
    // Keep the accounting right, so only the mismatch remains.
    await ctx.client.query('UPDATE storage.files SET size = size + $2::bigint WHERE id = $1', [p.id, delta]);
    await ctx.client.query('UPDATE storage.drives SET used_bytes = used_bytes + $2::bigint WHERE id = $1', [
      p.drive_id,
      delta,
    ]);
    await ctx.client.query(
      'UPDATE auth.users SET storage_used_bytes = storage_used_bytes + $2::bigint WHERE id = $1',
      [p.owner_id, delta],
    );
    ctx.usedBlobs.add(p.blob_hash);
    out.push({
      type: 'file',
      id: p.id,
      label: `${driveLabel(p)}:${p.path ?? ''}/${p.name}`,
      detail: { fileSize: toInt(p.size) + delta, blobSize: toInt(p.blob_size), blobHash: p.blob_hash },
    });
  }
  return out;
};

export const fileInOtherDriveFolder: Injector = async (ctx) => {
  const picks = await pickLiveNonMediaFiles(ctx, 'file_in_other_drive_folder', 43);
  const out: FaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    if (p.path === null) continue; // at a drive root: no folder to disagree with
    const [target] = await rows<{ id: string; owner_id: string }>(
      ctx.client,
      `SELECT d.id, d.owner_id FROM storage.drives d JOIN ds_drives dd ON dd.id = d.id
        WHERE d.id <> $1 AND NOT (d.id = ANY($2::uuid[]))
        ORDER BY hashint8extended(dd.drive_no, $3::bigint + $4::bigint) LIMIT 1`,
      [p.drive_id, excluded(ctx), ctx.options.seed, i],
    );
    if (!target) notApplicable('file_in_other_drive_folder', n(ctx), i, 'raise users');
    const size = toInt(p.size);
    await ctx.client.query('UPDATE storage.files SET drive_id = $2 WHERE id = $1', [p.id, target.id]);
    // Move the bytes between the drives and the owners' envelopes: only the mismatch remains.
    await ctx.client.query('UPDATE storage.drives SET used_bytes = used_bytes - $2::bigint WHERE id = $1', [
      p.drive_id,
      size,
    ]);
    await ctx.client.query('UPDATE storage.drives SET used_bytes = used_bytes + $2::bigint WHERE id = $1', [
      target.id,
      size,
    ]);
    await ctx.client.query(
      'UPDATE auth.users SET storage_used_bytes = storage_used_bytes - $2::bigint WHERE id = $1',
      [p.owner_id, size],
    );
    await ctx.client.query(
      'UPDATE auth.users SET storage_used_bytes = storage_used_bytes + $2::bigint WHERE id = $1',
      [target.owner_id, size],
    );
    ctx.usedDrives.add(target.id);
    ctx.usedBlobs.add(p.blob_hash);
    out.push({
      type: 'file',
      id: p.id,
      label: `${driveLabel(p)}:${p.path}/${p.name}`,
      detail: { driveId: target.id, folderDriveId: p.drive_id },
    });
  }
  if (out.length === 0) notApplicable('file_in_other_drive_folder', n(ctx), 0, 'raise foldersPerDrive');
  return out;
};

export const fileMimeMismatch: Injector = async (ctx) => {
  // Its blob's content type must be known: application/octet-stream counts as unknown.
  const picks = await pickLiveNonMediaFiles(ctx, 'file_mime_mismatch', 47, true);
  for (const p of picks) {
    await ctx.client.query(
      "UPDATE storage.files SET mime_type = 'application/x-oxicloud-fault' WHERE id = $1",
      [p.id],
    );
    ctx.usedBlobs.add(p.blob_hash);
  }
  return picks.map((p) => ({
    type: 'file',
    id: p.id,
    label: `${driveLabel(p)}:${p.path ?? ''}/${p.name}`,
    detail: { mimeType: 'application/x-oxicloud-fault', blobHash: p.blob_hash },
  }));
};
