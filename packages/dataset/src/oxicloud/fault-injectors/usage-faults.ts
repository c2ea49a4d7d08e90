/**
 * The size and usage faults: a file size that differs from its content's,
 * a drive's used bytes and a user's envelope that drift.
 */
import { rows, toInt } from '../../sql-client.js';
import {
  addToDrive,
  drives,
  type Injector,
  type OxiCloudFaultResource,
  pickDrive,
  pickEach,
  pickLiveFile,
} from './fault-context.js';

export const blobSizeMismatch: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'blob_size_mismatch',
    'raise users or filesPerDrive',
    (i) => pickLiveFile(ctx, 23, i),
    (p) => {
      ctx.usedDrives.add(p.drive_id);
      ctx.usedHashes.add(p.blob_hash);
    },
  );
  const out: OxiCloudFaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    const delta = 1000 + i * 7;
    await ctx.client.query('UPDATE storage.files SET size = size + $2::bigint WHERE id = $1', [p.id, delta]);
    await addToDrive(ctx, p.drive_id, delta);
    out.push({
      type: 'file',
      id: p.id,
      label: `${p.label}:${p.name}`,
      detail: { fileSize: toInt(p.size) + delta, contentSize: toInt(p.size), blobHash: p.blob_hash },
    });
  }
  return out;
};

export const driveUsedBytesDrift: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'drive_used_bytes_drift',
    'raise users or sharedDrives',
    async (i) => (await pickDrive(ctx, 29, i, "d.kind = 'shared'")) ?? pickDrive(ctx, 29, i, 'true'),
    (p) => ctx.usedDrives.add(p.id),
  );
  const out: OxiCloudFaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    const delta = 1_048_576 + i * 4096;
    // A personal drive's owner envelope follows, so it still adds up over the stored drives.
    await addToDrive(ctx, p.id, delta);
    out.push({
      type: 'drive',
      id: p.id,
      label: p.label,
      detail: { storedBytes: toInt(p.used_bytes) + delta, expectedBytes: toInt(p.used_bytes) },
    });
  }
  return out;
};

export const userUsedBytesDrift: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'user_used_bytes_drift',
    'raise users',
    async (i) =>
      (
        await rows<{ id: string; username: string; used: string; drive_id: string }>(
          ctx.client,
          `SELECT u.id, u.username, au.storage_used_bytes AS used, d.id AS drive_id
             FROM oxi_users u JOIN auth.users au ON au.id = u.id
             JOIN oxi_drives d ON d.kind = 'personal' AND d.user_no = u.user_no
            WHERE NOT u.external AND NOT (d.id = ANY($1::uuid[]))
            ORDER BY hashtextextended(u.username, $2::bigint + $3::bigint) LIMIT 1`,
          [drives(ctx), ctx.options.seed, 31_000 + i],
        )
      )[0],
    (p) => ctx.usedDrives.add(p.drive_id),
  );
  const out: OxiCloudFaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    const delta = 2_097_152 + i * 4096;
    await ctx.client.query(
      'UPDATE auth.users SET storage_used_bytes = storage_used_bytes + $2::bigint WHERE id = $1',
      [p.id, delta],
    );
    out.push({
      type: 'user',
      id: p.id,
      label: p.username,
      detail: { storedBytes: toInt(p.used) + delta, expectedBytes: toInt(p.used) },
    });
  }
  return out;
};
