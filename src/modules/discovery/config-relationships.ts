import { nodeTypeFromConfigType } from '../compliance/index.js';

/**
 * AWS Config relationships (`{resourceType, resourceId, relationshipName}` on a configuration item)
 * as graph edges. The edge types are the ones the aws plugin (aws.ts) and the Terraform state plugin
 * (terraform-state.ts) write for the same relation, so a resource read by a plugin and the same
 * resource imported from AWS Config have the same edges, and rules that group findings by an edge
 * (`group_by.edge`) and the graph views find them whatever the source.
 */

/** By the related resource's type and the relationship's verb (the name without the type). */
const KNOWN: Array<{ target: string; verb: RegExp; edge: string }> = [
  { target: 'AWS::EC2::VPC', verb: /^is contained in$/i, edge: 'in_vpc' },
  { target: 'AWS::EC2::Subnet', verb: /^is contained in$/i, edge: 'in_subnet' },
  { target: 'AWS::EC2::SecurityGroup', verb: /^is associated with$/i, edge: 'uses_security_group' },
  { target: 'AWS::IAM::Group', verb: /^is attached to$/i, edge: 'member_of' },
  { target: 'AWS::IAM::Policy', verb: /^is attached to$/i, edge: 'has_policy' },
  { target: 'AWS::IAM::Role', verb: /^is (associated with|attached to)$/i, edge: 'assumes_role' },
  { target: 'AWS::KMS::Key', verb: /^is (associated with|attached to)$/i, edge: 'encrypted_by' },
  { target: 'AWS::EC2::Instance', verb: /^is attached to$/i, edge: 'attached_to' },
  { target: 'AWS::ElasticLoadBalancingV2::LoadBalancer', verb: /^is (associated with|attached to)$/i, edge: 'listener_of' },
];

/** Types AWS Config records once per account, in the pseudo-region the plugins use for them. */
const GLOBAL_SERVICES = new Set(['IAM']);

/**
 * The relationship's verb: its name without the related type's last word, which AWS Config appends
 * in its own spelling ("Is contained in Vpc", "Is attached to CustomerManagedPolicy").
 */
function verbOf(name: string): string {
  return name.trim().replace(/\s+\S+$/, '');
}

/**
 * The edge type of a relationship: the plugins' name for a relation they also write, otherwise the
 * verb in snake case ("Contains NetworkInterface" → `contains`, "Is attached to Volume" →
 * `attached_to`), so every relation AWS Config states is kept under a stable name.
 */
export function relationshipEdgeType(targetConfigType: string, relationshipName: string): string {
  const verb = verbOf(relationshipName);
  const known = KNOWN.find((k) => k.target === targetConfigType && k.verb.test(verb));
  if (known) return known.edge;
  const generic = verb
    .replace(/^is\s+/i, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '');
  return generic || 'related_to';
}

/** The region a related resource's node id carries: IAM's are global, others share the source's region. */
export function relatedRegion(targetConfigType: string, sourceRegion: string): string {
  const service = /^AWS::([A-Za-z0-9]+)::/.exec(targetConfigType)?.[1];
  return service && GLOBAL_SERVICES.has(service) ? 'global' : sourceRegion;
}

/**
 * The edges of a configuration item's relationships, by the target's node id (`aws:<region>:<type>:<id>`,
 * as awsNode builds it). Relationships without a resource id, or with a type that is not an AWS Config
 * type, are left out: no node could be found for them.
 */
export function relationshipEdges(relationships: unknown, sourceRegion: string): Array<{ target: string; type: string }> {
  const edges = new Map<string, { target: string; type: string }>();
  for (const r of Array.isArray(relationships) ? relationships : []) {
    if (!r || typeof r !== 'object') continue;
    const { resourceType, resourceId, relationshipName } = r as Record<string, unknown>;
    if (typeof resourceType !== 'string' || typeof resourceId !== 'string' || !resourceId) continue;
    let nodeType: string;
    try {
      nodeType = nodeTypeFromConfigType(resourceType);
    } catch {
      continue;
    }
    const target = `aws:${relatedRegion(resourceType, sourceRegion)}:${nodeType}:${resourceId}`;
    const type = relationshipEdgeType(resourceType, typeof relationshipName === 'string' ? relationshipName : '');
    edges.set(`${target}\u0000${type}`, { target, type });
  }
  return [...edges.values()];
}
