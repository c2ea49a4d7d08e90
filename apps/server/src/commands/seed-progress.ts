import cliProgress from 'cli-progress';
import type { SeedPhaseProgress } from './seed-run.js';

/** `oxijobs seed`'s progress at a terminal: one bar, with the log lines printed above it. */
export interface SeedProgress {
  /** The latest progress of the generation. */
  update(progress: SeedPhaseProgress): void;
  /** One log line (with its newline): printed above the bar, never inside it. */
  log(line: string): void;
  /** Ends the display: the pending log lines, then the bar as last drawn on its own line. */
  stop(): void;
}

/**
 * The bar on `out` (cli-progress): `phase |█████░░░░░| 52% 1,040/2,000`.
 * A log line written while the bar is shown goes above it (cli-progress
 * redraws the bar under it), so counters and log lines never share a line.
 */
export function terminalSeedProgress(out: NodeJS.WritableStream): SeedProgress {
  const multi = new cliProgress.MultiBar(
    {
      stream: out,
      format: '{phase} |{bar}| {percentage}% {value}/{total}',
      hideCursor: true,
      clearOnComplete: false,
      stopOnComplete: false,
      gracefulExit: true,
      barsize: 30,
      fps: 10,
      formatValue: (value) => value.toLocaleString('en-US'),
    },
    cliProgress.Presets.shades_classic,
  );
  let bar: cliProgress.SingleBar | undefined;
  let phaseWidth = 0;
  let stopped = false;
  return {
    update(p) {
      if (stopped) return;
      phaseWidth = Math.max(phaseWidth, p.phase.length);
      const payload = { phase: p.phase.padEnd(phaseWidth) };
      const total = Math.max(1, p.total);
      const value = p.total === 0 ? 1 : Math.min(p.done, p.total);
      if (bar === undefined) {
        bar = multi.create(total, value, payload);
      } else {
        bar.setTotal(total);
        bar.update(value, payload);
      }
    },
    log(line) {
      if (stopped) {
        out.write(line);
        return;
      }
      multi.log(line.endsWith('\n') ? line : `${line}\n`);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      // cli-progress drops the log lines not yet drawn on stop: draw them first.
      multi.update();
      multi.stop();
    },
  };
}
