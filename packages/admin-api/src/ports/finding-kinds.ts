import type { FindingKind } from '@oxicloud/consistency';

/**
 * The finding kinds each job declares (a consistency check's `kinds`,
 * `storage_migration`'s failures): `FindingKindCatalog` of
 * `@oxicloud/consistency` satisfies it as it is. The listing's
 * `finding_kinds` and a finding's `kind_declaration` read it; without it
 * both are empty.
 *
 * @example
 * ```ts
 * const kinds = new FindingKindCatalog();
 * for (const check of registry.allChecks()) engine.register(kinds.add(checkJob(check, { findings })));
 * const app = createAdminApp({ …, findingKinds: kinds });
 * ```
 */
export interface FindingKindsView {
  /** The kinds job `name` declared, in its order; `[]` for a job that records none. */
  kindsOf(name: string): readonly FindingKind[];
}
