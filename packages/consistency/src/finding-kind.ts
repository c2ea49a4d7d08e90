import { ConsistencyError } from './consistency-error.js';
import type { Inconsistency } from './inconsistency.js';
import { isSeverity, SEVERITIES, type Severity } from './severity.js';

/** What a finding's `magnitude` measures: bytes (a drift, a size), or a count (files, references). */
export const MAGNITUDE_UNITS = ['bytes', 'count'] as const;

/** One of {@link MAGNITUDE_UNITS}. */
export type MagnitudeUnit = (typeof MAGNITUDE_UNITS)[number];

/**
 * One finding kind, as the job that records it declares it. A check's
 * `ConsistencyCheck.kinds` (and `storage_migration`'s `findingKinds`)
 * is the one list of its kinds: the admin API lists it (`finding_kinds` of
 * `GET /api/admin/jobs`, a finding's `kind_declaration`), the CLI validates
 * `--kind` against it, the page and the CLI show a magnitude in its unit.
 * Nothing else in the tree lists kinds.
 *
 * @example
 * ```ts
 * const ORPHAN_ROOT: FindingKind = {
 *   kind: 'orphan_root',
 *   severity: 'DataLoss',
 *   meaning: "the folder's parent chain never reaches a top-level folder of its drive",
 *   repair: null, // a plan line needs a person
 * };
 * ```
 */
export interface FindingKind {
  /** snake_case, unique within the job: the findings' `kind`. */
  readonly kind: string;
  /** The severity of every finding of this kind (a finding with another one fails the run). */
  readonly severity: Severity;
  /** What a finding of this kind means, in one line of words. */
  readonly meaning: string;
  /** What `magnitude` measures; `null` when the kind has none. @defaultValue null */
  readonly magnitude?: MagnitudeUnit | null;
  /**
   * The repair a plan proposes for it, in words that name its action as a
   * plan line shows it (`recompute_folder_path: path and lpath from the
   * parent chain`); `null` when no action exists and a plan line always needs
   * a person. @defaultValue null
   */
  readonly repair?: string | null;
}

/** A job that declares the finding kinds it records (a `checkJob`, `storage_migration`). */
export interface DeclaresFindingKinds {
  readonly name: string;
  readonly findingKinds: readonly FindingKind[];
}

const KIND_NAME = /^[a-z][a-z0-9_]*$/;

/**
 * Validates a job's declared kinds once, when the job is made: snake_case
 * names, each once, a known severity, a meaning, a known magnitude unit.
 *
 * @throws {ConsistencyError} `INVALID_DECLARATION`, naming the job, the kind and what is allowed.
 */
export function assertFindingKinds(job: string, kinds: readonly FindingKind[]): void {
  const bad = (message: string) => {
    throw new ConsistencyError('INVALID_DECLARATION', `${job} declares ${message}`);
  };
  if (!Array.isArray(kinds)) bad('no finding kinds: `kinds` must be an array of { kind, severity, meaning }');
  const seen = new Set<string>();
  for (const k of kinds) {
    if (typeof k?.kind !== 'string' || !KIND_NAME.test(k.kind)) {
      bad(`a finding kind named ${JSON.stringify(k?.kind)}: a kind is snake_case (/^[a-z][a-z0-9_]*$/)`);
    }
    if (seen.has(k.kind)) bad(`the finding kind ${k.kind} twice`);
    seen.add(k.kind);
    if (!isSeverity(k.severity)) {
      bad(`${k.kind} with severity ${JSON.stringify(k.severity)}; allowed: ${SEVERITIES.join(', ')}`);
    }
    if (typeof k.meaning !== 'string' || k.meaning.trim() === '') bad(`${k.kind} without a meaning`);
    const unit = k.magnitude ?? null;
    if (unit !== null && !(MAGNITUDE_UNITS as readonly string[]).includes(unit)) {
      bad(`${k.kind} with magnitude ${JSON.stringify(unit)}; allowed: ${MAGNITUDE_UNITS.join(', ')} or null`);
    }
    const repair = k.repair ?? null;
    if (repair !== null && (typeof repair !== 'string' || repair.trim() === '')) {
      bad(`${k.kind} with an empty repair: name the action, or null when a person decides`);
    }
  }
}

/**
 * A finding checked against its job's declaration: its kind is declared, with
 * this severity.
 *
 * @throws {ConsistencyError} `UNDECLARED_FINDING`, naming the kind or the severities.
 */
export function assertDeclaredFinding(
  job: string,
  declared: ReadonlyMap<string, FindingKind>,
  finding: Inconsistency,
): void {
  const kind = declared.get(finding.kind);
  if (kind === undefined) {
    throw new ConsistencyError(
      'UNDECLARED_FINDING',
      `finding kind ${finding.kind} is not declared by ${job} (declared: ${[...declared.keys()].join(', ') || 'none'}); add it to the check's kinds`,
    );
  }
  if (kind.severity !== finding.severity) {
    throw new ConsistencyError(
      'UNDECLARED_FINDING',
      `${job} recorded ${finding.kind} as ${finding.severity}, but declares it ${kind.severity}`,
    );
  }
}

/**
 * The finding kinds of every job that records findings, by job: filled as the
 * server registers its jobs (`add` returns the job, so it wraps the
 * registration), read by the admin API (`finding_kinds` of each listed job,
 * a finding's `kind_declaration`).
 *
 * @example
 * ```ts
 * const kinds = new FindingKindCatalog();
 * for (const check of registry.allChecks()) engine.register(kinds.add(checkJob(check, { findings })));
 * kinds.kindsOf('folders_consistency').map((k) => k.kind); // ['parent_trashed_mismatch', …]
 * ```
 */
export class FindingKindCatalog {
  readonly #byJob = new Map<string, readonly FindingKind[]>();

  /**
   * Records `job`'s declared kinds and returns `job`.
   *
   * @throws {ConsistencyError} `INVALID_DECLARATION` (see {@link assertFindingKinds}), or
   * `DUPLICATE_CHECK` when another job of that name was added.
   */
  add<J extends DeclaresFindingKinds>(job: J): J {
    if (this.#byJob.has(job.name)) {
      throw new ConsistencyError(
        'DUPLICATE_CHECK',
        `the finding kinds of a job named ${job.name} were already added; job names are unique`,
      );
    }
    assertFindingKinds(job.name, job.findingKinds);
    this.#byJob.set(job.name, Object.freeze([...job.findingKinds]));
    return job;
  }

  /** The kinds job `name` declared, in its order; `[]` for a job that records none (or is unknown). */
  kindsOf(name: string): readonly FindingKind[] {
    return this.#byJob.get(name) ?? [];
  }

  /** The jobs that declared kinds, in the order they were added. */
  jobs(): string[] {
    return [...this.#byJob.keys()];
  }
}
