// Renders a bench run's results as the Markdown tables of bench/results.md.
import { fmt, mb, percentile, ratio } from './stats.mjs';

const s = (ms) => `${fmt(ms / 1000, 2)} s`;
const ms2 = (ms) => `${fmt(ms, 1)} ms`;

export function renderMarkdown(r) {
  const out = [];
  const m = r.machine;
  out.push(`# Bench run ${r.startedAt}`, '');
  out.push(`Command: \`${r.command}\`  `);
  out.push(`Storage domain: ${r.domain ?? 'engine'} (OxiCloud's schema, \`.blobs/<aa>/<hash>.blob\`)  `);
  out.push(
    `Machine: ${m.nproc} cores (${m.cpu}), ${fmt(m.memoryGiB, 1)} GiB, Linux ${m.kernel}; node ${m.node}; ` +
      `PostgreSQL ${r.postgres?.version ?? '?'} (${r.postgres?.description}; ${r.postgres?.flags}); ${m.b3sum}; commit ${m.commit}  `,
  );
  if (r.dataset) {
    const c = r.dataset.counts;
    out.push(
      `Dataset: ${fmt(c.files)} files (${fmt(c.multi_chunk_files)} multi-chunk, ${fmt(c.one_chunk_files)} one-chunk, ` +
        `${fmt(c.legacy_files)} legacy, ${fmt(c.empty_files)} empty; ${fmt(c.dedup_files)} sharing their content), ` +
        `${fmt(c.folders)} folders, ${fmt(c.drives)} drives, ${fmt(c.users)} users, ${fmt(c.grants)} grants, ` +
        `${fmt(c.manifests)} chunk manifests, ${fmt(c.blobs)} blob rows (${fmt(c.chunk_blobs)} chunks, ${fmt(c.legacy_blobs)} legacy; ` +
        `${fmt(mb(c.blob_bytes))} MB on disk), ${fmt(c.thumbnails)} thumbnails, database ${fmt(mb(c.db_bytes))} MB; ` +
        `generated in ${s(r.dataset.seedMs)} + VACUUM ANALYZE ${s(r.dataset.vacuumMs)}  `,
    );
  }
  out.push(`Total time: ${fmt(r.totalSeconds / 60, 1)} min`, '');

  if (r.findings) {
    const f = r.findings;
    out.push('## Findings listing (keyset cursor, GET /api/admin/findings)', '');
    out.push(
      '| findings | page size | first page (median) | page at | deep page (median) | ratio | bar 1.5x |',
    );
    out.push('|---|---|---|---|---|---|---|');
    out.push(
      `| ${fmt(f.total)} | ${f.pageSize} | ${f.firstMs.toFixed(2)} ms | ${fmt(f.deepOffset)} | ${f.deepMs.toFixed(2)} ms | ${f.ratio.toFixed(2)} | ${f.pass ? 'met' : 'MISSED'} |`,
      '',
    );
  }
  if (r.faults) {
    const f = r.faults;
    const c = f.counts;
    out.push(
      '## Seeded faults found by consistency_batch with force (issue 19: exactly the seeded findings)',
      '',
    );
    out.push(
      `Dataset: ${fmt(c.files)} files, ${fmt(c.blobs)} blobs, every fault ${f.faultsPerKind} times; generated in ${s(f.seedMs)}. ` +
        `consistency_batch: ${f.batch.outcome}, count ${f.batch.count}, ${s(f.batch.wallMs)} wall.`,
      '',
    );
    out.push(
      `| expected findings | found | missing | extra | verdict |`,
      '|---|---|---|---|---|',
      `| ${fmt(f.expected)} | ${fmt(f.found)} | ${fmt(f.missingCount)} | ${fmt(f.extraCount)} | ${f.missingCount === 0 && f.extraCount === 0 ? 'exact' : 'DIFFERS'} |`,
      '',
    );
    out.push('| check | run | scanned | time | findings |', '|---|---|---|---|---|');
    for (const k of f.checks) {
      out.push(
        `| ${k.job} | ${k.status ?? k.outcome} | ${fmt(k.scanned ?? 0)} | ${k.ms === null ? '-' : s(k.ms)} | ${fmt(k.findings)} |`,
      );
    }
    out.push('', '| fault | check | expected | found |', '|---|---|---|---|');
    for (const p of f.perFault)
      out.push(
        `| ${p.fault} | ${p.check ?? 'none (no check reports this kind)'} | ${p.expected} | ${p.found} |`,
      );
    out.push('');
    if (f.missingCount > 0) out.push(`Missing (first 50): ${f.missing.join('; ')}`, '');
    if (f.extraCount > 0) out.push(`Extra (first 50): ${f.extra.join('; ')}`, '');
  }
  if (r.scan) {
    out.push(
      '## 1. Scan throughput (through the server: trigger → Completed, server-side started_at → completed_at)',
      '',
    );
    out.push(
      '| check | rows | check | rows/s | yardstick (one statement, median of 3) | yardstick rows/s | ratio (yardstick time / check time) | findings |',
    );
    out.push('|---|---|---|---|---|---|---|---|');
    for (const { name, yardstick: y, check: c } of r.scan) {
      // A check without a yardstick (a new one): its own figures, no ratio.
      out.push(
        y === null
          ? `| ${name} | scanned_count ${fmt(c.scanned)} | ${s(c.ms)} | ${fmt(c.scanned / (c.ms / 1000))} | - | - | - | ${c.findings} |`
          : `| ${name} | ${fmt(y.rows)} (scanned_count ${fmt(c.scanned)}) | ${s(c.ms)} | ${fmt(y.rows / (c.ms / 1000))} | ${s(y.ms)} | ` +
              `${fmt(y.rows / (y.ms / 1000))} | **${ratio(y.ms / c.ms)}** | ${c.findings} (yardstick: ${y.bad}) |`,
      );
    }
    out.push('');
  }
  if (r.scan && (r.memory || r.only.includes('memory'))) {
    out.push(
      '## 2. Memory of the server process (VmRSS sampled every 50 ms, VmHWM reset before each scan)',
      '',
    );
    out.push(`Idle server after boot: ${fmt(r.serverIdleRssMiB)} MiB RSS.`, '');
    const label = (n) =>
      n >= 1e6 && n % 1e6 === 0 ? `${n / 1e6}M` : n >= 1e3 && n % 1e3 === 0 ? `${n / 1e3}k` : fmt(n);
    const [smallLabel, bigLabel] = [label(r.sizes.smallFiles), label(r.sizes.files)];
    out.push(
      `| check | ${smallLabel}-file dataset: rows/s, peak RSS | ${bigLabel}-file dataset: rows/s, peak RSS | rows/s ${bigLabel} vs ${smallLabel} | RSS growth |`,
    );
    out.push('|---|---|---|---|---|');
    for (const { name, check } of r.scan) {
      const small = r.memory?.small.find((x) => x.name === name);
      const big = check.memory.peakRssMiB;
      const rate = (c) => c.scanned / (c.ms / 1000);
      out.push(
        `| ${name} | ${small ? `${fmt(rate(small))}, ${fmt(small.memory.peakRssMiB)} MiB (start ${fmt(small.memory.startRssMiB)})` : 'n/a'} | ` +
          `${fmt(rate(check))}, ${fmt(big)} MiB (start ${fmt(check.memory.startRssMiB)}) | ` +
          `${small ? `${ratio(rate(check) / rate(small))}×` : 'n/a'} | ${small ? `${ratio(big / small.memory.peakRssMiB)}×` : 'n/a'} |`,
      );
    }
    out.push('');
  }
  if (r.checkpoint) {
    const c = r.checkpoint;
    const base = r.scan.find((x) => x.name === 'files_consistency').check;
    const fbase = r.scan.find((x) => x.name === 'folders_consistency').check;
    out.push('## 3. Checkpoint cost', '');
    out.push('| variant | batches | time | ratio (time / batch 1000 through the server) |');
    out.push('|---|---|---|---|');
    out.push(
      `| files_consistency, server, batch_size 1000 (default) | ~${fmt(base.scanned / 1000)} | ${s(base.ms)} | 1 |`,
    );
    out.push(
      `| files_consistency, server, batch_size 10000 (params max) | ~${fmt(c.big.scanned / 10000)} | ${s(c.big.ms)} | **${ratio(c.big.ms / base.ms)}** |`,
    );
    out.push(
      `| files_consistency, in-process, in-memory store (no checkpoint writes), batch 1000 | ${fmt(c.direct1000.batches)} | ${s(c.direct1000.ms)} | ${ratio(c.direct1000.ms / base.ms)} |`,
    );
    out.push(
      `| files_consistency, in-process, in-memory store, one huge batch | ${fmt(c.directHuge.batches)} | ${s(c.directHuge.ms)} | ${ratio(c.directHuge.ms / base.ms)} |`,
    );
    out.push(
      `| folders_consistency, server, batch_size 1000 (default) | ~${fmt(fbase.scanned / 1000)} | ${s(fbase.ms)} | 1 |`,
    );
    out.push(
      `| folders_consistency, server, batch_size 10000 | ~${fmt(c.folders10k.scanned / 10000)} | ${s(c.folders10k.ms)} | **${ratio(c.folders10k.ms / fbase.ms)}** |`,
    );
    out.push('');
  }
  if (r.traffic) {
    const t = r.traffic;
    const row = (label, l, scan) =>
      `| ${label} | ${l.sent} (${l.failed} failed) | ${ms2(l.p50_ms)} | ${ms2(l.p99_ms)} | ${ms2(l.max_ms)} | ` +
      `${ratio(l.p50_ms / t.idle.p50_ms)} | **${ratio(l.p99_ms / t.idle.p99_ms)}** | ${scan ? `${s(scan.ms)}, ${fmt(scan.scanned / (scan.ms / 1000))} rows/s, server event-loop p99 ${ms2(scan.eventLoop.p99_ms)}` : ''} |`;
    out.push(
      `## 4. Live traffic: GET /api/admin/jobs at ${t.rate} req/s from a second process (open loop, loopback)`,
      '',
    );
    out.push('| phase | requests | p50 | p99 | max | p50 ratio vs idle | p99 ratio vs idle | scan |');
    out.push('|---|---|---|---|---|---|---|---|');
    out.push(row('idle (10 s)', t.idle));
    out.push(row('during files_consistency (full scan, default params)', t.full.latency, t.full.scan));
    out.push(
      row(`during files_consistency with throttle_ms ${t.throttleMs}`, t.throttled.latency, t.throttled.scan),
    );
    out.push('');
  }
  if (r.deep) {
    const d = r.deep;
    const mbps = (ms) => mb(d.bytes) / (ms / 1000);
    out.push(
      `## 5. Deep verify: storage_consistency deep=true over ${fmt(d.blobs)} blob objects (chunks and legacy blobs, ${fmt(mb(d.bytes))} MB)`,
      '',
    );
    out.push('| what | time | MB/s | ratio (deep verify MB/s / this) |');
    out.push('|---|---|---|---|');
    out.push(`| storage_consistency deep=true (server) | ${s(d.scan.ms)} | ${fmt(mbps(d.scan.ms))} | 1 |`);
    out.push(
      `| b3sum --num-threads 1 (the same .blobs files, one process via xargs) | ${s(d.b3One)} | ${fmt(mbps(d.b3One))} | **${ratio(d.b3One / d.scan.ms)}** |`,
    );
    out.push(
      `| b3sum (default threads) | ${s(d.b3Default)} | ${fmt(mbps(d.b3Default))} | **${ratio(d.b3Default / d.scan.ms)}** |`,
    );
    out.push('');
    const e = d.scan.eventLoop;
    out.push(
      `Event-loop delay inside the server during the deep scan (monitorEventLoopDelay, 5 ms resolution): ` +
        `p50 ${ms2(e.p50_ms)}, p99 ${ms2(e.p99_ms)}, max ${ms2(e.max_ms)}. ` +
        `GET /healthz at ${d.latency.rate} req/s from a second process: p50 ${ms2(d.latency.p50_ms)}, p99 ${ms2(d.latency.p99_ms)}, ` +
        `max ${ms2(d.latency.max_ms)} (${d.latency.sent} requests, ${d.latency.failed} failed). Peak server RSS ${fmt(d.scan.memory.peakRssMiB)} MiB.`,
      '',
    );
  }
  if (r.migration) {
    const g = r.migration;
    const mbps = (ms) => mb(g.bytes) / (ms / 1000);
    out.push(`## 6. Migration fs → fs of ${fmt(g.blobs)} blobs (${fmt(mb(g.bytes))} MB)`, '');
    out.push('| what | time | MB/s | ratio vs cp -r (cp time / this) | ratio vs cp -r; sync |');
    out.push('|---|---|---|---|---|');
    for (const run of g.runs) {
      out.push(
        `| storage_migration, concurrency ${run.concurrency} (in-process RecoverableEngine, two OxiCloud storage roots; ` +
          `${fmt(run.stats.copied_blobs)} copied, ${fmt(run.stats.failed_blobs)} failed) | ${s(run.ms)} | ${fmt(mbps(run.ms))} | ` +
          `**${ratio(g.cpMs / run.ms)}** | **${ratio(g.cpSyncMs / run.ms)}** |`,
      );
    }
    out.push(`| cp -r of the .blobs tree (no fsync) | ${s(g.cpMs)} | ${fmt(mbps(g.cpMs))} | 1 | |`);
    out.push(
      `| cp -r of the .blobs tree, then sync (durable, like the migration's put) | ${s(g.cpSyncMs)} | ${fmt(mbps(g.cpSyncMs))} | | 1 |`,
    );
    out.push('');
  }
  if (r.overhead) {
    const o = r.overhead;
    const srt = (a) => [...a].sort((x, y) => x - y);
    const rec = srt(o.recoverable);
    const boss = srt(o.pgBoss);
    out.push(`## 7. Run overhead (${o.runs} sequential units after 20 warm-up, same database)`, '');
    out.push('| unit | p50 | p90 | p99 | mean | ratio (mean / pg-boss mean) |');
    out.push('|---|---|---|---|---|---|');
    const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
    out.push(
      `| recoverable run (create, one checkpoint, terminal write) | ${ms2(percentile(rec, 50))} | ${ms2(percentile(rec, 90))} | ${ms2(percentile(rec, 99))} | ${ms2(mean(rec))} | **${ratio(mean(rec) / mean(boss))}** |`,
    );
    out.push(
      `| pg-boss 10.4.2 job (send, fetch, complete) | ${ms2(percentile(boss, 50))} | ${ms2(percentile(boss, 90))} | ${ms2(percentile(boss, 99))} | ${ms2(mean(boss))} | 1 |`,
    );
    if (o.leaseRenewal?.length) {
      const lease = srt(o.leaseRenewal);
      const perRun = mean(rec) + mean(lease);
      out.push(
        `| lease renewal (one heartbeat UPDATE, owner + attempt fenced) | ${ms2(percentile(lease, 50))} | ${ms2(percentile(lease, 90))} | ${ms2(percentile(lease, 99))} | ${ms2(mean(lease))} | ${ratio(mean(lease) / mean(boss))} |`,
      );
      out.push(
        `| recoverable run + one lease renewal (a run lasting up to one heartbeat, ${o.heartbeatMs / 1000} s) | | | | ${ms2(perRun)} | **${ratio(perRun / mean(boss))}** |`,
      );
      out.push(
        '',
        `The run above already carries the fence in its own writes (owner and attempt in the checkpoint's and the terminal write's WHERE, the lease set with them); a run pays one more renewal per ${o.heartbeatMs / 1000} s it lasts (the heartbeat renews every run of a node in one UPDATE), so the last row is the worst case of a short run.`,
      );
    }
    out.push('');
  }
  return `${out.join('\n')}\n`;
}
