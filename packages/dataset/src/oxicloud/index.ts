/**
 * The OxiCloud-shaped dataset generator: data as OxiCloud's own upload path
 * writes it (drives with owner grants, chunk manifests, FastCDC-sized
 * chunks, legacy blobs, dedup, thumbnails), with named faults (those of the
 * old generator, removed in issue 30, ported to this model; the ones not
 * ported are `OXICLOUD_FAULTS_NOT_PORTED`). The package's only generator.
 */
export type { ChunkReuse, FileBytesPlan, PlannedChunk } from './chunk-plan.js';
export { planChunkBytes, planChunkSizes, planFileBytes } from './chunk-plan.js';
export type { OxiCloudFaultExpectation, OxiCloudFaultName } from './faults.js';
export {
  isOxiCloudFaultName,
  OXICLOUD_FAULT_EXPECTATIONS,
  OXICLOUD_FAULT_NAMES,
  OXICLOUD_FAULTS_NOT_PORTED,
  parseOxiCloudFaults,
} from './faults.js';
export type { GenerateOxiCloudDatasetInput } from './generate-oxicloud-dataset.js';
export { generateOxiCloudDataset } from './generate-oxicloud-dataset.js';
export type {
  OxiCloudFaultRecord,
  OxiCloudFaultResource,
  OxiCloudStorageAction,
} from './inject-faults.js';
export type { OxiCloudDatasetOptions, ResolvedOxiCloudDatasetOptions } from './options.js';
export {
  OXICLOUD_DATASET_DEFAULTS,
  OXICLOUD_DATASET_LIMITS,
  resolveOxiCloudDatasetOptions,
} from './options.js';
export type { ContentKind } from './plan.js';
export { oxiUsernamePrefix } from './plan.js';
export type {
  OxiCloudDatasetCounts,
  OxiCloudDatasetPhase,
  OxiCloudDatasetProgress,
  OxiCloudDatasetReport,
  OxiCloudExpectedFinding,
} from './report.js';
export {
  describeOxiCloudDatasetReport,
  describeOxiCloudExpectedFindings,
  describeOxiCloudFaultResources,
  expectedFaultFindings,
} from './report.js';
export { listThumbnailHashes, THUMBNAIL_SIZES, thumbnailPath } from './thumbnails.js';
