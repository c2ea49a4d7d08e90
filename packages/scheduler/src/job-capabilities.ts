/**
 * What a job declares about itself, so policy reads a declaration instead of
 * a name convention: whether it is a consistency check (and where it runs in
 * `consistency_batch`), whether it has a deep mode, which alerts it raises.
 * Both kinds of job (a periodic `JobHandler`, a recoverable handler) carry it.
 */
export interface JobCapabilities {
  /** A consistency check: its place in `consistency_batch` and what its run's count means; `null` otherwise. */
  readonly check: CheckCapability | null;
  /** `true` when `deep: true` changes what the job does (re-hash bytes, sniff mime types). */
  readonly deep: boolean;
  /** The alerts the job raises besides `job_failed` (for example `consistency_findings`). */
  readonly alerts: readonly string[];
}

/** A consistency check's part of {@link JobCapabilities}. */
export interface CheckCapability {
  /** Its place in `consistency_batch` (ascending; ties by name). */
  readonly order: number;
  /** What its run's `count` means, in words (`findings: drives whose used bytes drifted`). */
  readonly countMeaning: string;
}

/** A job that declares nothing: not a check, no deep mode, no alerts of its own. */
export const NO_CAPABILITIES: JobCapabilities = Object.freeze({
  check: null,
  deep: false,
  alerts: Object.freeze([]) as readonly string[],
});

/** A job's declaration with the gaps filled from {@link NO_CAPABILITIES}. */
export function capabilitiesOf(job: {
  readonly capabilities?: Partial<JobCapabilities> | undefined;
}): JobCapabilities {
  const c = job.capabilities;
  if (!c) return NO_CAPABILITIES;
  return Object.freeze({
    check: c.check ?? null,
    deep: c.deep === true,
    alerts: Object.freeze([...(c.alerts ?? [])]),
  });
}
