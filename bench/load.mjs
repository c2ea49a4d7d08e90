#!/usr/bin/env node
// The load generator of benchmark 4 and 5: a SECOND PROCESS that sends GET requests to one
// loopback URL at a fixed rate (open loop: a request starts every 1/rate s whether or not the
// previous one answered), bounded by a request count AND a duration (SIGTERM ends it early),
// and prints one JSON line:
// latencies (ms) p50/p90/p99/max, counts of ok and failed answers.
//
//   node bench/load.mjs --url http://127.0.0.1:8086/api/admin/jobs --token T --rate 20 --duration 10 --max 400
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    token: { type: 'string' },
    rate: { type: 'string', default: '20' },
    duration: { type: 'string', default: '10' },
    max: { type: 'string', default: '2000' },
    timeout: { type: 'string', default: '10' },
  },
});
const url = new URL(values.url ?? '');
if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost' && url.hostname !== '[::1]') {
  console.error(`load.mjs: loopback only, got ${url.hostname}`);
  process.exit(2);
}
const rate = Number(values.rate);
const durationMs = Number(values.duration) * 1000;
const max = Number(values.max);
const timeoutMs = Number(values.timeout) * 1000;
if (!(rate > 0 && rate <= 1000 && durationMs > 0 && durationMs <= 600_000 && max > 0 && max <= 100_000)) {
  console.error('load.mjs: --rate 1..1000, --duration 1..600 s, --max 1..100000');
  process.exit(2);
}
const headers = values.token ? { authorization: `Bearer ${values.token}` } : {};

const latencies = [];
let ok = 0;
let failed = 0;
const statuses = {};
const inFlight = new Set();

async function one() {
  const started = performance.now();
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    if (res.ok) ok++;
    else failed++;
  } catch {
    failed++;
    statuses['error'] = (statuses['error'] ?? 0) + 1;
  }
  latencies.push(performance.now() - started);
}

// SIGTERM (from the harness, when the measured phase ends): stop sending, report.
let stopped = false;
process.on('SIGTERM', () => {
  stopped = true;
});
const t0 = performance.now();
const intervalMs = 1000 / rate;
let sent = 0;
while (!stopped && sent < max && performance.now() - t0 < durationMs) {
  const p = one();
  inFlight.add(p);
  p.finally(() => inFlight.delete(p));
  sent++;
  const next = t0 + sent * intervalMs;
  const wait = next - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}
await Promise.all(inFlight);
const sorted = latencies.sort((a, b) => a - b);
const pct = (p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
process.stdout.write(
  `${JSON.stringify({
    url: url.pathname,
    rate,
    sent,
    ok,
    failed,
    statuses,
    elapsed_ms: Math.round(performance.now() - t0),
    p50_ms: pct(50),
    p90_ms: pct(90),
    p99_ms: pct(99),
    max_ms: sorted[sorted.length - 1],
  })}\n`,
);
