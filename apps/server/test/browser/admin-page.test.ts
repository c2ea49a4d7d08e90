import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { adminPageSize } from '@oxicloud/admin-api';
import { createTestDatabase, freePort, type TestDatabase } from '@oxicloud/test-support';
import { type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliProcess, cleanEnv, runCli, startCli, waitForStatus } from '../cli-process.js';

/** Debian's chromium, installed by scripts/setup-system.sh. */
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];
/** Screenshots of the main states (the folder is gitignored). */
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/admin-page/', import.meta.url));
/** The README's screenshots. */
const SCREENSHOTS = fileURLToPath(new URL('../../../../docs/screenshots/', import.meta.url));
/** The page polls every 5 s: a state change shows within one poll plus the run's own step. */
const UI_TIMEOUT = 20_000;

/** The page's red (`--err-bg` / `--err-fg`): the worst severity's badge. */
const RED = { background: 'rgb(253, 231, 231)', color: 'rgb(161, 21, 27)' };

/** The browser's `getComputedStyle` (this file is typed without the DOM lib). */
type Styled = { getComputedStyle(element: unknown): Record<string, string> };

/** An element's computed badge colours. */
function colours(locator: Locator): Promise<{ background: string; color: string }> {
  return locator.evaluate((el) => {
    const style = (globalThis as unknown as Styled).getComputedStyle(el);
    return { background: style['backgroundColor'] ?? '', color: style['color'] ?? '' };
  });
}

/** The files_consistency run the test watches: small batches with a pause between them, so it lasts ~20 s (600 files). */
const SLOW_RUN_PARAMS = { batch_size: 10, throttle_ms: 300 };

interface RunSummaryJson {
  run_id: string;
  status: string;
  progress: { processed: number; total: number | null };
}

/**
 * The operator page at /admin/jobs in a real Chromium, against a real
 * `oxijobs serve` process on a fresh database seeded with a generated
 * OxiCloud dataset (with faults, so the consistency run has findings). The page talks
 * only to /api/admin/jobs* with the token the operator pastes.
 */
