import { isJsonObject } from './run-record.js';
import type { RunStatus } from './run-status.js';

/**
 * How the progress history in `stats` is kept (all in one checkpoint UPDATE):
 * `stats.progress_samples` holds up to {@link MAX_PROGRESS_SAMPLES}
 * `[epoch_ms, processed]` pairs, taken from the database clock; a new sample
 * replaces the newest one while it is younger than
 * {@link MIN_SAMPLE_SPACING_MS} after the one before it, so the history spans
 * at least about a minute however often a job checkpoints.
 * `stats.progress_resumed_at_ms` lists the last resume times: a pair of
 * samples that straddles a resume (the time spent paused) never counts
 * towards the rate.
 */
export const MAX_PROGRESS_SAMPLES = 32;
/** See {@link MAX_PROGRESS_SAMPLES}. */
export const MIN_SAMPLE_SPACING_MS = 2_000;
/** The window the rate is measured over, back from the newest sample. */
export const RATE_WINDOW_MS = 60_000;
/** How many resume times `stats.progress_resumed_at_ms` keeps. */
export const MAX_RESUME_MARKS = 8;

/** Progress of a run, computed from its stats. */
export interface RunProgress {
  /** Items examined so far (`stats.scanned_count`), across pauses. */
  readonly processed: number;
  /**
   * The job's estimate of the total (`stats.total_estimate`), or `null` when
   * unknown. Never below `processed`: an estimate the run has passed (rows
   * added since it was taken) reads as unknown until Completed, when the
   * total is what was processed. The raw estimate stays in `stats.total_estimate`.
   */
  readonly total: number | null;
  /** `processed / total` in [0, 1], below 1 until Completed; `null` when the total is unknown. */
  readonly fraction: number | null;
  /** Items per second over the last minute of running time (pauses excluded), or `null` before two samples. */
  readonly rate_per_second: number | null;
  /** Seconds of running time left at the current rate; 0 once Completed; `null` when unknown. */
  readonly eta_seconds: number | null;
}

type Sample = readonly [number, number];

/** Computes {@link RunProgress} from a run's stats and status. Never throws on odd stats. */
export function computeProgress(stats: unknown, status: RunStatus): RunProgress {
  const s = isJsonObject(stats) ? stats : {};
  const processed = finiteOr(s['scanned_count'], 0);
  const totalRaw = s['total_estimate'];
  const estimate =
    typeof totalRaw === 'number' && Number.isFinite(totalRaw) && totalRaw >= 0 ? totalRaw : null;
  const samples = readSamples(s['progress_samples']);
  const resumes = readNumbers(s['progress_resumed_at_ms']);
  const rate = rateOf(samples, resumes);
  if (status === 'Completed') {
    return { processed, total: processed, fraction: 1, rate_per_second: rate, eta_seconds: 0 };
  }
  // An estimate the run has reached or passed says nothing about what is left.
  const total = estimate !== null && estimate > processed ? estimate : null;
  const fraction = total === null ? null : processed / total;
  // A run that is not moving (Paused, Failed) has no current rate and no ETA.
  if (status === 'Paused' || status === 'Failed') {
    return { processed, total, fraction, rate_per_second: null, eta_seconds: null };
  }
  let eta: number | null = null;
  // Past the estimate (it is only an estimate) the ETA is unknown, not 0.
  const remaining = total === null ? null : total - processed;
  if (remaining !== null && remaining > 0 && rate !== null && rate > 0) eta = Math.ceil(remaining / rate);
  return { processed, total, fraction, rate_per_second: rate, eta_seconds: eta };
}

/**
 * Items per second: Δprocessed / Δtime over consecutive sample pairs in the
 * last {@link RATE_WINDOW_MS} before the newest sample, skipping pairs that
 * straddle a resume. With no such pair in the window, the newest valid pair.
 */
function rateOf(samples: readonly Sample[], resumes: readonly number[]): number | null {
  const pairs: Array<[Sample, Sample]> = [];
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1]!;
    const b = samples[i]!;
    if (b[0] <= a[0]) continue;
    if (resumes.some((r) => r > a[0] && r <= b[0])) continue;
    pairs.push([a, b]);
  }
  if (pairs.length === 0) return null;
  const newest = samples[samples.length - 1]![0];
  let inWindow = pairs.filter(([a]) => a[0] >= newest - RATE_WINDOW_MS);
  if (inWindow.length === 0) inWindow = [pairs[pairs.length - 1]!];
  let items = 0;
  let ms = 0;
  for (const [a, b] of inWindow) {
    items += b[1] - a[1];
    ms += b[0] - a[0];
  }
  if (ms <= 0) return null;
  return Math.max(0, (items * 1000) / ms);
}

function readSamples(value: unknown): Sample[] {
  if (!Array.isArray(value)) return [];
  const out: Sample[] = [];
  for (const s of value) {
    if (Array.isArray(s) && typeof s[0] === 'number' && typeof s[1] === 'number') {
      if (Number.isFinite(s[0]) && Number.isFinite(s[1])) out.push([s[0], s[1]]);
    }
  }
  return out;
}

function readNumbers(value: unknown): number[] {
  return Array.isArray(value) ? value.filter((v): v is number => typeof v === 'number') : [];
}

function finiteOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}
