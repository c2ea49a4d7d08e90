import cliProgress from 'cli-progress';
import type { ApiRunSummary } from './api-types.js';
import type { OutputStream } from './cli-io.js';
import {
  formatCount,
  formatEta,
  formatPercent,
  formatProgressLine,
  formatRate,
  statusWord,
} from './format.js';

/** Shows the progress of one or more followed runs, each under a key (its job name). */
export interface ProgressDisplay {
  /** The latest state of the run under `key`. */
  show(key: string, run: ApiRunSummary): void;
  /** A line of text above the bars (or in the log). */
  note(text: string): void;
  /** Ends the display; the bars stay on screen as they were last drawn. */
  stop(): void;
}

/** Nothing (for `--json`: stdout holds the one JSON document). */
export function silentDisplay(): ProgressDisplay {
  return { show() {}, note() {}, stop() {} };
}

/**
 * Plain lines for logs (stdout is not a terminal): a line when a run is
 * first seen or changes status, else at most one per run every `everyMs`.
 */
export function plainDisplay(out: OutputStream, now: () => number, everyMs: number): ProgressDisplay {
  const last = new Map<string, { at: number; status: string; processed: number }>();
  return {
    show(key, run) {
      const seen = last.get(key);
      const processed = run.progress?.processed ?? 0;
      const due =
        !seen || seen.status !== run.status || (now() - seen.at >= everyMs && processed !== seen.processed);
      if (!due) return;
      last.set(key, { at: now(), status: run.status, processed });
      out.write(formatProgressLine(run));
    },
    note(text) {
      out.write(`${text}\n`);
    },
    stop() {},
  };
}

/**
 * Live bars on a terminal (cli-progress): per run, processed/total, percent,
 * rate and ETA. A run with no known total shows an empty bar and its count.
 */
export function terminalDisplay(
  out: OutputStream,
  options: { readonly labelWidth?: number } = {},
): ProgressDisplay {
  const labelWidth = { value: options.labelWidth ?? 0 };
  // The text around the bar takes about 50 columns plus the label; the bar gets what is left (8 to 30).
  const columns = typeof out.columns === 'number' && out.columns > 0 ? out.columns : 100;
  const barsize = Math.max(8, Math.min(30, columns - 52 - labelWidth.value));
  const multi = new cliProgress.MultiBar(
    {
      stream: out as NodeJS.WritableStream,
      format: '{label} |{bar}| {percent}  {counts}  {rate}  ETA {eta_text}  {state}',
      hideCursor: true,
      clearOnComplete: false,
      stopOnComplete: false,
      gracefulExit: false,
      barsize,
      fps: 5,
      autopadding: true,
    },
    cliProgress.Presets.shades_classic,
  );
  const bars = new Map<string, cliProgress.SingleBar>();
  return {
    show(key, run) {
      const p = run.progress;
      const total = p?.total ?? null;
      const value = total === null ? 0 : Math.min(p?.processed ?? 0, total);
      labelWidth.value = Math.max(labelWidth.value, key.length);
      const payload = {
        label: key.padEnd(labelWidth.value),
        percent: formatPercent(p?.fraction).padStart(6),
        counts:
          total === null
            ? formatCount(p?.processed ?? 0)
            : `${formatCount(p?.processed ?? 0)}/${formatCount(total)}`,
        rate: formatRate(p?.rate_per_second),
        eta_text: formatEta(p?.eta_seconds),
        state: statusWord(run.status),
      };
      const barTotal = total === null || total === 0 ? 1 : total;
      const barValue = total === 0 ? 1 : value;
      let bar = bars.get(key);
      if (!bar) {
        bar = multi.create(barTotal, barValue, payload);
        bars.set(key, bar);
      } else {
        bar.setTotal(barTotal);
        bar.update(barValue, payload);
      }
    },
    note(text) {
      multi.log(`${text}\n`);
    },
    stop() {
      multi.stop();
    },
  };
}
