/**
 * Recognising what a database is before anything writes to it: empty,
 * OxiCloud's own (with its migration eras), the engine's on its old storage
 * model, the engine's on OxiCloud's schema, or unknown.
 *
 * @module
 */
export { describeRecognition } from './describe-recognition.js';
export { recogniseDatabase } from './recognise-database.js';
export type {
  EmptyDatabase,
  EngineDatabase,
  EngineMigrations,
  EngineOldModelDatabase,
  JobsCounts,
  OldModelMarker,
  OxiCloudDatabase,
  OxiCloudEra,
  OxiCloudFacts,
  Recognition,
  RecognitionKind,
  RunCounts,
  SqlxMigrations,
  Uncounted,
  UnknownDatabase,
} from './recognition.js';
export { FOUND_TABLES_LISTED } from './recognition.js';
