import { SEVERITIES } from '@oxicloud/consistency/severity';

/** Where the page's stylesheet and script are loaded from (absolute: deep links change the base). */
export interface AdminPageAssetUrls {
  readonly css: string;
  readonly js: string;
}

/**
 * The HTML shell of the `/admin/jobs` page. It holds no data: the script
 * asks for a token and reads everything from `/api/admin/jobs*`. Static
 * markup only; every datum is written later with `textContent`.
 */
export function adminPageHtml(assets: AdminPageAssetUrls): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<meta name="referrer" content="no-referrer">
<title>Jobs · OxiCloud admin</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assets.css}">
<script type="module" src="${assets.js}"></script>
</head>
<body>
<header class="topbar" id="topbar">
  <span class="brand">OxiCloud admin</span>
  <span class="spacer"></span>
  <button type="button" id="sign-out" hidden>Sign out</button>
</header>
<main id="main">
  <noscript><p class="message error">This page needs JavaScript.</p></noscript>
  <section id="signin-view" class="signin" aria-labelledby="signin-title" hidden>
    <h1 id="signin-title" tabindex="-1">Sign in</h1>
    <p>Paste an admin token. Mint one on the server with <code>pnpm oxijobs token --user admin</code>.
      It is kept in this browser tab only and sent to <code>/api/admin/jobs</code> as a bearer token.</p>
    <p id="signin-message" class="message error" role="alert"></p>
    <form id="signin-form" novalidate>
      <div class="field">
        <label for="token">Admin token</label>
        <input id="token" name="token" type="password" autocomplete="off" spellcheck="false" required
          aria-describedby="signin-message">
      </div>
      <button type="submit" class="primary">Sign in</button>
    </form>
  </section>
  <section id="jobs-view" aria-labelledby="jobs-title" hidden>
    <section id="health-view" class="health-view" aria-labelledby="health-title">
      <h1 id="health-title" tabindex="-1">Health</h1>
      <p class="meta">Per consistency check: the last completed run, what is open, what it found new and fixed, and the last runs.</p>
      <p id="health-error" class="message error" role="alert"></p>
      <div id="health"></div>
    </section>
    <section id="findings-view" class="findings-view" aria-labelledby="findings-list-title">
      <h2 id="findings-list-title" tabindex="-1">Findings</h2>
      <form id="findings-filters" class="filters">
        <label for="f-state">State</label>
        <select id="f-state">
          <option value="">All states</option>
${['open', 'reopened', 'accepted', 'false_positive', 'fixed']
  .map(
    (name) => `          <option value="${name}">${name}</option>
`,
  )
  .join('')}        </select>
        <label for="f-severity">Severity</label>
        <select id="f-severity">
          <option value="">All severities</option>
${SEVERITIES.map(
  (name) => `          <option value="${name}">${name}</option>
`,
).join('')}        </select>
        <label for="f-check">Check</label>
        <input id="f-check" type="text" placeholder="e.g. files_consistency" spellcheck="false">
        <label for="f-kind">Kind</label>
        <input id="f-kind" type="text" placeholder="e.g. path_mismatch" spellcheck="false">
        <button type="submit">Filter</button>
      </form>
      <p id="findings-error" class="message error" role="alert"></p>
      <div id="tracked-findings"></div>
      <div class="actions">
        <button type="button" id="findings-more" hidden>More findings</button>
        <button type="button" id="plan-selected" disabled>Plan repair for the selected (0)</button>
        <button type="button" id="plan-filter">Plan repair for the filter</button>
      </div>
      <div id="finding-detail" class="run-detail" aria-live="polite" hidden></div>
      <section id="repair-view" class="run-detail repair-view" aria-labelledby="repair-title" hidden>
        <div class="heading-row">
          <h2 id="repair-title" tabindex="-1">Repair plan</h2>
          <button type="button" id="repair-close">Close<span class="visually-hidden"> the repair plan</span></button>
        </div>
        <p class="meta">Nothing changes until you apply. Apply sends the hash shown: a plan changed since is refused and shown again.</p>
        <p id="repair-status" class="message info" role="status" aria-live="polite"></p>
        <p id="repair-error" class="message error" role="alert"></p>
        <div id="repair-plan"></div>
      </section>
    </section>
    <div class="heading-row">
      <h1 id="jobs-title" tabindex="-1">Jobs</h1>
      <span class="updated" id="updated"></span>
    </div>
    <p id="error" class="message error" role="alert"></p>
    <p id="notice" class="message info" role="status" aria-live="polite"></p>
    <table id="jobs-table">
      <caption>Every registered job. Select a row (click or Enter) for its outcome, runs and findings.</caption>
      <thead>
        <tr><th scope="col">Name</th><th scope="col">Cadence</th><th scope="col">Last run</th><th scope="col">Status</th><th scope="col">Actions</th></tr>
      </thead>
      <tbody id="jobs-body"></tbody>
    </table>
    <p id="jobs-empty" class="empty" hidden>Loading jobs…</p>
    <section id="nodes-section" aria-labelledby="nodes-title" hidden>
      <h2 id="nodes-title">Nodes</h2>
      <p id="nodes-message" class="message error" role="alert"></p>
      <table id="nodes-table">
        <caption>The server processes on this database: when each started, its last heartbeat, what it runs.</caption>
        <thead>
          <tr><th scope="col">Node</th><th scope="col">Started</th><th scope="col">Last heartbeat</th><th scope="col">Runs</th></tr>
        </thead>
        <tbody id="nodes-body"></tbody>
      </table>
    </section>
  </section>
</main>
<dialog id="drawer" class="drawer" role="dialog" aria-modal="true" aria-labelledby="drawer-title">
  <div class="drawer-inner" id="drawer-inner">
    <div class="drawer-head">
      <div class="title">
        <h2 id="drawer-title" tabindex="-1"></h2>
        <p class="meta" id="drawer-meta"></p>
      </div>
      <button type="button" id="drawer-close">Close<span class="visually-hidden"> details</span></button>
    </div>
    <div class="actions" id="drawer-actions"></div>
    <div role="tablist" aria-label="Job details" id="drawer-tabs">
      <button type="button" role="tab" id="tab-overview" aria-controls="panel-overview" aria-selected="true">Overview</button>
      <button type="button" role="tab" id="tab-findings" aria-controls="panel-findings" aria-selected="false" tabindex="-1">Findings</button>
    </div>
    <section role="tabpanel" id="panel-overview" aria-labelledby="tab-overview" tabindex="0">
      <h3>Last outcome</h3>
      <div id="outcome"></div>
      <div id="periodic-section" hidden>
        <h3>Recent runs (every node)</h3>
        <div id="periodic-runs"></div>
      </div>
      <div id="runs-section" hidden>
        <h3>Runs</h3>
        <div id="runs"></div>
        <div id="run-detail" class="run-detail" aria-live="polite" hidden></div>
      </div>
    </section>
    <section role="tabpanel" id="panel-findings" aria-labelledby="tab-findings" tabindex="0" hidden>
      <h3 id="findings-title">Findings</h3>
      <div class="filters">
        <label for="severity">Severity</label>
        <select id="severity">
          <option value="">All severities</option>
${SEVERITIES.map((name) => `          <option value="${name}">${name}</option>\n`).join('')}        </select>
      </div>
      <div id="findings"></div>
    </section>
  </div>
</dialog>
</body>
</html>
`;
}
