import type { Command } from 'commander';
import { OXICLOUD_SEED_FLAGS, type SeedFlags } from './seed-oxicloud-flags.js';

/** Adds every `oxijobs seed` flag (`--users <value>`, …: OxiCloud's model) to the `seed` command. */
export function addSeedFlags(command: Command): Command {
  for (const { flag, help } of OXICLOUD_SEED_FLAGS) command.option(`--${flag} <value>`, help);
  return command;
}

/** Turns commander's parsed options (camelCase keys) back into the seed's flag names (`files-per-user`). */
export function seedFlagsFromCli(parsed: Readonly<Record<string, unknown>>): SeedFlags {
  const flags: Record<string, string> = {};
  for (const { flag } of OXICLOUD_SEED_FLAGS) {
    const key = flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    const value = parsed[key];
    if (typeof value === 'string') flags[flag] = value;
  }
  return flags;
}
