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
  severity: Severity | null;
  findings: number;
  children: string[];
  boxes: GraphNode[];
}

export const VPC_TYPE = 'aws.ec2.vpc';
export const SUBNET_TYPE = 'aws.ec2.subnet';

const NO_ACCOUNT = '(no account)';

/**
 * Groups nodes into containers: account, then region, then VPC and subnet where the node's
 * relations say so. VPC and subnet nodes are the containers themselves, so their name, type and
 * findings label the container. Returns the containers by key and the root keys (accounts).
 */
export function buildContainers(graph: RenderGraph): { containers: Map<string, Container>; roots: string[]; nodeContainer: Map<string, string> } {
  const containers = new Map<string, Container>();
  const roots: string[] = [];
  const nodeContainer = new Map<string, string>();
  const vpcNodes = new Map<string, GraphNode>();
  const subnetNodes = new Map<string, GraphNode>();
  for (const n of graph.nodes) {
    if (n.type === VPC_TYPE) vpcNodes.set(`${n.account ?? ''}|${n.region}|${n.nativeId}`, n);
    else if (n.type === SUBNET_TYPE) subnetNodes.set(`${n.account ?? ''}|${n.region}|${n.nativeId}`, n);
  }

  const ensure = (key: string, kind: ContainerKind, label: string, parent: string | null): Container => {
    let c = containers.get(key);
    if (!c) {
      c = { key, kind, label, parent, nodeId: null, severity: null, findings: 0, children: [], boxes: [] };
      containers.set(key, c);
      if (parent) containers.get(parent)!.children.push(key);
      else roots.push(key);
    }
    return c;
  };
  const account = (n: GraphNode) => ensure(`a:${n.account ?? NO_ACCOUNT}`, 'account', `Account ${n.account ?? NO_ACCOUNT}`, null).key;
  const region = (n: GraphNode) => ensure(`r:${n.account ?? ''}|${n.region}`, 'region', `Region ${n.region || 'global'}`, account(n)).key;
  const vpc = (n: GraphNode, vpcId: string) => {
    const owner = vpcNodes.get(`${n.account ?? ''}|${n.region}|${vpcId}`);
    const c = ensure(`v:${n.account ?? ''}|${n.region}|${vpcId}`, 'vpc', containerLabel('VPC', owner?.name, vpcId), region(n));
    if (owner) adopt(c, owner);
    return c.key;
  };
  const subnet = (n: GraphNode, vpcId: string | null, subnetId: string) => {
    const owner = subnetNodes.get(`${n.account ?? ''}|${n.region}|${subnetId}`);
    const parentVpc = owner?.vpc ?? vpcId;
    const parent = parentVpc ? vpc(n, parentVpc) : region(n);
    const c = ensure(`s:${n.account ?? ''}|${n.region}|${subnetId}`, 'subnet', containerLabel('Subnet', owner?.name, subnetId), parent);
    if (owner) adopt(c, owner);
    return c.key;
  };
  const adopt = (c: Container, owner: GraphNode) => {
    c.nodeId = owner.id;
    c.severity = owner.severity;
    c.findings = owner.findings;
    nodeContainer.set(owner.id, c.key);
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
    const key = n.subnet ? subnet(n, n.vpc, n.subnet) : n.vpc ? vpc(n, n.vpc) : region(n);
    containers.get(key)!.boxes.push(n);
  }
  return { containers, roots, nodeContainer };
}

function containerLabel(title: string, name: string | undefined, id: string): string {
  return name && name !== id ? `${title} ${name} (${id})` : `${title} ${id}`;
}
