/**
 * @oxicloud/consistency: the consistency layer. Checks that find drift
 * between the database and blob storage, with severities, idempotent
 * findings, grace windows, two-pass re-verification, and the
 * `StatefulAdapter` contract the compiler enforces.
 *
 * @packageDocumentation
 */
export type { CheckOptions, CheckStore, ConsistencyCheck } from './consistency-check.js';
export type { FindingSink } from './finding-sink.js';
export type { Inconsistency } from './inconsistency.js';
export type { Severity } from './severity.js';
export { SEVERITIES } from './severity.js';
export type { StatefulAdapter } from './stateful-adapter.js';
