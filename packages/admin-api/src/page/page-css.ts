/**
 * The stylesheet of the `/admin/jobs` page, served at
 * `/admin/jobs/assets/admin-jobs.css`. Kept as a string so tsup bundles it
 * (no build step, no file copying); it must contain no backtick.
 *
 * Colours: every text/background pair is at least 4.5:1 (WCAG AA); badges
 * carry their status as text too, colour is never the only cue.
 * `prefers-reduced-motion: reduce` turns the pulse and flash off.
 */
export const ADMIN_PAGE_CSS = `
:root {
  --fg: #1b1f24; --muted: #4f5a65; --bg: #ffffff; --panel: #f6f8fa; --line: #d0d7de;
  --accent: #0b5cad; --accent-fg: #ffffff; --focus: #0b5cad;
  --ok-bg: #e3f4e8; --ok-fg: #17602d; --err-bg: #fde7e7; --err-fg: #a1151b;
  --run-bg: #e3eeff; --run-fg: #1848a0; --amber-bg: #fff1cc; --amber-fg: #6f4400;
  --grey-bg: #eceff2; --grey-fg: #3a4550;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--fg); background: var(--bg); color-scheme: light;
}
* { box-sizing: border-box; }
body { margin: 0; }
h1, h2, h3 { line-height: 1.2; margin: 0; }
h1 { font-size: 1.35rem; }
h2 { font-size: 1.15rem; }
h3 { font-size: 1rem; margin: 1.25rem 0 0.5rem; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
[hidden] { display: none !important; }
.visually-hidden {
  position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden;
  clip: rect(0 0 0 0); white-space: nowrap; border: 0;
}
.topbar {
  display: flex; align-items: center; gap: 1rem; padding: 0.75rem 1.25rem;
  border-bottom: 1px solid var(--line); background: var(--panel);
}
.topbar .brand { font-weight: 600; }
.topbar .spacer { flex: 1; }
main { padding: 1.25rem; max-width: 1200px; margin: 0 auto; }
button {
  font: inherit; cursor: pointer; border-radius: 6px; border: 1px solid var(--accent);
  background: var(--bg); color: var(--accent); padding: 0.3rem 0.75rem; min-height: 2rem;
}
button:hover { background: #e8f1fb; }
button.primary { background: var(--accent); color: var(--accent-fg); }
button.primary:hover { background: #094d91; }
button:disabled { cursor: not-allowed; color: var(--muted); border-color: var(--line); background: var(--panel); }
button.link { border: 0; background: none; padding: 0.1rem 0.2rem; min-height: 0; text-decoration: underline; }
input, select {
  font: inherit; padding: 0.35rem 0.5rem; border: 1px solid #6a737d; border-radius: 6px;
  background: var(--bg); color: var(--fg);
}
.signin { max-width: 34rem; margin: 3rem auto; padding: 1.5rem; border: 1px solid var(--line); border-radius: 10px; }
.signin p { color: var(--muted); }
.signin .field { display: flex; flex-direction: column; gap: 0.35rem; margin: 1rem 0; }
.signin input { width: 100%; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.85rem; }
.message { margin: 0.75rem 0; padding: 0.6rem 0.8rem; border-radius: 6px; }
.message:empty { display: none; }
.message.error { background: var(--err-bg); color: var(--err-fg); }
.message.info { background: var(--run-bg); color: var(--run-fg); }
.heading-row { display: flex; align-items: baseline; gap: 1rem; flex-wrap: wrap; }
.heading-row .updated { color: var(--muted); font-size: 0.85rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 0.5rem 0.6rem; border-bottom: 1px solid var(--line); vertical-align: middle; }
thead th { font-size: 0.8rem; text-transform: uppercase; letter-spacing: 0.03em; color: var(--muted); }
caption { text-align: left; color: var(--muted); font-size: 0.85rem; padding: 0.25rem 0 0.5rem; }
#jobs-table tbody tr { cursor: pointer; }
#jobs-table tbody tr:hover { background: var(--panel); }
#jobs-table tbody tr:focus-visible { outline-offset: -3px; }
#jobs-table tbody tr.highlight { background: #fff8e0; box-shadow: inset 4px 0 0 #b07a00; }
#jobs-table th[scope="row"] { font-weight: 600; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.9rem; }
.actions { display: flex; gap: 0.4rem; flex-wrap: wrap; }
.badge {
  display: inline-flex; align-items: center; gap: 0.35rem; padding: 0.1rem 0.55rem; border-radius: 999px;
  font-size: 0.82rem; font-weight: 600; white-space: nowrap;
}
.badge.none { color: var(--muted); font-weight: 400; }
.badge.ok { background: var(--ok-bg); color: var(--ok-fg); }
.badge.err, .badge.Failed { background: var(--err-bg); color: var(--err-fg); }
.badge.overdue { background: var(--err-bg); color: var(--err-fg); }
.badge.Running { background: var(--run-bg); color: var(--run-fg); }
.badge.Running::before {
  content: ""; width: 0.5rem; height: 0.5rem; border-radius: 50%; background: var(--run-fg);
  animation: pulse 1.2s ease-in-out infinite;
}
.badge.Paused { background: var(--amber-bg); color: var(--amber-fg); }
.badge.CancelRequested { background: var(--amber-bg); color: var(--amber-fg); animation: flash 1s steps(2, jump-none) infinite; }
/* Severities by their rank in SEVERITIES, worst first (sev-0). */
.badge.Completed, .badge.sev-3 { background: var(--grey-bg); color: var(--grey-fg); }
.badge.sev-0 { background: var(--err-bg); color: var(--err-fg); }
.badge.sev-1 { background: var(--amber-bg); color: var(--amber-fg); }
.badge.sev-2 { background: var(--run-bg); color: var(--run-fg); }
@keyframes pulse { 0%, 100% { opacity: 1; transform: scale(1); } 50% { opacity: 0.35; transform: scale(0.7); } }
@keyframes flash { 0% { box-shadow: 0 0 0 2px #b07a00; } 100% { box-shadow: none; } }
@media (prefers-reduced-motion: reduce) {
  *, *::before, *::after { animation: none !important; transition: none !important; scroll-behavior: auto !important; }
}
dialog.drawer {
  margin: 0 0 0 auto; padding: 0; border: 0; border-left: 1px solid var(--line);
  width: min(720px, 100vw); max-width: 100vw; height: 100vh; max-height: 100vh;
  box-shadow: -8px 0 24px rgba(0, 0, 0, 0.18); color: var(--fg); background: var(--bg);
}
dialog.drawer::backdrop { background: rgba(15, 20, 25, 0.35); }
.drawer-inner { min-height: 100%; padding: 1rem 1.25rem 2rem; }
.drawer-head { display: flex; align-items: flex-start; gap: 1rem; }
.drawer-head .title { flex: 1; }
.drawer-head h2 { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.drawer-head .meta { color: var(--muted); margin: 0.25rem 0 0; font-size: 0.9rem; }
[role="tablist"] { display: flex; gap: 0.25rem; border-bottom: 1px solid var(--line); margin: 1rem 0 0.5rem; }
[role="tab"] { border: 0; border-bottom: 3px solid transparent; border-radius: 0; color: var(--muted); background: none; }
[role="tab"][aria-selected="true"] { color: var(--accent); border-bottom-color: var(--accent); font-weight: 600; }
pre.json {
  background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 0.6rem 0.75rem;
  overflow: auto; max-height: 18rem; margin: 0.25rem 0; white-space: pre-wrap; word-break: break-word;
}
dl.fields { display: grid; grid-template-columns: max-content 1fr; gap: 0.3rem 1rem; margin: 0.5rem 0; }
dl.fields dt { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.85rem; font-weight: 600; }
dl.fields dd { margin: 0; color: var(--muted); word-break: break-word; }
dl.fields dd.value { color: var(--fg); }
.runs tr[aria-current="true"] { background: #e8f1fb; }
.run-detail { margin-top: 0.75rem; padding: 0.75rem; border: 1px solid var(--line); border-radius: 8px; }
.progress-line { display: flex; align-items: center; gap: 0.75rem; flex-wrap: wrap; margin: 0.5rem 0; }
progress { width: 16rem; height: 0.9rem; accent-color: var(--accent); }
.progress-text { font-variant-numeric: tabular-nums; }
.filters { display: flex; align-items: center; gap: 0.5rem; margin: 0.5rem 0; }
td.detail code { white-space: pre-wrap; word-break: break-word; }
td.resource { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.8rem; word-break: break-all; }
.empty { color: var(--muted); }
@media (max-width: 700px) {
  #jobs-table thead { display: none; }
  #jobs-table tr { display: block; border-bottom: 1px solid var(--line); }
  #jobs-table td, #jobs-table th { display: block; border: 0; padding: 0.2rem 0.6rem; }
}
.health-view, .findings-view { margin-bottom: 1.75rem; }
.health-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(270px, 1fr)); gap: 0.75rem; margin-top: 0.75rem; }
.health-card { border: 1px solid var(--line); border-radius: 8px; padding: 0.75rem; background: var(--panel); }
.health-card h3 { margin: 0 0 0.35rem; }
.health-card .counts { display: flex; flex-wrap: wrap; gap: 0.35rem; margin: 0.35rem 0; }
.health-card svg { display: block; margin-top: 0.35rem; }
.trend-bar { fill: #8aa9cc; background: #8aa9cc; }
.trend-new { fill: #a1151b; background: #a1151b; }
.trend-fixed { fill: #17602d; background: #17602d; }
.legend i { display: inline-block; width: 0.7rem; height: 0.7rem; margin: 0 0.25rem 0 0.6rem; }
.fields { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 0.9rem; margin: 0.5rem 0; }
.fields dt { color: var(--muted); }
.fields dd { margin: 0; overflow-wrap: anywhere; }
.decision textarea { width: 100%; min-height: 4rem; font: inherit; }
.decision .row { display: flex; gap: 0.5rem; align-items: center; flex-wrap: wrap; margin-top: 0.4rem; }
.findings-view > .actions, .repair-view .actions { margin: 0.5rem 0; }
.repair-view .heading-row { justify-content: space-between; }
.repair-lines td { vertical-align: top; font-size: 0.9rem; }
.repair-lines .meta { color: var(--muted); font-size: 0.8rem; }
.repair-lines select { max-width: 16rem; }
.repair-lines details ul { margin: 0.25rem 0 0; padding-left: 1.1rem; font-size: 0.8rem; }
.repair-lines td.resource { word-break: normal; white-space: nowrap; }
.repair-lines td code { overflow-wrap: anywhere; }
.table-scroll { overflow-x: auto; }
`;
