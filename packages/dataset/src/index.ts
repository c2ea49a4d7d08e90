/**
 * @oxicloud/dataset: the dataset generator behind `oxijobs seed`. Users,
 * drives, folder trees, files, blob rows and real blob bytes at scale
 * (set-based SQL), with named fault injections that later checks must find.
 *
 * @packageDocumentation
 */

export { backdateLocalBlob } from './backdate.js';
export type { BlobKind } from './blob-content.js';
export { BLOB_KINDS } from './blob-content.js';
export type { DatasetErrorCode } from './errors.js';
export { DatasetError, isDatasetError } from './errors.js';
export type { ExpectedFinding, FaultExpectation, FaultName } from './faults.js';
export { expectedFindings, FAULT_EXPECTATIONS, FAULT_NAMES, isFaultName, parseFaults } from './faults.js';
export type { DatasetFlags } from './flags.js';
export { DATASET_FLAGS, datasetOptionsFromFlags, parseByteSize } from './flags.js';
export type { DatasetLogger, GenerateDatasetInput } from './generate-dataset.js';
export { generateDataset, usernamePrefix } from './generate-dataset.js';
export type { DatasetOptions, IntRange, ResolvedDatasetOptions } from './options.js';
export { DATASET_DEFAULTS, DATASET_LIMITS, resolveDatasetOptions } from './options.js';
export type {
  ContentKind,
  GenerateOxiCloudDatasetInput,
  OxiCloudDatasetCounts,
  OxiCloudDatasetOptions,
  OxiCloudDatasetPhase,
  OxiCloudDatasetProgress,
  OxiCloudDatasetReport,
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
export type {
  DatasetCounts,
  DatasetPhase,
  DatasetProgress,
  DatasetReport,
  FaultRecord,
  FaultResource,
} from './report.js';
export { describeDatasetReport, describeExpectedFindings, describeFaultResources } from './report.js';
