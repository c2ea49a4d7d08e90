import type { ConsistencyCheck } from './consistency-check.js';
import { ConsistencyError } from './consistency-error.js';
import type { StatefulAdapter } from './stateful-adapter.js';

/**
 * Collects the {@link StatefulAdapter}s at wire-up time (once, in
 * `apps/server`) and answers which checks exist. A catalogue only: it runs
 * nothing. The server turns each check into a recoverable job with
 * `checkJob` and registers it with the engine.
 *
 * @example
 * ```ts
 * const registry = new ConsistencyRegistry();
 * registry.register(driveUsageRepository).register(folderTreeRepository).register(fileBlobRepository);
 * logger.info({ target: 'oxicloud::consistency' }, registry.describe());
 * // → "consistency: 3 adapter(s) registered, 3 check(s) available"
 * ```
 */
export class ConsistencyRegistry {
  readonly #adapters: StatefulAdapter[] = [];

  /**
   * Adds an adapter. The type forces `subsystem()` and `consistencyChecks()`
   * to exist.
   *
   * @throws {ConsistencyError} `DUPLICATE_CHECK` when one of its checks has the
   * name of a check already registered (check names are job names: unique).
   */
  register(adapter: StatefulAdapter): this {
    const known = new Map(this.allChecks().map((c) => [c.name, c]));
    for (const check of adapter.consistencyChecks()) {
      const other = known.get(check.name);
      if (other !== undefined && other !== check) {
        throw new ConsistencyError(
          'DUPLICATE_CHECK',
          `adapter "${adapter.subsystem()}" contributes a check named "${check.name}", which another registered adapter already contributes; check names are job names and must be unique`,
        );
      }
      known.set(check.name, check);
    }
    if (!this.#adapters.includes(adapter)) this.#adapters.push(adapter);
    return this;
  }

  /** The registered adapters, in registration order. */
  adapters(): readonly StatefulAdapter[] {
    return [...this.#adapters];
  }

  /** Every check contributed by every registered adapter, flat, without duplicates (same object twice). */
  allChecks(): ConsistencyCheck[] {
    const seen = new Set<ConsistencyCheck>();
    for (const adapter of this.#adapters) {
      for (const check of adapter.consistencyChecks()) seen.add(check);
    }
    return [...seen];
  }

  /** The check named `name`, or `undefined`. */
  get(name: string): ConsistencyCheck | undefined {
    return this.allChecks().find((c) => c.name === name);
  }

  /** The boot line: `consistency: N adapter(s) registered, M check(s) available`. */
  describe(): string {
    return `consistency: ${this.#adapters.length} adapter(s) registered, ${this.allChecks().length} check(s) available`;
  }
}
