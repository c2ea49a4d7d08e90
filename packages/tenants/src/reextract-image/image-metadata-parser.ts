import exifr from 'exifr';
import type { ImageMetadata } from '../ports/media-file-repository.js';

/**
 * What exifr is asked for: IFD0 (Make, Model, ImageWidth/Height), the Exif
 * IFD (DateTimeOriginal, CreateDate, OffsetTime*, ExifImageWidth/Height) and
 * PNG's IHDR. Values stay raw (`reviveValues: false`) so dates are parsed
 * here, deterministically, not in the process' local time zone.
 */
const EXIFR_OPTIONS = {
  tiff: true,
  exif: true,
  ihdr: true,
  gps: false,
  ifd1: false,
  interop: false,
  xmp: false,
  icc: false,
  iptc: false,
  jfif: false,
  makerNote: false,
  userComment: false,
  translateKeys: true,
  translateValues: false,
  reviveValues: false,
  sanitize: true,
  mergeOutput: true,
} as const;

const EXIF_DATE = /^(\d{4}):(\d{2}):(\d{2})[ T](\d{2}):(\d{2}):(\d{2})/;
const OFFSET = /^([+-])(\d{2}):?(\d{2})$/;

/**
 * An EXIF date (`YYYY:MM:DD HH:MM:SS`, no zone) as an instant: with its
 * `OffsetTime*` when the file gives one, else read as UTC (EXIF has no zone,
 * and the server's zone has nothing to do with where the photo was taken).
 * `null` for blank, zeroed or impossible dates.
 */
export function parseExifDate(value: unknown, offset?: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const m = EXIF_DATE.exec(value.trim());
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (
    year < 1800 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > 31 ||
    hour > 23 ||
    minute > 59 ||
    second > 60
  ) {
    return null;
  }
  let ms = Date.UTC(year, month - 1, day, hour, minute, second);
  const o = typeof offset === 'string' ? OFFSET.exec(offset.trim()) : null;
  if (o) {
    const sign = o[1] === '-' ? -1 : 1;
    ms -= sign * (Number(o[2]) * 60 + Number(o[3])) * 60_000;
  }
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) || date.getUTCDate() !== day ? null : date;
}

/** Width and height read from the format's own header: JPEG SOFn, PNG IHDR, GIF screen descriptor. */
export function sniffDimensions(bytes: Uint8Array): { width: number; height: number } | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length >= 24 && view.getUint32(0) === 0x89504e47 && view.getUint32(12) === 0x49484452) {
    return { width: view.getUint32(16), height: view.getUint32(20) };
  }
  if (bytes.length >= 10 && bytes[0] === 0x47 && bytes[1] === 0x49 && bytes[2] === 0x46) {
    return { width: view.getUint16(6, true), height: view.getUint16(8, true) };
  }
  if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8) {
    let at = 2;
    while (at + 9 <= bytes.length) {
      if (bytes[at] !== 0xff) return null;
      const marker = bytes[at + 1] as number;
      if (marker === 0xff) {
        at += 1;
        continue;
      }
      if (marker === 0xd9 || marker === 0xda) return null;
      const length = view.getUint16(at + 2);
      const isSof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
      if (isSof) return { height: view.getUint16(at + 5), width: view.getUint16(at + 7) };
      at += 2 + length;
    }
  }
  return null;
}

const text = (value: unknown): string | null => {
  if (typeof value !== 'string') return null;
  const trimmed = value.replaceAll('\u0000', '').trim();
  return trimmed ? trimmed : null;
};

const positive = (value: unknown): number | null =>
  typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= 2_147_483_647 ? value : null;

/**
 * Reads the capture date (DateTimeOriginal, else CreateDate), camera make and
 * model, and width and height (Exif pixel dimensions, else the format's own
 * header) of an image with exifr.
 *
 * @throws when the bytes are neither a format exifr reads nor a JPEG/PNG/GIF
 * whose dimensions can be read.
 */
export async function parseImageMetadata(bytes: Uint8Array): Promise<ImageMetadata> {
  let tags: Record<string, unknown> | undefined;
  let exifrError: unknown;
  try {
    tags = (await exifr.parse(
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      EXIFR_OPTIONS,
    )) as Record<string, unknown> | undefined;
  } catch (error) {
    exifrError = error;
  }
  const sniffed = sniffDimensions(bytes);
  if (exifrError !== undefined && sniffed === null) {
    const reason = exifrError instanceof Error ? exifrError.message : String(exifrError);
    throw new Error(`not an image exifr can read: ${reason}`, { cause: exifrError });
  }
  const t = tags ?? {};
  const capturedAt =
    parseExifDate(t['DateTimeOriginal'], t['OffsetTimeOriginal']) ??
    parseExifDate(t['CreateDate'], t['OffsetTimeDigitized'] ?? t['OffsetTime']);
  return {
    capturedAt,
    cameraMake: text(t['Make']),
    cameraModel: text(t['Model']),
    width: positive(t['ExifImageWidth']) ?? positive(t['ImageWidth']) ?? sniffed?.width ?? null,
    height: positive(t['ExifImageHeight']) ?? positive(t['ImageHeight']) ?? sniffed?.height ?? null,
  };
}
