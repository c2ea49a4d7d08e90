/**
 * The blob faults: bytes on disk without a row and a row whose bytes are
 * gone (found by `storage_consistency`), a stored ref_count that drifts and
 * an unreferenced blob never marked orphaned (found by `blobs_consistency`).
 */
import { blobBytes, STREAM } from '../blob-content.js';
import { Prng } from '../prng.js';
import type { FaultResource } from '../report.js';
import { rows, toInt } from '../sql-client.js';
import {
  DAY_MS,
  excluded,
  type FaultContext,
  type Injector,
  MEDIA,
  n,
  notApplicable,
} from './fault-context.js';

export const orphanBlobOnDisk: Injector = async (ctx) => {
  const prng = new Prng(ctx.options.seed, STREAM.faultBytes, 1);
  const out: FaultResource[] = [];
  for (let i = 0; i < n(ctx); i++) {
    const size = prng.int(ctx.options.blobSize.min, ctx.options.blobSize.max);
    const bytes = blobBytes(ctx.options.seed, STREAM.faultBytes, 1000 + i, size, 'other');
    const hash = ctx.blake3.hex(bytes);
    const modifiedAt = new Date(ctx.now.getTime() - 3 * DAY_MS);
    ctx.storage.push({ type: 'put', hash, bytes, modifiedAt });
    out.push({
      type: 'blob',
      id: hash,
      label: `orphan blob ${i + 1} (${size} B)`,
      detail: { size, modifiedAt },
    });
  }
  return out;
};

/**
 * Why blob_bytes_missing found too few blobs: a candidate blob's files must all
 * lie in drives no earlier fault took, so it needs few files per blob.
 */
function blobBytesMissingAdvice(ctx: FaultContext): string {
  const files = ctx.options.users * ctx.options.filesPerUser;
  const perBlob = files / Math.max(1, ctx.options.blobsOnDisk);
  return (
    `it needs referenced, non-media blobs whose files all lie outside the ${ctx.usedDrives.size} drive(s) the earlier faults took; ` +
    `here each blob is shared by about ${perBlob.toFixed(1)} files (users x files-per-user / blobs-on-disk = ` +
    `${ctx.options.users} x ${ctx.options.filesPerUser} / ${ctx.options.blobsOnDisk}), so almost every blob has a file in a taken drive. ` +
    `Keep it at about 2 files per blob or fewer (blobs-on-disk >= ${Math.ceil(files / 2)}), and with --faults all use ` +
    `at least ${ctx.usedDrives.size + 8} users so some drives stay untouched`
  );
}

export const blobBytesMissing: Injector = async (ctx) => {
  const picks = await rows<{ hash: string; size: string; blob_no: number; file_ids: string[] }>(
    ctx.client,
    `SELECT b.hash, b.size, sb.blob_no,
            (SELECT array_agg(f.id::text ORDER BY f.id) FROM storage.files f WHERE f.blob_hash = b.hash) AS file_ids
       FROM ds_blobs sb JOIN storage.blobs b ON b.hash = sb.hash
      WHERE b.ref_count >= 1 AND b.content_type <> ALL($4::text[]) AND NOT (b.hash = ANY($5::text[]))
        AND NOT EXISTS (SELECT 1 FROM storage.files f WHERE f.blob_hash = b.hash AND f.drive_id = ANY($1::uuid[]))
      ORDER BY hashtextextended(b.hash, $2::bigint)
      LIMIT $3::int`,
    [excluded(ctx), ctx.options.seed, n(ctx), MEDIA, [...ctx.usedBlobs]],
  );
  if (picks.length < n(ctx))
    notApplicable('blob_bytes_missing', n(ctx), picks.length, blobBytesMissingAdvice(ctx));
  return picks.map((p) => {
    ctx.storage.push({ type: 'delete', hash: p.hash });
    ctx.usedBlobs.add(p.hash);
    return {
      type: 'blob',
      id: p.hash,
      label: `blob #${p.blob_no}`,
      detail: { size: toInt(p.size), fileIds: p.file_ids },
    } satisfies FaultResource;
  });
};

export const blobRefCountDrift: Injector = async (ctx) => {
  const picks = await rows<{ hash: string; ref_count: number; blob_no: number }>(
    ctx.client,
    `SELECT b.hash, b.ref_count, sb.blob_no
       FROM ds_blobs sb JOIN storage.blobs b ON b.hash = sb.hash
      WHERE b.ref_count >= 1 AND NOT (b.hash = ANY($4::text[]))
        AND NOT EXISTS (SELECT 1 FROM storage.files f WHERE f.blob_hash = b.hash AND f.drive_id = ANY($1::uuid[]))
      ORDER BY hashtextextended(b.hash, $2::bigint + 31)
      LIMIT $3::int`,
    [excluded(ctx), ctx.options.seed, n(ctx), [...ctx.usedBlobs]],
  );
  if (picks.length < n(ctx)) notApplicable('blob_ref_count_drift', n(ctx), picks.length, 'raise users');
  for (const p of picks) {
    await ctx.client.query('UPDATE storage.blobs SET ref_count = ref_count + 2 WHERE hash = $1', [p.hash]);
    ctx.usedBlobs.add(p.hash);
  }
  return picks.map((p) => ({
    type: 'blob',
    id: p.hash,
    label: `blob #${p.blob_no}`,
    detail: { storedRefCount: p.ref_count + 2, fileCount: p.ref_count },
  }));
};

export const blobOrphanedAtUnset: Injector = async (ctx) => {
  const prng = new Prng(ctx.options.seed, STREAM.faultBytes, 2);
  const out: FaultResource[] = [];
  for (let i = 0; i < n(ctx); i++) {
    const size = prng.int(ctx.options.blobSize.min, ctx.options.blobSize.max);
    const bytes = blobBytes(ctx.options.seed, STREAM.faultBytes, 2000 + i, size, 'other');
    const hash = ctx.blake3.hex(bytes);
    // The insert trigger marks a ref_count-0 row orphaned; clearing it is the fault.
    await ctx.client.query(
      `INSERT INTO storage.blobs (hash, size, ref_count, content_type, created_at)
       VALUES ($1, $2, 0, 'application/pdf', now() - interval '3 days')`,
      [hash, size],
    );
    await ctx.client.query('UPDATE storage.blobs SET orphaned_at = NULL WHERE hash = $1', [hash]);
    ctx.storage.push({ type: 'put', hash, bytes, modifiedAt: new Date(ctx.now.getTime() - 3 * DAY_MS) });
    ctx.usedBlobs.add(hash);
    out.push({ type: 'blob', id: hash, label: `never-marked blob ${i + 1} (${size} B)`, detail: { size } });
  }
  return out;
};
