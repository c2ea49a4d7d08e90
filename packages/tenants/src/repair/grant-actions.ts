import type { GrantRowState, RepairTx } from '../ports/repair-store.js';
import { type RepairAction, short, skipped } from './repair-action.js';
import {
  type ActionLine,
  changedSincePlan,
  lineBase,
  needsPerson,
  type RepairFinding,
} from './repair-line.js';

/** grants_consistency: an unexpired grant whose resource does not exist (resource = grant id). */
const DANGLING_GRANT = 'dangling_grant';
/** grants_consistency: an expired grant grant_cleanup left behind (resource = grant id). */
const EXPIRED_GRANT_LINGERING = 'expired_grant_lingering';

function grantState(g: GrantRowState) {
  return {
    subject_id: g.subjectId,
    resource_type: g.resourceType,
    resource_id: g.resourceId,
    role: g.role,
    expires_at: g.expiresAt,
  };
}

/** What apply compares: the grant's fields, and the fact the finding rests on. */
function before(kind: string, g: GrantRowState) {
  return kind === DANGLING_GRANT
    ? { ...grantState(g), resource_exists: g.resourceExists }
    : { ...grantState(g), expired: g.expired };
}

/** `null` when the grant is no longer what the finding says, else the finding's condition. */
function condition(kind: string, g: GrantRowState): string | null {
  if (kind === DANGLING_GRANT) {
    return g.resourceExists
      ? null
      : `grants ${g.role} on ${g.resourceType} ${g.resourceId}, which does not exist`;
  }
  return g.expired ? `expired at ${g.expiresAt} and still present` : null;
}

/**
 * `dangling_grant` and `expired_grant_lingering` → delete the grant row, as
 * `grant_cleanup` does for expired grants (a grant on a missing resource
 * grants nothing today, and would silently grant access to a resource
 * re-created with that id). The line's `before` is the grant's fields plus
 * the fact the finding rests on (its resource is missing; it has expired);
 * apply locks the grant and refuses when any of it changed (the grant was
 * extended, re-pointed, its resource re-created). The repair's audit row
 * keeps the deleted grant's fields. No derived rows.
 */
export const deleteGrant: RepairAction = {
  kinds: [DANGLING_GRANT, EXPIRED_GRANT_LINGERING],
  async plan(finding: RepairFinding, tx: RepairTx) {
    const id = finding.resourceId;
    const resource = { type: 'grant', id };
    const g = await tx.grantRow(id, false);
    if (g === null) return needsPerson(finding, resource, 'the grant no longer exists: nothing to repair');
    const why = condition(finding.kind, g);
    if (why === null) {
      return needsPerson(
        finding,
        resource,
        finding.kind === DANGLING_GRANT
          ? `its ${g.resourceType} ${g.resourceId} exists now: the grant is no longer dangling`
          : `it no longer expired (expires_at ${g.expiresAt ?? 'null'})`,
      );
    }
    const line: ActionLine = {
      type: 'action',
      ...lineBase(finding),
      action: finding.kind === DANGLING_GRANT ? 'delete_dangling_grant' : 'delete_expired_grant',
      resource,
      summary: `grant ${short(id)} (${g.role} of ${short(g.subjectId)} on ${g.resourceType} ${short(g.resourceId)}) ${why} → delete`,
      before: before(finding.kind, g),
      after: { grant: null },
      derived: [],
    };
    return line;
  },
  async apply(line, tx) {
    const id = line.resource.id;
    const g = await tx.grantRow(id, true);
    if (g === null) return skipped('the grant no longer exists');
    const now = before(line.fingerprint.kind, g);
    const changed = changedSincePlan(line.before, now);
    if (changed !== null) return skipped(`grant ${id} ${changed}`);
    if (!(await tx.deleteGrant(id))) return skipped('the grant no longer exists');
    return { status: 'applied', before: now, after: { grant: null } };
  },
  async verify(line, tx) {
    const g = await tx.grantRow(line.resource.id, false);
    if (g === null) return null;
    return condition(line.fingerprint.kind, g);
  },
};
