import { badRequest } from '../../../platform/http/errors.js';
import { lookupTable } from '../../../platform/lookup-table.js';

/**
 * Which edges let an attacker or traffic move on, and in which direction. `forward`: from the edge's
 * source to its target; `reverse`: from target to source; `both`. Edges of other types (contains,
 * member_of, tagged, …) describe structure, not reachability, and are not followed unless a request
 * names them in `edge_types` (then forward, or with an explicit `type:direction`).
 */
export type Direction = 'forward' | 'reverse' | 'both';

export const TRAVERSABLE_EDGE_TYPES: Record<string, { direction: Direction; meaning: string }> = lookupTable({
  connects_to: { direction: 'forward', meaning: 'network traffic can flow from the source to the target' },
  routes_to: { direction: 'forward', meaning: 'a route table, gateway, NAT, transit gateway or peering route sends traffic on to the target' },
  allows_traffic_to: { direction: 'forward', meaning: 'a firewall or security rule admits traffic from the source to the target' },
  protects: { direction: 'forward', meaning: 'a security group or network ACL admits traffic to the resource it guards' },
  exposes: { direction: 'forward', meaning: 'a gateway, load balancer or public endpoint exposes the target' },
  forwards_to: { direction: 'forward', meaning: 'a load balancer, listener, API or proxy forwards requests to the target' },
  invokes: { direction: 'forward', meaning: 'the source triggers or calls the target (API to function, queue to consumer)' },
  can_assume: { direction: 'forward', meaning: 'IAM: the principal may assume the role (sts:AssumeRole)' },
  assumes_role: { direction: 'forward', meaning: 'IAM: the principal assumes the role' },
  trusts: { direction: 'reverse', meaning: 'IAM: the role trusts the principal, so the principal may assume the role' },
  uses_role: { direction: 'forward', meaning: "compute runs with the role (instance profile, execution role): taking it yields the role's credentials" },
  has_access: { direction: 'forward', meaning: 'IAM: the principal has permissions on the target' },
  can_access: { direction: 'forward', meaning: 'IAM: the principal has permissions on the target' },
  peers_with: { direction: 'both', meaning: 'VPC peering: traffic in both directions' },
  attached_to: { direction: 'both', meaning: 'a network interface or volume attached to an instance' },
  same_as: { direction: 'both', meaning: 'one machine seen by two sources (agent host and cloud instance)' },
  runs_on: { direction: 'both', meaning: 'a host or workload running on an instance' },
});

/** The virtual edge between the `internet` endpoint and the resources it reaches. */
export const INTERNET_EDGE = 'internet';

export interface Traversal {
  /** Types followed from source to target (forward and both). */
  forward: string[];
  /** Types followed from target to source (reverse and both). */
  reverse: string[];
  described: Array<{ type: string; direction: Direction }>;
}

const DIRECTIONS = new Set<Direction>(['forward', 'reverse', 'both']);

export function traversalOf(edgeTypes: string[] | undefined): Traversal {
  const chosen: Array<{ type: string; direction: Direction }> = [];
  if (!edgeTypes || edgeTypes.length === 0) {
    for (const [type, spec] of Object.entries(TRAVERSABLE_EDGE_TYPES)) chosen.push({ type, direction: spec.direction });
  } else {
    for (const raw of edgeTypes) {
      const at = raw.lastIndexOf(':');
      const type = (at > 0 ? raw.slice(0, at) : raw).trim();
      const given = at > 0 ? raw.slice(at + 1).trim() : null;
      if (given !== null && !DIRECTIONS.has(given as Direction)) {
        throw badRequest(`edge_types: "${raw}" has an unknown direction "${given}": use forward, reverse or both`, { field: 'edge_types', value: raw });
      }
      if (!/^[a-z0-9][a-z0-9_.-]*$/.test(type)) throw badRequest(`edge_types: "${raw}" is not an edge type`, { field: 'edge_types', value: raw });
      const direction = (given as Direction | null) ?? TRAVERSABLE_EDGE_TYPES[type]?.direction ?? 'forward';
      if (!chosen.some((c) => c.type === type)) chosen.push({ type, direction });
    }
  }
  return {
    forward: chosen.filter((c) => c.direction !== 'reverse').map((c) => c.type),
    reverse: chosen.filter((c) => c.direction !== 'forward').map((c) => c.type),
    described: chosen,
  };
}
