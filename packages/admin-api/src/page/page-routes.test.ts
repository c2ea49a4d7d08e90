/// <reference path="./page-bundle.d.ts" />
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { OpenAPIHono } from '@hono/zod-openapi';
import { SEVERITIES } from '@oxicloud/consistency/severity';
import { describe, expect, it } from 'vitest';
import type { AdminEnv } from '../http/admin-env.js';
import { ADMIN_PAGE_CSS } from './page-css.js';
import { ADMIN_PAGE_CSP, adminPageSize, registerAdminPageRoutes } from './page-routes.js';
// The bundled script, as the build makes it (build/page-bundle.ts) and the routes serve it.
import ADMIN_PAGE_JS from './script/admin-jobs.ts?page-bundle';

function pageApp(): OpenAPIHono<AdminEnv> {
  const app = new OpenAPIHono<AdminEnv>();
  app.notFound((c) => c.json({ error: { code: 'NOT_FOUND', message: 'no route' } }, 404));
  registerAdminPageRoutes(app);
  return app;
}

async function assetUrls(app: OpenAPIHono<AdminEnv>): Promise<{ js: string; css: string }> {
  const html = await (await app.request('/admin/jobs')).text();
  const js = /<script type="module" src="([^"]+)"/.exec(html)?.[1];
  const css = /<link rel="stylesheet" href="([^"]+)"/.exec(html)?.[1];
  if (!js || !css) throw new Error(`asset URLs missing from the page:\n${html}`);
  return { js, css };
}

