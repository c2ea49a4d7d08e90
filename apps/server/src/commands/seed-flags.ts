import {
  DATASET_FLAGS,
  type DatasetFlags,
  type DatasetOptions,
  datasetOptionsFromFlags,
  isDatasetError,
} from '@oxicloud/dataset';
import type { Command } from 'commander';
import { ServerError } from '../server-error.js';

/** Adds every `@oxicloud/dataset` flag (`--users <value>`, …) to the `seed` command. */
export function addSeedFlags(command: Command): Command {
  for (const { flag, help } of DATASET_FLAGS) command.option(`--${flag} <value>`, help);
  return command;
}

/**
 * Turns commander's parsed options (camelCase keys) back into the dataset's
 * flag names and validates them; a bad value becomes one `BAD_ARGUMENT` line.
 */
export function seedOptionsFromCli(parsed: Readonly<Record<string, unknown>>): DatasetOptions {
  const flags: Record<string, string | undefined> = {};
  for (const { flag } of DATASET_FLAGS) {
    const key = flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    const value = parsed[key];
    if (typeof value === 'string') flags[flag] = value;
  }
  try {
    return datasetOptionsFromFlags(flags as DatasetFlags);
  } catch (error) {
    if (isDatasetError(error)) throw new ServerError('BAD_ARGUMENT', error.message, { cause: error });
    throw error;
  }
}
