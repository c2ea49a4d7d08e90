/// <reference path="./page-bundle.d.ts" />
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { Context, Hono } from 'hono';
import type { AdminEnv } from '../http/admin-env.js';
import { methodNotAllowed } from '../http/method-not-allowed.js';
import { ADMIN_PAGE_CSS } from './page-css.js';
import { adminPageHtml } from './page-html.js';
// The page's script (./script), bundled for the browser by the build into one ES module as text.
import ADMIN_PAGE_JS from './script/admin-jobs.ts?page-bundle';

/** Where the operator page is served; deep links live below it (`/admin/jobs/<name>/runs/<id>`). */
export const ADMIN_PAGE_PATH = '/admin/jobs';
/** Where the page's script and stylesheet are served (`/admin/jobs/assets/<file>`). */
export const ADMIN_PAGE_ASSETS_PATH = '/admin/jobs/assets';

/**
 * The page's Content-Security-Policy: only its own script and stylesheet,
 * API calls to the same origin, no inline code, no framing.
 */
export const ADMIN_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface Asset {
  readonly type: string;
  readonly body: Uint8Array;
  readonly gzip: Uint8Array;
  /** Short content hash: the `?v=` of the asset URL and the ETag. */
  readonly version: string;
}

function asset(type: string, text: string): Asset {
  const body = new TextEncoder().encode(text);
  return {
    type,
    body,
    gzip: new Uint8Array(gzipSync(body, { level: 9 })),
    version: createHash('sha256').update(body).digest('hex').slice(0, 16),
  };
}

let built: { readonly assets: ReadonlyMap<string, Asset>; readonly html: Asset } | undefined;

/** Builds the assets once (hashes, gzip), on first use. */
function pageAssets(): NonNullable<typeof built> {
  if (built) return built;
  const assets = new Map<string, Asset>([
    ['admin-jobs.js', asset('text/javascript; charset=utf-8', ADMIN_PAGE_JS)],
    ['admin-jobs.css', asset('text/css; charset=utf-8', ADMIN_PAGE_CSS)],
  ]);
  const url = (file: string) => `${ADMIN_PAGE_ASSETS_PATH}/${file}?v=${assets.get(file)?.version}`;
  const html = asset(
    'text/html; charset=utf-8',
    adminPageHtml({ css: url('admin-jobs.css'), js: url('admin-jobs.js') }),
  );
  built = { assets, html };
  return built;
}

/** The total size in bytes of the page (HTML + JS + CSS), uncompressed and gzipped. */
export function adminPageSize(): { readonly bytes: number; readonly gzipBytes: number } {
  const { assets, html } = pageAssets();
  const all = [html, ...assets.values()];
  return {
    bytes: all.reduce((sum, a) => sum + a.body.byteLength, 0),
    gzipBytes: all.reduce((sum, a) => sum + a.gzip.byteLength, 0),
  };
}

function send(c: Context<AdminEnv>, file: Asset, headers: Record<string, string>): Response {
  const etag = `"${file.version}"`;
  const common: Record<string, string> = {
    ETag: etag,
    Vary: 'Accept-Encoding',
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  };
  const match = c.req.header('if-none-match');
  if (match?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) {
    return new Response(null, { status: 304, headers: common });
  }
  const gzip = /\bgzip\b/.test(c.req.header('accept-encoding') ?? '');
  const body = gzip ? file.gzip : file.body;
  return new Response(c.req.method === 'HEAD' ? null : (body as Uint8Array<ArrayBuffer>), {
    status: 200,
    headers: {
      ...common,
      'Content-Type': file.type,
      'Content-Length': String(body.byteLength),
      ...(gzip ? { 'Content-Encoding': 'gzip' } : {}),
    },
  });
}

/**
 * Mounts the operator page: `GET /admin/jobs` and every deep link below it
 * (`/admin/jobs/<name>`, `/admin/jobs/<name>/runs/<id>[/findings]`,
 * `/admin/jobs?highlight=<name>`) answer the same HTML shell, and
 * `GET /admin/jobs/assets/<file>` its script and stylesheet. All public: the
 * page holds no data, it asks the operator for a token and reads
 * `/api/admin/jobs*` with it.
 *
 * Caching: the HTML is `no-cache` (revalidated by ETag, so a deploy shows at
 * once); assets requested with their current `?v=<hash>` are immutable for a
 * year, any other request of them revalidates.
 *
 * @example
 * ```ts
 * const app = new OpenAPIHono<AdminEnv>();
 * registerAdminPageRoutes(app);
 * ```
 */
export function registerAdminPageRoutes(app: Hono<AdminEnv>): void {
  app.get(`${ADMIN_PAGE_ASSETS_PATH}/:file`, (c) => {
    const file = pageAssets().assets.get(c.req.param('file'));
    if (!file) return c.notFound();
    const current = c.req.query('v') === file.version;
    return send(c, file, {
      'Cache-Control': current ? 'public, max-age=31536000, immutable' : 'no-cache',
    });
  });
  methodNotAllowed(app, `${ADMIN_PAGE_ASSETS_PATH}/:file`, ['GET', 'HEAD']);

  const page = (c: Context<AdminEnv>) =>
    send(c, pageAssets().html, {
      'Cache-Control': 'no-cache',
      'Content-Security-Policy': ADMIN_PAGE_CSP,
      'Referrer-Policy': 'no-referrer',
      'X-Frame-Options': 'DENY',
    });
  app.get(ADMIN_PAGE_PATH, page);
  app.get(`${ADMIN_PAGE_PATH}/*`, page);
  methodNotAllowed(app, ADMIN_PAGE_PATH, ['GET', 'HEAD']);
  methodNotAllowed(app, `${ADMIN_PAGE_PATH}/*`, ['GET', 'HEAD']);
}
