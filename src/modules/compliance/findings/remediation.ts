import type { Rule } from '../rule-catalog.js';

/**
 * Placeholders in remediation commands that name the affected resource itself, filled from the
 * finding's node; every other placeholder (ports, trusted CIDRs, key ARNs) is the operator's choice
 * and stays as written.
 */
const RESOURCE_PLACEHOLDERS = new Set([
  'group-id',
  'security-group-id',
  'db-instance-id',
  'bucket-name',
  'snapshot-id',
  'network-acl-id',
  'db-cluster-id',
  'user-name',
  'trail-name',
  'load-balancer-name',
  'key-id',
  'instance-id',
  'group-name',
  'vpn-connection-id',
  'role-name',
  'launch-template-id',
  'alarm-name',
  'volume-id',
  'transit-gateway-id',
  'subnet-id',
]);

export interface RemediationNode {
  native_id: string;
  name: string;
  region: string;
  account_id: string | null;
}

export function fillCommand(command: string, node: RemediationNode | undefined): string {
  if (!node) return command;
  return command.replace(/<([a-z0-9-]+)>/g, (whole, name: string) => {
    if (name === 'region') return node.region || whole;
    if (name === 'account-id') return node.account_id || whole;
    if (!RESOURCE_PLACEHOLDERS.has(name)) return whole;
    // Names (buckets, users, trails) are the node's name; ids are its native id.
    return (name.endsWith('-name') ? node.name : node.native_id) || whole;
  });
}

export function remediationFor(findingId: string, rule: Rule, node: RemediationNode | undefined, patchAvailable: boolean) {
  return {
    finding_id: findingId,
    summary: rule.remediation.summary,
    steps: rule.remediation.steps.map((step, i) => ({ order: step.order ?? i + 1, action: step.action, command: fillCommand(step.command, node) })),
    terraform_patch_available: patchAvailable,
  };
}
