import type { ContainerKind, Severity } from './style.js';

/** A graph node as the renderer needs it (no properties: containment is resolved when loading). */
export interface GraphNode {
  id: string;
  name: string;
  type: string;
  provider: string;
  region: string;
  account: string | null;
  /** VPC and subnet the node sits in, when its properties or edges say so. */
  vpc: string | null;
  subnet: string | null;
  /** For VPC and subnet nodes: their own native id (they become containers). */
  nativeId: string;
  severity: Severity | null;
  findings: number;
  /**
   * What picks the drawing among a type's variants, when known: a load balancer v2's type
   * (`application`, `network`, `gateway`), a subnet's `mapPublicIpOnLaunch` (`true`, `false`).
   */
  variant?: string | null;
}

export interface GraphEdge {
  source: string;
  target: string;
  type: string;
}

export interface RenderGraph {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

export interface Container {
  key: string;
  kind: ContainerKind;
  label: string;
  parent: string | null;
  /** The graph node a VPC or subnet container stands for, when it is a node of the graph. */
  nodeId: string | null;
  /** The account the container belongs to (null for the "no account" and "AWS managed" groups). */
  account: string | null;
  severity: Severity | null;
  findings: number;
  /** A subnet container's variant (public or private), from its node. */
  variant: string | null;
  children: string[];
  boxes: GraphNode[];
}

export const VPC_TYPE = 'aws.ec2.vpc';
export const SUBNET_TYPE = 'aws.ec2.subnet';

/** The pseudo account AWS-managed IAM policies carry (`arn:aws:iam::aws:policy/…`). */
export const AWS_MANAGED_ACCOUNT = 'aws';

/**
 * Where a node's VPC or subnet container is: the node's own account when that account holds the
 * VPC (or subnet) in that region, else the one account that does (a shared VPC, a requester-managed
 * interface, an inventory without accounts), else the node's own account.
 */
class Homes {
  private readonly byAccount = new Map<string, GraphNode>();
  private readonly byRegion = new Map<string, GraphNode[]>();

  add(n: GraphNode): void {
    this.byAccount.set(`${n.account ?? ''}|${n.region}|${n.nativeId}`, n);
    const k = `${n.region}|${n.nativeId}`;
    const list = this.byRegion.get(k) ?? [];
    list.push(n);
    this.byRegion.set(k, list);
  }

  /** The node standing for `id` as seen from `n`, if any. */
  find(n: GraphNode, id: string): GraphNode | undefined {
    const own = this.byAccount.get(`${n.account ?? ''}|${n.region}|${id}`);
    if (own) return own;
    const others = this.byRegion.get(`${n.region}|${id}`);
    return others?.length === 1 ? others[0] : undefined;
  }
}

/**
 * Groups nodes into containers. The rules (docs/exports.md, "Where a node is drawn"):
 * - account, then region, then VPC and subnet where the node's relations say so;
 * - a VPC container is (account, region, VPC id), a subnet container (account, region, subnet id);
 *   a node whose own account has no such VPC joins the one account's VPC that has it (see Homes);
 * - a node without an account goes in the "No account" group, by region;
 * - AWS-managed policies (account `aws`) go in the "AWS managed" group, without regions;
 * - VPC and subnet nodes are the containers themselves, so their name, type and findings label the
 *   container.
 * Returns the containers by key, the root keys, and the container each VPC or subnet node became.
 */
export function buildContainers(graph: RenderGraph): { containers: Map<string, Container>; roots: string[]; nodeContainer: Map<string, string> } {
  const containers = new Map<string, Container>();
  const roots: string[] = [];
  const nodeContainer = new Map<string, string>();
  const vpcs = new Homes();
  const subnets = new Homes();
  for (const n of graph.nodes) {
    if (n.type === VPC_TYPE) vpcs.add(n);
    else if (n.type === SUBNET_TYPE) subnets.add(n);
  }

  const ensure = (key: string, kind: ContainerKind, label: string, parent: string | null, account: string | null): Container => {
    let c = containers.get(key);
    if (!c) {
      c = { key, kind, label, parent, nodeId: null, account, severity: null, findings: 0, variant: null, children: [], boxes: [] };
      containers.set(key, c);
      if (parent) containers.get(parent)!.children.push(key);
      else roots.push(key);
    }
    return c;
  };
  const accountOf = (account: string | null) =>
    account ? ensure(`a:${account}`, 'account', `Account ${account}`, null, account).key : ensure('a:', 'no_account', 'No account', null, null).key;
  const region = (account: string | null, name: string) => {
    const global = !name || name === 'global';
    return ensure(`r:${account ?? ''}|${name}`, global ? 'global' : 'region', global ? 'Global' : `Region ${name}`, accountOf(account), account).key;
  };
  const adopt = (c: Container, owner: GraphNode) => {
    c.nodeId = owner.id;
    c.severity = owner.severity;
    c.findings = owner.findings;
    c.variant = owner.variant ?? null;
    nodeContainer.set(owner.id, c.key);
  };
  const vpc = (n: GraphNode, vpcId: string) => {
    const owner = vpcs.find(n, vpcId);
    const account = owner ? owner.account : n.account;
    const c = ensure(`v:${account ?? ''}|${n.region}|${vpcId}`, 'vpc', containerLabel('VPC', owner?.name, vpcId), region(account, n.region), account);
    if (owner) adopt(c, owner);
    return c.key;
  };
  const subnet = (n: GraphNode, vpcId: string | null, subnetId: string) => {
    const owner = subnets.find(n, subnetId);
    const parentVpc = owner?.vpc ?? vpcId;
    const parent = parentVpc ? vpc(owner ?? n, parentVpc) : region(owner ? owner.account : n.account, n.region);
    // A subnet belongs to its VPC's account (or, without a known VPC, to its own node's).
    const account = containers.get(parent)!.account;
    const c = ensure(`s:${account ?? ''}|${n.region}|${subnetId}`, 'subnet', containerLabel('Subnet', owner?.name, subnetId), parent, account);
    if (owner) adopt(c, owner);
    return c.key;
  };

  for (const n of graph.nodes) {
    if (n.type === VPC_TYPE) {
      vpc(n, n.nativeId);
      continue;
    }
    if (n.type === SUBNET_TYPE) {
      subnet(n, n.vpc, n.nativeId);
      continue;
    }
    let key: string;
    if (n.account === AWS_MANAGED_ACCOUNT) key = ensure('m:aws', 'managed', 'AWS managed', null, null).key;
    else key = n.subnet ? subnet(n, n.vpc, n.subnet) : n.vpc ? vpc(n, n.vpc) : region(n.account, n.region);
    containers.get(key)!.boxes.push(n);
  }
  return { containers, roots, nodeContainer };
}

function containerLabel(title: string, name: string | undefined, id: string): string {
  return name && name !== id ? `${title} ${name} (${id})` : `${title} ${id}`;
}
