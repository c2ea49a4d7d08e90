/**
 * The client side of `oxijobs jobs …`: an HTTP client of the admin API,
 * table/JSON formatting and the `--follow` progress display.
 */
export type {
  AdminClientSettings,
  ApiAnswer,
  FindingsOptions,
  PageOptions,
  TriggerOptions,
} from './admin-client.js';
export { AdminClient } from './admin-client.js';
export type {
  ApiCancelled,
  ApiFinding,
  ApiFindingsPage,
  ApiJob,
  ApiJobOutcome,
  ApiLastOutcome,
  ApiOutcomeEnvelope,
  ApiRunProgress,
  ApiRunStarted,
  ApiRunStatus,
  ApiRunSummary,
} from './api-types.js';
export { isFinalStatus, SEVERITIES } from './api-types.js';
export type { CliIo, OutputStream } from './cli-io.js';
export { processIo, sleep } from './cli-io.js';
export type { ConnectionFlags } from './cli-values.js';
export {
  DEFAULT_ADMIN_URL,
  DEFAULT_FOLLOW_INTERVAL_SECONDS,
  DEFAULT_TIMEOUT_SECONDS,
  DEFAULT_WAITED_TRIGGER_TIMEOUT_SECONDS,
  parseParams,
  parseSeconds,
  parseWholeNumber,
  resolveConnection,
} from './cli-values.js';
export type { JobsCommandContext, TriggerFlags } from './commands.js';
export {
  BATCH_JOB,
  cancelCommand,
  findingsCommand,
  listCommand,
  runCommand,
  runsCommand,
  triggerCommand,
} from './commands.js';
export {
  FINDING_STATES,
  findingsDecideCommand,
  findingsListCommand,
  findingsShowCommand,
  formatBytes,
  formatFindingDetail,
} from './findings-commands.js';
export type { FollowOptions } from './follow.js';
export { exitCodeOfStatus, followBatch, followRun } from './follow.js';
export type { JobsClientErrorCode } from './jobs-client-error.js';
export { EXIT_CODES, JobsClientError } from './jobs-client-error.js';
export type { RepairLineJson, RepairPlanJson } from './repair-commands.js';
export {
  formatRepairPlan,
  parseChoices,
  repairApplyCommand,
  repairChooseCommand,
  repairPlanCommand,
  repairShowCommand,
} from './repair-commands.js';
