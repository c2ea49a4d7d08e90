/**
 * `storage.files.category_order`, the "sort by type" bucket OxiCloud
 * computes from a file's name and MIME type when it inserts the row
 * (fact sheet §4 and §12 item 23; OxiCloud's `category_order_for` in
 * `src/application/dtos/display_helpers.rs`). It is not recomputed on a
 * rename, and a folder copy leaves the column's default, 9999.
 *
 * The rules, in OxiCloud's order: an exact MIME type, then a MIME prefix,
 * then the name's extension (lower-cased ASCII, at most 16 bytes), else
 * Document. {@link categoryOrderFor} and the SQL twin the checks run
 * (`CATEGORY_ORDER_SQL`, `@oxicloud/storage/oxicloud`) read the one
 * {@link CATEGORY_RULES}.
 */
export const CATEGORY_ORDERS = {
  Image: 100,
  Video: 200,
  Audio: 300,
  PDF: 400,
  Document: 500,
  Spreadsheet: 600,
  Presentation: 700,
  Archive: 800,
  Code: 900,
  Markdown: 1000,
  Text: 1100,
  Installer: 1200,
} as const;

/** What OxiCloud's column holds when nothing computed it (a folder copy's rows). */
export const CATEGORY_ORDER_DEFAULT = 9999;

/** A category OxiCloud sorts by. */
export type Category = keyof typeof CATEGORY_ORDERS;

/** Step 1: MIME types matched exactly. */
const BY_MIME: ReadonlyArray<readonly [Category, readonly string[]]> = [
  ['PDF', ['application/pdf']],
  [
    'Document',
    [
      'application/msword',
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      'application/vnd.oasis.opendocument.text',
    ],
  ],
  [
    'Spreadsheet',
    [
      'application/vnd.ms-excel',
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      'application/vnd.oasis.opendocument.spreadsheet',
      'text/csv',
    ],
  ],
  [
    'Presentation',
    [
      'application/vnd.ms-powerpoint',
      'application/vnd.openxmlformats-officedocument.presentationml.presentation',
      'application/vnd.oasis.opendocument.presentation',
    ],
  ],
  [
    'Archive',
    [
      'application/zip',
      'application/x-rar-compressed',
      'application/vnd.rar',
      'application/x-7z-compressed',
      'application/gzip',
      'application/x-tar',
    ],
  ],
  [
    'Code',
    [
      'application/json',
      'application/javascript',
      'application/typescript',
      'application/xml',
      'application/sql',
      'application/x-sh',
      'application/x-shellscript',
    ],
  ],
  [
    'Installer',
    [
      'application/x-apple-diskimage',
      'application/x-ms-dos-executable',
      'application/x-msdownload',
      'application/x-msi',
    ],
  ],
];

/** Step 2, in order: the first rule the MIME type matches (`prefix`, or `contains`). */
const BY_MIME_SHAPE: ReadonlyArray<{
  readonly category: Category;
  readonly prefix?: readonly string[];
  readonly contains?: readonly string[];
}> = [
  { category: 'Image', prefix: ['image/'] },
  { category: 'Video', prefix: ['video/'] },
  { category: 'Audio', prefix: ['audio/'] },
  { category: 'Code', prefix: ['text/x-'], contains: ['script', 'javascript'] },
  { category: 'Markdown', prefix: ['text/markdown'] },
  { category: 'Code', prefix: ['text/html', 'text/css'] },
  { category: 'Text', prefix: ['text/'] },
];

/** Step 3: the name's extension; any other extension, or none, is Document. */
const BY_EXTENSION: ReadonlyArray<readonly [Category, readonly string[]]> = [
  ['PDF', ['pdf']],
  ['Document', ['doc', 'docx', 'odt', 'rtf', 'txt']],
  ['Spreadsheet', ['xls', 'xlsx', 'ods', 'csv']],
  ['Presentation', ['ppt', 'pptx', 'odp', 'key']],
  ['Image', ['jpg', 'jpeg', 'png', 'gif', 'bmp', 'svg', 'webp', 'ico', 'tiff', 'heic', 'avif']],
  ['Video', ['mp4', 'avi', 'mkv', 'mov', 'wmv', 'flv', 'webm', 'm4v']],
  ['Audio', ['mp3', 'wav', 'ogg', 'flac', 'aac', 'wma', 'm4a', 'opus']],
  ['Archive', ['zip', 'rar', '7z', 'tar', 'gz', 'bz2', 'xz']],
  ['Installer', ['exe', 'msi', 'dmg', 'deb', 'rpm', 'appimage']],
  [
    'Code',
    [
      'js',
      'jsx',
      'ts',
      'tsx',
      'py',
      'rs',
      'go',
      'java',
      'c',
      'cpp',
      'cs',
      'rb',
      'php',
      'swift',
      'kt',
      'scala',
      'r',
      'lua',
      'pl',
      'html',
      'htm',
      'css',
      'scss',
      'json',
      'xml',
      'yaml',
      'yml',
      'toml',
      'sql',
      'sh',
      'bash',
      'bat',
      'ps1',
      'vue',
      'svelte',
    ],
  ],
  ['Markdown', ['md', 'markdown', 'rst']],
];

/** Extensions longer than this many bytes are not classified (OxiCloud's `MAX_CLASSIFIED_EXT`). */
const MAX_EXTENSION_BYTES = 16;

/** The three steps' tables, for the SQL twin. */
export const CATEGORY_RULES = {
  byMime: BY_MIME,
  byMimeShape: BY_MIME_SHAPE,
  byExtension: BY_EXTENSION,
  maxExtensionBytes: MAX_EXTENSION_BYTES,
} as const;

/** The extension OxiCloud classifies by: after the last `.` of the last path segment, ASCII lower-cased. */
function extensionOf(name: string): string | null {
  const base = name.slice(name.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  if (dot === -1) return null;
  const ext = base.slice(dot + 1);
  if (ext === '' || Buffer.byteLength(ext) > MAX_EXTENSION_BYTES) return null;
  return ext.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** OxiCloud's `category_order_for(name, mime)`. */
export function categoryOrderFor(name: string, mime: string): number {
  for (const [category, types] of BY_MIME) if (types.includes(mime)) return CATEGORY_ORDERS[category];
  for (const rule of BY_MIME_SHAPE) {
    if (
      rule.prefix?.some((p) => mime.startsWith(p)) === true ||
      rule.contains?.some((c) => mime.includes(c)) === true
    ) {
      return CATEGORY_ORDERS[rule.category];
    }
  }
  const ext = extensionOf(name);
  if (ext !== null) {
    for (const [category, exts] of BY_EXTENSION) if (exts.includes(ext)) return CATEGORY_ORDERS[category];
  }
  return CATEGORY_ORDERS.Document;
}
