import {
  DATASET_FLAGS,
  type DatasetFlags,
  type DatasetOptions,
  datasetOptionsFromFlags,
} from '@oxicloud/dataset';
import type { Command } from 'commander';
import { asBadArgument } from './seed-bad-argument.js';

/** Adds every `@oxicloud/dataset` flag (`--users <value>`, …) to the `seed` command. */
export function addSeedFlags(command: Command): Command {
  for (const { flag, help } of DATASET_FLAGS) command.option(`--${flag} <value>`, help);
  return command;
}

/**
 * The seed flags as given, read once the storage domain is known: each
 * domain checks them against its own model (`engineOptions()` here,
 * `oxiCloudSeedOptions` on `oxicloud`).
 */
export interface SeedRequest {
  /** The flags set, by name without the dashes (`files-per-user`). */
  readonly flags: DatasetFlags;
  /** The flags as the engine's {@link DatasetOptions}; a bad value becomes one `BAD_ARGUMENT` line. */
  engineOptions(): DatasetOptions;
}

/** Turns commander's parsed options (camelCase keys) back into the dataset's flag names. */
export function seedOptionsFromCli(parsed: Readonly<Record<string, unknown>>): SeedRequest {
  const flags: Record<string, string> = {};
  for (const { flag } of DATASET_FLAGS) {
    const key = flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    const value = parsed[key];
    if (typeof value === 'string') flags[flag] = value;
  }
  return { flags, engineOptions: () => asBadArgument(() => datasetOptionsFromFlags(flags)) };
}
