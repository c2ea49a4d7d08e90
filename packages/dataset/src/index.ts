/**
 * @oxicloud/dataset: the dataset generator behind `oxijobs seed`: data of
 * OxiCloud's storage domain as its own upload path writes it (users,
 * personal and shared drives with their grants, folder trees, files as
 * chunk manifests or legacy blobs, real bytes, thumbnails) at scale, with
 * named fault injections that later checks must find.
 *
 * @packageDocumentation
 */

export { backdateLocalBlob } from './backdate.js';
export type { BlobKind } from './blob-content.js';
export { BLOB_KINDS } from './blob-content.js';
export type { DatasetLogger } from './dataset-logger.js';
export type { DatasetErrorCode } from './errors.js';
export { DatasetError, isDatasetError } from './errors.js';
export type { IntRange } from './int-range.js';
export type {
  ContentKind,
  GenerateOxiCloudDatasetInput,
  OxiCloudDatasetCounts,
  OxiCloudDatasetOptions,
  OxiCloudDatasetPhase,
  OxiCloudDatasetProgress,
  OxiCloudDatasetReport,
  OxiCloudExpectedFinding,
  OxiCloudFaultExpectation,
  OxiCloudFaultName,
  OxiCloudFaultRecord,
  OxiCloudFaultResource,
  ResolvedOxiCloudDatasetOptions,
} from './oxicloud/index.js';
export {
  describeOxiCloudDatasetReport,
  describeOxiCloudExpectedFindings,
  describeOxiCloudFaultResources,
  expectedFaultFindings,
  generateOxiCloudDataset,
  isOxiCloudFaultName,
  OXICLOUD_DATASET_DEFAULTS,
  OXICLOUD_DATASET_LIMITS,
  OXICLOUD_FAULT_EXPECTATIONS,
  OXICLOUD_FAULT_NAMES,
  OXICLOUD_FAULTS_NOT_PORTED,
  oxiUsernamePrefix,
  parseOxiCloudFaults,
  resolveOxiCloudDatasetOptions,
} from './oxicloud/index.js';
