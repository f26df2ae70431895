import { createHash } from 'node:crypto';

/** Finding id: `<rule_id>:<resource_id>` (the rule id has no colon; the resource id has several). */
export function findingId(ruleId: string, resourceId: string): string {
  return `${ruleId}:${resourceId}`;
}

const digest = (text: string) => 'grp_' + createHash('sha256').update(text).digest('hex').slice(0, 20);
/** groupIdOf's ids by input: audits ask for the same few for every violation they see. */
const scopeGroups = new Map<string, string>();

/**
 * Root-cause group of a finding whose cause is unknown (a rule without `group_by`, or a resource
 * for which it yields nothing): the same rule failing in the same account and region, which in
 * practice shares a baseline, a template or a pipeline. The id is stable across audits.
 */
export function groupIdOf(ruleId: string, accountId: string, region: string): string {
  const key = `${ruleId}\u0000${accountId}\u0000${region}`;
  let id = scopeGroups.get(key);
  if (id === undefined) {
    if (scopeGroups.size >= 10_000) scopeGroups.clear();
    id = digest(key);
    scopeGroups.set(key, id);
  }
  return id;
}

/**
 * Root-cause group of a finding with a known cause (see findings/grouping.ts): the same rule and the
 * same cause, whose key identifies it (a node id, or property values qualified by account and
 * region). Stable across audits while the cause is the same; never equal to a groupIdOf id.
 */
export function causeGroupIdOf(ruleId: string, causeKey: string): string {
  return digest(`${ruleId}\u0000\u0001cause\u0000${causeKey}`);
}
