import { engineSchema, engineTable } from '@oxicloud/recoverable';
import { ClusterError } from './cluster-error.js';

/**
 * The engine's tables this package reads and writes, qualified with the
 * schema they live in (`jobs.nodes`, or `oxijobs.nodes` beside a real
 * OxiCloud): what each `Pg*` class computes once, in its constructor, from
 * its `schema` option.
 */
export interface EngineTables {
  /** The schema, validated (`jobs` when none was given). */
  readonly schema: string;
  readonly nodes: string;
  readonly periodicState: string;
  readonly periodicRuns: string;
  /** `@oxicloud/recoverable`'s runs (read only: the owners of runs). */
  readonly recoverableRuns: string;
}

/**
 * Validates a class's `schema` option (`engineSchema()` of
 * `@oxicloud/recoverable`) and qualifies the tables with it.
 *
 * @throws {ClusterError} `INVALID_OPTIONS` for a name the engine does not take (the message says what is allowed).
 */
export function engineTables(schema: string | undefined): EngineTables {
  let name: string;
  try {
    name = engineSchema(schema);
  } catch (cause) {
    throw new ClusterError('INVALID_OPTIONS', `schema: ${(cause as Error).message}`, { cause });
  }
  return {
    schema: name,
    nodes: engineTable(name, 'nodes'),
    periodicState: engineTable(name, 'periodic_state'),
    periodicRuns: engineTable(name, 'periodic_runs'),
    recoverableRuns: engineTable(name, 'recoverable_runs'),
  };
}
