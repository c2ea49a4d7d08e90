import { fileTypeFromBuffer } from 'file-type';

/** What sniffing the first bytes of a blob found. */
export interface MimeSniff {
  readonly mime: string;
  readonly ext: string;
}

/**
 * Recorded types that say "unknown": a sniff never contradicts them.
 */
const UNKNOWN_TYPES = new Set(['application/octet-stream', 'binary/octet-stream', 'application/unknown', '']);

/**
 * Sniffed types that are containers of many formats (docx/xlsx/epub/jar are
 * zip; doc/xls/msi are CFB): the first 4 KiB cannot tell which member, so a
 * container sniff is not confident enough to contradict a recorded type.
 */
const CONTAINER_TYPES = new Set([
  'application/zip',
  'application/x-cfb',
  'application/xml',
  'application/x-tar',
]);

/**
 * Types that name the same bytes: the container families a sniffer cannot
 * split (ISO-BMFF audio vs video, Ogg, Matroska, WebM) and the historical
 * aliases (`image/jpg`, `audio/x-wav`, …).
 */
const FAMILIES: readonly (readonly string[])[] = [
  ['image/jpeg', 'image/jpg', 'image/pjpeg'],
  ['audio/mpeg', 'audio/mp3', 'audio/mpeg3', 'audio/x-mpeg'],
  ['audio/wav', 'audio/x-wav', 'audio/wave', 'audio/vnd.wave'],
  [
    'video/mp4',
    'audio/mp4',
    'audio/x-m4a',
    'audio/m4a',
    'video/x-m4v',
    'video/quicktime',
    'video/3gpp',
    'video/3gpp2',
  ],
  ['audio/ogg', 'video/ogg', 'application/ogg', 'audio/opus', 'audio/vorbis'],
  ['video/x-matroska', 'audio/x-matroska', 'video/matroska', 'video/webm', 'audio/webm'],
  ['application/gzip', 'application/x-gzip'],
  ['image/x-icon', 'image/vnd.microsoft.icon'],
  ['audio/flac', 'audio/x-flac'],
  ['audio/aac', 'audio/x-aac', 'audio/aacp'],
  ['image/bmp', 'image/x-ms-bmp'],
  ['image/tiff', 'image/x-tiff'],
  ['application/x-rar-compressed', 'application/vnd.rar'],
  ['application/x-7z-compressed', 'application/7z'],
];
const FAMILY_OF = new Map<string, number>(
  FAMILIES.flatMap((members, i) => members.map((m) => [m, i] as const)),
);

/** Lower case, without parameters (`; charset=…`). */
export function normaliseMime(value: string): string {
  return (value.split(';')[0] ?? '').trim().toLowerCase();
}

/** The mime type of `head` (a blob's first bytes) by its signature, or `null` when no signature matches. */
export async function sniffMime(head: Uint8Array): Promise<MimeSniff | null> {
  if (head.length === 0) return null;
  const found = await fileTypeFromBuffer(head);
  return found ? { mime: found.mime, ext: found.ext } : null;
}

/**
 * Whether a recorded content type contradicts a sniff. Only a confident
 * sniff counts: nothing sniffed, a container format, or a recorded type of
 * "unknown" never contradicts; same family or alias is no contradiction.
 */
export function mimeContradicts(recorded: string | null, sniffed: MimeSniff | null): boolean {
  if (recorded === null || sniffed === null) return false;
  const want = normaliseMime(recorded);
  const got = normaliseMime(sniffed.mime);
  if (UNKNOWN_TYPES.has(want) || CONTAINER_TYPES.has(got)) return false;
  if (want === got) return false;
  const a = FAMILY_OF.get(want);
  return a === undefined || a !== FAMILY_OF.get(got);
}