describe('the /admin/jobs page routes', () => {
  it('serve the HTML shell at /admin/jobs with a strict CSP and no-cache', async () => {
    const res = await pageApp().request('/admin/jobs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('content-security-policy')).toBe(ADMIN_PAGE_CSP);
    expect(ADMIN_PAGE_CSP).toContain("script-src 'self'");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    const html = await res.text();
    expect(html).toMatch(/<label for="token">Admin token<\/label>/);
    expect(html).toMatch(/<input id="token" name="token" type="password"/);
    expect(html).toContain('role="dialog"');
    // No inline script (the CSP forbids it) and no data.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  });

  it.each([
    '/admin/jobs/',
    '/admin/jobs/files_consistency',
    '/admin/jobs/files_consistency/runs/01968a4e-2f6c-7d1e-9a55-0a1b2c3d4e5f',
    '/admin/jobs/files_consistency/runs/01968a4e-2f6c-7d1e-9a55-0a1b2c3d4e5f/findings',
    '/admin/jobs?highlight=dedup_gc',
  ])('answer the same shell for the deep link %s', async (path) => {
    const app = pageApp();
    const shell = await (await app.request('/admin/jobs')).text();
    const res = await app.request(path);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(shell);
  });

  it('answer HEAD without a body and refuse other methods with 405', async () => {
    const app = pageApp();
    const head = await app.request('/admin/jobs', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const post = await app.request('/admin/jobs', { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(((await post.json()) as { error: { code: string } }).error.code).toBe('METHOD_NOT_ALLOWED');
    expect((await app.request('/admin/jobs/x/runs/y', { method: 'DELETE' })).status).toBe(405);
  });

  it('serve the script and stylesheet with their content types, immutable at their versioned URL', async () => {
    const app = pageApp();
    const { js, css } = await assetUrls(app);
    expect(js).toMatch(/^\/admin\/jobs\/assets\/admin-jobs\.js\?v=[0-9a-f]{16}$/);
    const script = await app.request(js);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await script.text()).toBe(ADMIN_PAGE_JS);
    const style = await app.request(css);
    expect(style.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(await style.text()).toBe(ADMIN_PAGE_CSS);
    // Without (or with a stale) version: revalidate every time.
    const stale = await app.request('/admin/jobs/assets/admin-jobs.js?v=0000');
    expect(stale.headers.get('cache-control')).toBe('no-cache');
  });

  it('revalidate by ETag (304) and gzip when the client accepts it', async () => {
    const app = pageApp();
    const { js } = await assetUrls(app);
    const first = await app.request(js);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[0-9a-f]{16}"$/);
    const again = await app.request(js, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    const page = await app.request('/admin/jobs', { headers: { 'if-none-match': 'W/"x", ' + etag } });
    expect(page.status).toBe(200);
    const zipped = await app.request(js, { headers: { 'accept-encoding': 'br, gzip' } });
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect(zipped.headers.get('vary')).toBe('Accept-Encoding');
    const bytes = Buffer.from(await zipped.arrayBuffer());
    expect(Number(zipped.headers.get('content-length'))).toBe(bytes.byteLength);
    expect(gunzipSync(bytes).toString('utf8')).toBe(ADMIN_PAGE_JS);
  });

  it('answer 404 for an unknown asset', async () => {
    const res = await pageApp().request('/admin/jobs/assets/secrets.json');
    expect(res.status).toBe(404);
  });

  it('keep the whole page well under 90 KB (and far less on the wire)', () => {
    const size = adminPageSize();
    // 60 KB before the health view and the findings list (issue 18) took ~9 KB; 67 KB (19 KB gzipped)
    // before the repair panel (issue 21) took ~18.5 KB (~4.6 KB gzipped). Issue 29 minified the script's
    // whitespace: 89.6 KB (24.9 KB gzipped) → 73.9 KB (22.6 KB gzipped).
    expect(size.bytes).toBeLessThan(90_000);
    expect(size.gzipBytes).toBeLessThan(25_000);
  });
});

describe('the page script', () => {
  it('is the TypeScript source bundled into one self-contained ES module', () => {
    // Bundled: no import left for the browser to fetch, and the types are gone.
    expect(ADMIN_PAGE_JS).not.toMatch(/^\s*import\s/m);
    expect(ADMIN_PAGE_JS).not.toMatch(/\binterface\s+\w+\s*\{/);
    // The severity list comes from @oxicloud/consistency, bundled in.
    for (const name of SEVERITIES) expect(ADMIN_PAGE_JS).toContain(JSON.stringify(name));
  });

  it('is one valid ES module', () => {
    const dir = mkdtempSync(join(tmpdir(), 'admin-page-'));
    try {
      const file = join(dir, 'admin-jobs.mjs');
      writeFileSync(file, ADMIN_PAGE_JS);
      const check = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8' });
      expect(check.stderr).toBe('');
      expect(check.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('never writes HTML from strings and reads data only from the admin API (/api/admin/jobs, /api/admin/nodes, /api/admin/findings, /api/admin/repairs)', () => {
    expect(ADMIN_PAGE_JS).not.toMatch(
      /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/,
    );
    // The bundle is whitespace-minified: the patterns allow for spaces or none.
    expect(ADMIN_PAGE_JS).toMatch(/\bAPI_ROOT ?= ?"\/api\/admin";/);
    expect(ADMIN_PAGE_JS.match(/\bfetch\(/g)).toHaveLength(1);
    expect(ADMIN_PAGE_JS).toContain('fetch(url');
    expect(ADMIN_PAGE_JS).toMatch(/path\.startsWith\(`\$\{API_ROOT\}\/`\) ?\? ?path ?: ?API ?\+ ?path/);
    expect(ADMIN_PAGE_JS).toContain('"/api/admin/findings"');
    expect(ADMIN_PAGE_JS).toContain('"/api/admin/repairs"');
    expect(ADMIN_PAGE_JS).toContain('"/api/admin/jobs/repair/runs"');
    expect(ADMIN_PAGE_JS).toContain('sessionStorage');
    expect(ADMIN_PAGE_JS).not.toContain('localStorage');
  });
});

/** WCAG relative luminance of a #rrggbb colour. */
function luminance(hex: string): number {
  const channel = (i: number) => {
    const c = Number.parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
}

function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

describe('the page stylesheet', () => {
  const vars = new Map(
    [...ADMIN_PAGE_CSS.matchAll(/--([\w-]+):\s*(#[0-9a-f]{6})/g)].map((m) => [m[1], m[2]]),
  );
  const pairs: Array<[string, string]> = [
    ['fg', 'bg'],
    ['fg', 'panel'],
    ['muted', 'bg'],
    ['muted', 'panel'],
    ['accent', 'bg'],
    ['accent-fg', 'accent'],
    ['ok-fg', 'ok-bg'],
    ['err-fg', 'err-bg'],
    ['run-fg', 'run-bg'],
    ['amber-fg', 'amber-bg'],
    ['grey-fg', 'grey-bg'],
  ];

  it.each(pairs)('has a contrast of at least 4.5:1 for --%s on --%s', (fg, bg) => {
    const a = vars.get(fg);
    const b = vars.get(bg);
    expect(a, fg).toBeDefined();
    expect(b, bg).toBeDefined();
    expect(contrast(a!, b!)).toBeGreaterThanOrEqual(4.5);
  });

  it('turns animations off under prefers-reduced-motion and shows keyboard focus', () => {
    expect(ADMIN_PAGE_CSS).toMatch(
      /@media \(prefers-reduced-motion: reduce\)\s*{[^}]*animation: none !important/,
    );
    expect(ADMIN_PAGE_CSS).toMatch(/:focus-visible \{ outline: 3px solid/);
  });
});
