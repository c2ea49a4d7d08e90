// Preloaded into the server process by the bench (`node --import ./bench/server-probe.mjs …`):
// measures the event-loop delay INSIDE the server with perf_hooks.monitorEventLoopDelay.
// On SIGUSR2 it writes the histogram since the previous SIGUSR2 (or start) as JSON to
// $OXICLOUD_BENCH_PROBE_FILE (atomic rename) and resets it. Nothing else in the server changes.
import { renameSync, writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const file = process.env['OXICLOUD_BENCH_PROBE_FILE'];
if (file) {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  let seq = 0;
  process.on('SIGUSR2', () => {
    const ms = (ns) => ns / 1e6;
    const snapshot = {
      seq: ++seq,
      at: Date.now(),
      count: histogram.count,
      min_ms: ms(histogram.min),
      mean_ms: ms(histogram.mean),
      p50_ms: ms(histogram.percentile(50)),
      p99_ms: ms(histogram.percentile(99)),
      p999_ms: ms(histogram.percentile(99.9)),
      max_ms: ms(histogram.max),
      resolution_ms: 5,
    };
    histogram.reset();
    writeFileSync(`${file}.tmp`, JSON.stringify(snapshot));
    renameSync(`${file}.tmp`, file);
  });
}