describe('the /admin/jobs page in Chromium against oxijobs serve', () => {
  let db: TestDatabase;
  let dataDir: string;
  let profileDir: string;
  let env: Record<string, string>;
  let server: CliProcess;
  let base: string;
  let token: string;
  let context: BrowserContext;
  let page: Page;
  let runId: string;
  const pageErrors: string[] = [];

  const api = async (path: string, init: RequestInit = {}): Promise<Response> =>
    fetch(`${base}/api/admin/jobs${path}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string> | undefined) },
    });
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  const row = (job: string): Locator => page.locator(`#jobs-table tbody tr[data-job="${job}"]`);
  const runDetail = (): Locator => page.locator('#run-detail');
  const processed = async (): Promise<number> =>
    Number(await runDetail().locator('[data-progress]').getAttribute('data-progress'));

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `the admin page browser test needs Chromium at ${CHROMIUM}; install it with scripts/setup-system.sh (as root: apt-get install chromium) and run the tests again`,
      );
    }
    mkdirSync(ARTIFACTS, { recursive: true });
    db = await createTestDatabase();
    dataDir = join(tmpdir(), `oxijobs-admin-page-${process.pid}`);
    mkdirSync(dataDir, { recursive: true });
    const httpPort = await freePort();
    base = `http://127.0.0.1:${httpPort}`;
    env = cleanEnv({
      DATABASE_URL: db.url,
      OXICLOUD_DATA_DIR: dataDir,
      OXICLOUD_HTTP_PORT: String(httpPort),
      OXICLOUD_LOG_LEVEL: 'warn',
      OXICLOUD_TRASH_CLEANUP_INTERVAL_HOURS: '24',
      OXICLOUD_STORAGE_USAGE_RECONCILE_INTERVAL_SECONDS: '600',
    });
    server = startCli(['serve'], env);
    await waitForStatus(`${base}/healthz`, 200, { process: server, timeoutMs: 60_000 });
    // The first boot made "admin" (the database had no admin); the seed adds the dataset's own.
    // 10 personal and 2 shared drives of 50 files, few of them multi-chunk (their bytes are most of the seed's time).
    const seed = await runCli(
      [
        'seed',
        ...['--users', '10', '--files-per-user', '50', '--multi-chunk-share', '0.02', '--seed', '11'],
        ...['--faults', 'missing_blob_row,blob_size_mismatch,live_file_under_trashed_folder'],
      ],
      env,
    );
    expect(seed.stderr).not.toContain('oxijobs:');
    expect(seed.code).toBe(0);
    const minted = await runCli(['token', '--user', 'admin', '--expires-in', '1h'], env);
    expect(minted.code).toBe(0);
    token = minted.stdout.trim().split('\n').at(-1)!;

    profileDir = mkdtempSync(join(tmpdir(), 'admin-page-chromium-'));
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 860 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(UI_TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(String(error)));
  }, 180_000);

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await Promise.race([server.exited, new Promise((r) => setTimeout(r, 15_000))]);
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    }
    await db?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
  });

  it('serves the current page, well under 90 KB in all', async () => {
    const html = await (await fetch(`${base}/admin/jobs`)).text();
    const urls = [...html.matchAll(/(?:src|href)="(\/admin\/jobs\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(urls).toHaveLength(2);
    let bytes = Buffer.byteLength(html);
    for (const url of urls) {
      const res = await fetch(`${base}${url}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toContain('immutable');
      bytes += Buffer.byteLength(await res.text());
    }
    // The server runs from dist: a stale build of @oxicloud/admin-api would test an old page.
    expect(
      bytes,
      'the server serves another page than packages/admin-api/src: rebuild with pnpm exec turbo run build --filter=@oxicloud/server...',
    ).toBe(adminPageSize().bytes);
    expect(bytes).toBeLessThan(90_000);
  });

  it('loads fast and shows only the sign-in form without a token', async () => {
    await page.goto(`${base}/admin/jobs`);
    // Navigation start to DOMContentLoaded (string expressions: this file is typed without the DOM lib).
    const loadMs = await page.evaluate<number>(
      "(() => { const nav = performance.getEntriesByType('navigation')[0]; return nav.domContentLoadedEventEnd - nav.startTime; })()",
    );
    expect(loadMs).toBeGreaterThan(0);
    expect(loadMs).toBeLessThan(2000);
    const field = page.getByLabel('Admin token');
    await expect.poll(() => field.isVisible()).toBe(true);
    expect(await field.getAttribute('type')).toBe('password');
    await expect.poll(() => page.evaluate<string | undefined>('document.activeElement?.id')).toBe('token');
    expect(await page.locator('#jobs-view').isVisible()).toBe(false);
    expect(await page.locator('#jobs-table tbody tr').count()).toBe(0);
    await shot('01-sign-in');
  });

  it('refuses a bad token with a clear message and stays on the sign-in form', async () => {
    await page.getByLabel('Admin token').fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const message = page.locator('#signin-message');
    await expect.poll(() => message.textContent()).toContain('The token was not accepted');
    expect(await message.textContent()).toContain('UNAUTHENTICATED');
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
    expect(await page.locator('#jobs-view').isVisible()).toBe(false);
  });

  it('signs in and lists every job with its cadence, last run, status and actions', async () => {
    await page.getByLabel('Admin token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await row('files_consistency').waitFor();
    const listed = (await (await api('')).json()) as Array<{ name: string; supports_deep: boolean }>;
    expect(await page.locator('#jobs-table tbody tr').count()).toBe(listed.length);
    expect(await row('trash_cleanup').locator('td').nth(0).textContent()).toBe('every 24 h');
    expect(await row('storage_reconcile').locator('td').nth(0).textContent()).toBe('every 10 min');
    expect(await row('files_consistency').locator('td').nth(0).textContent()).toBe('on demand');
    expect(await row('files_consistency').locator('td').nth(1).textContent()).toBe('never');
    for (const job of listed) {
      const deep = page.getByRole('button', { name: `Run deep ${job.name}`, exact: true });
      expect(await deep.isVisible(), job.name).toBe(job.supports_deep);
      expect(await page.getByRole('button', { name: `Run ${job.name}`, exact: true }).isVisible()).toBe(true);
    }
    expect(listed.filter((j) => j.supports_deep).map((j) => j.name)).toEqual(
      expect.arrayContaining(['consistency_batch', 'storage_consistency']),
    );
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(1);
    await shot('02-jobs');
  });

  it('runs a Part 1 job in the background and shows its new status', async () => {
    const clickedAt = Date.now();
    const response = page.waitForResponse((r) => r.url().includes('/trash_cleanup/trigger'));
    await page.getByRole('button', { name: 'Run trash_cleanup', exact: true }).click();
    const trigger = await response;
    expect(trigger.status()).toBe(202);
    expect(new URL(trigger.url()).searchParams.get('wait')).toBe('false');
    const time = row('trash_cleanup').locator('td').nth(1).locator('time');
    await expect
      .poll(async () => Date.parse((await time.getAttribute('datetime').catch(() => null)) ?? '0'), {
        timeout: UI_TIMEOUT,
      })
      .toBeGreaterThanOrEqual(clickedAt - 1000);
    // It may show Running (blue) for a poll first: the last run time is then the start of the run.
    await expect
      .poll(() => row('trash_cleanup').getAttribute('data-status'), { timeout: UI_TIMEOUT })
      .toBe('ok');
    expect(await row('trash_cleanup').locator('.badge').textContent()).toBe('ok');
  });

  it('opens the drawer on a recoverable job and watches its run progress', async () => {
    // The page's Run has no params: the slow run is started through the API, then watched on the page.
    const started = await api('/files_consistency/trigger', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(SLOW_RUN_PARAMS),
    });
    expect(started.status).toBe(202);
    runId = ((await started.json()) as { run_id: string }).run_id;

    await row('files_consistency').focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await page.evaluate<boolean>("document.activeElement?.closest('dialog') != null")).toBe(true);
    expect(new URL(page.url()).pathname).toBe('/admin/jobs/files_consistency');
    await runDetail().locator('.badge[data-status="Running"]').waitFor();
    const first = await processed();
    await expect.poll(processed, { timeout: UI_TIMEOUT }).toBeGreaterThan(first);
    const bar = runDetail().locator('progress');
    expect(Number(await bar.getAttribute('max'))).toBeGreaterThan(0);
    expect(await runDetail().locator('.progress-text').textContent()).toMatch(/[\d,]+ \/ [\d,]+ processed/);
    expect(await row('files_consistency').getAttribute('data-status')).toBe('Running');
    await shot('03-run-progress');
  });

  it('cancels the run: it lands Paused with its cursor, then resumes and completes', async () => {
    await runDetail().getByRole('button', { name: 'Cancel' }).click();
    await runDetail().locator('.badge[data-status="Paused"]').waitFor({ timeout: UI_TIMEOUT });
    const paused = (await (await api(`/files_consistency/runs/${runId}`)).json()) as RunSummaryJson;
    expect(paused.status).toBe('Paused');
    expect(paused.progress.processed).toBeLessThan(paused.progress.total ?? Number.POSITIVE_INFINITY);
    expect(await runDetail().locator('dd .mono').nth(1).textContent()).not.toBe('— (start)');
    await expect.poll(() => row('files_consistency').getAttribute('data-status')).toBe('Paused');
    // The job's last outcome is the cancelled run: Paused (amber), not a green "ok".
    const outcomeBadge = page.locator('#outcome .badge').first();
    await expect.poll(() => outcomeBadge.getAttribute('data-status'), { timeout: UI_TIMEOUT }).toBe('Paused');
    expect(await outcomeBadge.textContent()).toBe('Paused');
    await shot('04-paused');

    await runDetail().getByRole('button', { name: 'Resume' }).click();
    await runDetail().locator('.badge[data-status="Running"]').waitFor({ timeout: UI_TIMEOUT });
    await runDetail().locator('.badge[data-status="Completed"]').waitFor({ timeout: 90_000 });
    const done = (await (await api(`/files_consistency/runs/${runId}`)).json()) as RunSummaryJson;
    expect(done).toMatchObject({ run_id: runId, status: 'Completed' });
    expect(await page.locator('#runs tbody tr').count()).toBe(1);
    // What the count means, as the check declares it: the findings the run found (not only the new ones).
    await expect
      .poll(() => page.locator('#outcome .badge').first().getAttribute('data-status'), {
        timeout: UI_TIMEOUT,
      })
      .toBe('ok');
    const meanings = await page.locator('#outcome dl.fields').textContent();
    expect(meanings).toContain('findings this run found:');
    expect(meanings).not.toContain('new findings');
    await shot('05-completed');
  }, 150_000);

  it('shows the run findings with counts per kind and severity, filterable by severity', async () => {
    await page.getByRole('tab', { name: 'Findings' }).click();
    const rows = page.locator('#findings-table tbody tr');
    await rows.first().waitFor();
    const body = (await (await api(`/files_consistency/runs/${runId}/findings?limit=500`)).json()) as {
      total: number;
      counts: Array<{ kind: string; severity: string; count: number }>;
    };
    expect(body.total).toBeGreaterThan(0);
    expect(await rows.count()).toBe(Math.min(body.total, 100));
    expect(await page.locator('#findings-counts tbody tr').count()).toBe(body.counts.length);
    const severities = new Set(body.counts.map((c) => c.severity));
    expect(severities).toContain('DataLoss');
    expect(severities.size).toBeGreaterThan(1);

    await page.locator('#drawer').getByLabel('Severity').selectOption('DataLoss');
    const dataLoss = body.counts.filter((c) => c.severity === 'DataLoss').reduce((n, c) => n + c.count, 0);
    await expect
      .poll(() => page.locator('.findings-total').getAttribute('data-total'))
      .toBe(String(dataLoss));
    const shown = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-severity')));
    expect(shown.length).toBe(Math.min(dataLoss, 100));
    expect(new Set(shown)).toEqual(new Set(['DataLoss']));
    expect(new URL(page.url()).pathname).toBe(`/admin/jobs/files_consistency/runs/${runId}/findings`);
    await shot('06-findings-dataloss');
  });

  it('closes the drawer with Escape and returns focus to the row', async () => {
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('dialog[open]').count()).toBe(0);
    expect(
      await page.evaluate<string | null>("document.activeElement?.getAttribute('data-job') ?? null"),
    ).toBe('files_consistency');
    expect(new URL(page.url()).pathname).toBe('/admin/jobs');
  });

  it('opens on the health view: per check the last completed run, open findings by severity, new and fixed, a trend', async () => {
    const card = page.locator('.health-card[data-check="files_consistency"]');
    // The card, or the error that says why not.
    await expect
      .poll(
        async () =>
          (await page.locator('#health-error').textContent()) ||
          ((await card.count()) === 1 ? 'card' : 'no card yet'),
        { timeout: 15_000 },
      )
      .toBe('card');
    await expect.poll(() => card.locator('.badge[data-severity="DataLoss"]').count()).toBe(1);
    // DataLoss is red, Drift another colour (each severity coloured by its rank).
    const dataLoss = await colours(card.locator('.badge[data-severity="DataLoss"]'));
    const drift = await colours(card.locator('.badge[data-severity="Drift"]'));
    expect(dataLoss).toEqual(RED);
    expect(drift).not.toEqual(dataLoss);
    expect(await card.textContent()).toContain('last completed');
    // The trend says what its bars are, in their colours.
    const legend = card.locator('.legend');
    expect(await legend.textContent()).toBe('reportednewfixed');
    expect(
      await legend
        .locator('i.trend-new')
        .evaluate((i) => (globalThis as unknown as Styled).getComputedStyle(i)['backgroundColor']),
    ).toBe(
      await card
        .locator('rect.trend-new')
        .evaluate((r) => (globalThis as unknown as Styled).getComputedStyle(r)['fill']),
    );
    // A check that never ran says so: "nothing open" is for a check that looked.
    const unchecked = page.locator('.health-card[data-check="drives_consistency"]');
    expect(await unchecked.locator('.counts').textContent()).toBe('not checked yet');
    expect(await unchecked.locator('svg').count()).toBe(0);
    expect(await card.textContent()).toMatch(/\d+ new, \d+ fixed since the previous run/);
    expect(await card.locator('svg rect.trend-bar').count()).toBe(1);
    // The health view comes first on the page.
    const top = (await page.locator('#health-view').boundingBox())?.y ?? -1;
    const jobsTop = (await page.locator('#jobs-table').boundingBox())?.y ?? -1;
    expect(top).toBeLessThan(jobsTop);
    await page.locator('#health-view').screenshot({ path: join(ARTIFACTS, '07-health.png') });
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.locator('#health-view').screenshot({ path: join(SCREENSHOTS, '07-health.png') });
  });

  it('lists findings across runs, shows one as readable fields, and accepts it with a comment', async () => {
    await page.locator('#f-state').selectOption('open');
    await page.locator('#findings-filters button[type="submit"]').click();
    const rows = page.locator('#tracked-findings-table tbody tr');
    await rows.first().waitFor();
    expect(await rows.count()).toBeGreaterThan(0);
    const list = page.locator('#tracked-findings-table');
    expect(await colours(list.locator('.badge[data-severity="DataLoss"]').first())).toEqual(RED);
    expect(await colours(list.locator('.badge[data-severity="Drift"]').first())).not.toEqual(RED);
    // The resource column shows each id by its end (UUIDv7s share their leading digits), the whole id as title.
    const resources = await list
      .locator('td.resource code')
      .evaluateAll((codes) => codes.map((c) => [c.getAttribute('title') ?? '', c.textContent ?? '']));
    for (const [id, text] of resources) {
      // A UUID by its last 12 digits; a blob hash (64 hex digits) by its first 12.
      expect(text).toBe(/^[0-9a-f-]{36}$/.test(id) ? `…${id.slice(-12)}` : `${id.slice(0, 12)}…`);
    }
    const ids = new Set(resources.map(([id]) => id));
    expect(new Set(resources.map(([, text]) => text)).size).toBe(ids.size);
    await rows.first().click();
    const detail = page.locator('#finding-detail');
    await detail.locator('dl.fields').waitFor();
    expect(await detail.textContent()).toContain('First seen');
    expect(await detail.textContent()).not.toContain('{"');
    await detail.locator('#decision-comment').fill('known: re-upload scheduled');
    await detail.locator('#decision-accept').click();
    await expect.poll(() => detail.locator('.fields').textContent()).toContain('accepted');
    // The admin by name, in the fields and in the history's By column (the run's events are by "system").
    expect(await detail.locator('.fields').textContent()).toMatch(/by admin/);
    const by = await detail.locator('td.by').allTextContents();
    expect(by).toContain('admin');
    expect(by.every((name) => name === 'admin' || name === 'system')).toBe(true);
    await shot('08-finding-accepted');
  });

  it('polls only while the page is visible, and refreshes at once when it shows again', async () => {
    const listings: number[] = [];
    const onRequest = (request: { url(): string }) => {
      if (new URL(request.url()).pathname === '/api/admin/jobs') listings.push(Date.now());
    };
    page.on('request', onRequest);
    try {
      const setVisibility = (state: string) =>
        page.evaluate(
          `Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => '${state}' }); document.dispatchEvent(new Event('visibilitychange'));`,
        );
      await page.waitForTimeout(6_000);
      expect(listings.length, 'polls every 5 s while visible').toBeGreaterThanOrEqual(1);
      await setVisibility('hidden');
      listings.length = 0;
      await page.waitForTimeout(6_000);
      expect(listings, 'no polling while hidden').toEqual([]);
      const shownAt = Date.now();
      await setVisibility('visible');
      await expect.poll(() => listings.length, { timeout: 2_000 }).toBeGreaterThan(0);
      expect(listings[0]! - shownAt).toBeLessThan(1_000);
    } finally {
      page.off('request', onRequest);
    }
  });

  it('opens a deep link from an alert mail straight on the run findings', async () => {
    await page.goto(`${base}/admin/jobs/files_consistency/runs/${runId}/findings`);
    await page.locator('#findings-table tbody tr').first().waitFor();
    expect(await page.locator('#drawer-title').textContent()).toBe('files_consistency');
    expect(await page.locator('#findings-title').textContent()).toBe(`Findings of run ${runId.slice(0, 8)}`);
  });

  it("shows the last ended run's outcome in the drawer while a new run is in progress, and Paused once it is cancelled", async () => {
    const started = await api('/files_consistency/trigger', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(SLOW_RUN_PARAMS),
    });
    expect(started.status).toBe(202);
    const second = ((await started.json()) as { run_id: string }).run_id;
    await page.getByRole('tab', { name: 'Overview' }).click();
    await expect
      .poll(() => row('files_consistency').getAttribute('data-status'), { timeout: UI_TIMEOUT })
      .toBe('Running');
    const outcome = page.locator('#outcome');
    // The earlier run's outcome is persisted: the drawer shows it, never "no outcome".
    await expect
      .poll(() => outcome.locator('pre.json').textContent(), { timeout: UI_TIMEOUT })
      .toContain(runId);
    expect(await outcome.locator('.badge').first().getAttribute('data-status')).toBe('ok');
    expect(await outcome.textContent()).not.toMatch(/No outcome|No run of this job has ended/);
    expect(
      (await (await api('/files_consistency/cancel', { method: 'POST' })).json()) as object,
    ).toMatchObject({
      run_id: second,
    });
    await expect
      .poll(() => outcome.locator('.badge').first().getAttribute('data-status'), { timeout: UI_TIMEOUT })
      .toBe('Paused');
    expect(await outcome.locator('pre.json').textContent()).toContain(second);
  });

  it('signs out: back to the sign-in form, token gone', async () => {
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').waitFor();
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
    expect(await page.locator('#jobs-view').isVisible()).toBe(false);
    expect(pageErrors).toEqual([]);
  });
});
