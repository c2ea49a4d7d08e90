import { sidecarBookkeeping } from '../migrate.js';
import type {
  EngineMigrations,
  JobsCounts,
  OxiCloudEra,
  OxiCloudFacts,
  Recognition,
  RunCounts,
  SqlxMigrations,
} from './recognition.js';

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

const ERA: Record<OxiCloudEra, string> = {
  'pre-drive': 'before the drive era (no D0)',
  'drive-d0': 'drive era D0, D7 not done',
  'drive-d7': 'drive era, D7 done',
};

/** The facts in the order of the fact sheet's recipe, named as it names them. */
const FACTS: readonly (readonly [keyof OxiCloudFacts, string])[] = [
  ['chunkManifests', 'chunk manifests'],
  ['driveEraD0', 'drive era D0'],
  ['d7Done', 'D7 done'],
  ['deadPropertyRekey', 'dead-property rekey'],
  ['personalQuotaPinned', 'personal quota pinned'],
  ['grantRoleEnum', 'grant_role enum'],
  ['playlistGrants', 'playlist grants'],
];

function factsPhrase(facts: OxiCloudFacts): string {
  const has = FACTS.filter(([k]) => facts[k]).map(([, name]) => name);
  const lacks = FACTS.filter(([k]) => !facts[k]).map(([, name]) => name);
  return [has.length > 0 ? `has ${has.join(', ')}` : '', lacks.length > 0 ? `lacks ${lacks.join(', ')}` : '']
    .filter((part) => part !== '')
    .join('; ');
}

function sqlxPhrase(migrations: SqlxMigrations | 'not-readable'): string {
  if (migrations === 'not-readable') return '_sqlx_migrations not readable by this role';
  const latest = migrations.latest === null ? '' : `, latest ${migrations.latest}`;
  const failed =
    migrations.failed > 0
      ? `, ${plural(migrations.failed, 'failed one', 'failed ones')} (OxiCloud does not boot on one)`
      : '';
  return `${migrations.schema}._sqlx_migrations: ${plural(migrations.count, 'migration')}${latest}${failed}`;
}

function enginePhrase(
  migrations: EngineMigrations | 'not-readable',
  table = 'public.oxicloud_migrations',
): string {
  if (migrations === 'not-readable') return `${table} not readable by this role`;
  const latest = migrations.latest === null ? '' : `, latest ${migrations.latest}`;
  return `${table}: ${plural(migrations.count, 'migration')}${latest}`;
}

const runsPhrase = (runs: RunCounts) =>
  `${plural(runs.total, 'run')} (${runs.running} running, ${runs.paused} paused)`;

/** `3 runs (1 running, 1 paused), 2 run findings`, with what could not be counted said as such. */
function jobsPhrase(jobs: JobsCounts, schema = 'jobs'): string {
  const runs =
    jobs.runs === 'absent'
      ? `no ${schema}.recoverable_runs`
      : jobs.runs === 'not-readable'
        ? 'runs not readable by this role'
        : runsPhrase(jobs.runs);
  const findings =
    jobs.runFindings === 'absent'
      ? `no ${schema}.run_findings`
      : jobs.runFindings === 'not-readable'
        ? 'run findings not readable by this role'
        : plural(jobs.runFindings, 'run finding');
  return `${runs}, ${findings}`;
}

/** What the operator of an old-model database is told: what its runs are, and how to start fresh. */
function oldModelAdvice(jobs: JobsCounts): string {
  const made: string[] = [];
  let single = false;
  if (typeof jobs.runs === 'object' && jobs.runs.total > 0) {
    made.push(runsPhrase(jobs.runs));
    single = jobs.runs.total === 1;
  }
  if (typeof jobs.runFindings === 'number' && jobs.runFindings > 0) {
    made.push(plural(jobs.runFindings, 'run finding'));
    single = made.length === 1 && jobs.runFindings === 1;
  }
  const unread = [
    jobs.runs === 'not-readable' ? 'runs' : '',
    jobs.runFindings === 'not-readable' ? 'run findings' : '',
  ].filter((what) => what !== '');
  let held: string;
  if (made.length > 0) {
    held = `its ${made.join(' and ')} ${single ? 'was' : 'were'} recorded against that model, not OxiCloud's schema`;
    const paused = typeof jobs.runs === 'object' ? jobs.runs.paused : 0;
    if (paused > 0) {
      held +=
        paused === 1
          ? ", and the paused run's cursor is a place in that model's data"
          : ", and the paused runs' cursors are places in that model's data";
    }
    if (unread.length > 0) held += ` (${unread.join(' and ')} not readable by this role)`;
  } else if (unread.length > 0) {
    held = `its ${unread.join(' and ')} are not readable by this role`;
  } else {
    held = 'it holds no runs and no run findings';
  }
  return (
    `${held}; to start fresh on the embedded Postgres, move the data folder aside ` +
    '(OXICLOUD_DATA_DIR, default ./.oxicloud; the old database stays in it) or point OXICLOUD_DATA_DIR ' +
    'at another folder, or with DATABASE_URL point it at an empty database'
  );
}

/**
 * One line that says what {@link recogniseDatabase} found, for a log or an
 * error message: the kind, the migrations and eras behind it, and for the
 * engine's old storage model what its runs and findings are and how to start
 * fresh. It decides nothing: what a server does with each kind is the
 * caller's.
 *
 * @example
 * ```ts
 * describeRecognition({ kind: 'empty' });
 * // "empty database: no tables in any schema (extensions' own objects aside)"
 * ```
 */
export function describeRecognition(found: Recognition): string {
  switch (found.kind) {
    case 'empty':
      return "empty database: no tables in any schema (extensions' own objects aside)";
    case 'oxicloud': {
      const engine =
        found.engineMigrations === null
          ? `the engine's own schema (${sidecarBookkeeping(found.engineSchema)}) is not there yet`
          : `the engine's own schema is there too, a sidecar migrated here (${enginePhrase(found.engineMigrations, sidecarBookkeeping(found.engineSchema))}; ${jobsPhrase(found.jobs, found.engineSchema)})`;
      return `OxiCloud database (${sqlxPhrase(found.migrations)}; ${ERA[found.era]}): ${factsPhrase(found.facts)}; ${engine}`;
    }
    case 'engine-old-model':
      return (
        `engine database of the old storage model (${enginePhrase(found.migrations)}; ` +
        `${found.markers.join(', ')}: names OxiCloud does not have): ${oldModelAdvice(found.jobs)}`
      );
    case 'engine':
      return (
        `engine database on OxiCloud's storage schema (${enginePhrase(found.migrations)}; ${ERA[found.era]}): ` +
        `${factsPhrase(found.facts)}; ${jobsPhrase(found.jobs)}`
      );
    case 'unknown': {
      const listed = found.found.filter((item) => !item.startsWith('schema ')).length;
      const more = found.tableCount > listed ? ` and ${plural(found.tableCount - listed, 'more table')}` : '';
      return (
        `unrecognised database (found ${found.found.join(', ')}${more}): neither empty, nor OxiCloud's ` +
        "(_sqlx_migrations with auth.users, storage.folders, storage.files), nor the engine's " +
        '(public.oxicloud_migrations with those tables or with its old storage model)'
      );
    }
  }
}
