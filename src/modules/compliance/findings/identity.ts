import { createHash } from 'node:crypto';

/** Finding id: `<rule_id>:<resource_id>` (the rule id has no colon; the resource id has several). */
export function findingId(ruleId: string, resourceId: string): string {
  return `${ruleId}:${resourceId}`;
}

/**
 * Root-cause group: the same rule failing in the same account and region. Such findings share one
 * cause in practice (a baseline, a template, a pipeline or one shared resource such as a security
 * group), so they are fixed, and accepted, together. The id is stable across audits.
 */
export function groupIdOf(ruleId: string, accountId: string, region: string): string {
  return 'grp_' + createHash('sha256').update(`${ruleId}\u0000${accountId}\u0000${region}`).digest('hex').slice(0, 20);
}
