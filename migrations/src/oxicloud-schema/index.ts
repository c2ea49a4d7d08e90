/**
 * OxiCloud's drive-era schema as data ({@link OXICLOUD_SCHEMA}), a reader
 * of a live database's catalog into the same shape, and a diff of the two.
 *
 * @module
 */
export { OXICLOUD_SCHEMA } from './description.js';
export { diffSchema } from './diff-schema.js';
export { keyColumnsOf, readSchema } from './read-schema.js';
export { schemaAssumptionProblems } from './schema-assumptions.js';
export type * from './types.js';
export { ANY_DEFAULT } from './types.js';
