import type { FindingSummary, GraphEdgeRow, GraphNodeRow } from './queries';

/**
 * Containment as the service's diagrams draw it (src/modules/exports/render/model.ts and
 * graph-source.ts): account, then region, then VPC and subnet where the node's AWS Config item
 * (configuration.vpcId/subnetId, relationships) or an edge to a VPC or subnet node says so. VPC and
 * subnet nodes are the containers themselves.
 */
export const VPC_TYPE = 'aws.ec2.vpc';
export const SUBNET_TYPE = 'aws.ec2.subnet';

export type ContainerKind = 'account' | 'no_account' | 'region' | 'global' | 'vpc' | 'subnet' | 'managed';

export interface Group {
  key: string;
  kind: ContainerKind;
  name: string;
  parent: string | null;
  /** The graph node a VPC or subnet group stands for. */
  nodeId: string | null;
  children: string[];
  /** Resource ids drawn directly inside. */
  items: string[];
  /** Resources inside, at any depth (the group's own node included). */
  size: number;
  severity: string | null;
  findings: number;
}

export interface Model {
  groups: Map<string, Group>;
  roots: string[];
  /** The group a resource is drawn in (for a VPC or subnet node: its own group). */
  home: Map<string, string>;
  nodes: Map<string, GraphNodeRow>;
  findings: Map<string, FindingSummary>;
}

const RANK: Record<string, number> = { CRITICAL: 5, HIGH: 4, MEDIUM: 3, LOW: 2, INFO: 1 };
export const worse = (a: string | null, b: string | null): string | null => ((RANK[b ?? ''] ?? 0) > (RANK[a ?? ''] ?? 0) ? b : a);

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

function relationship(properties: Record<string, unknown>, resourceType: string): string[] {
  const rels = properties.relationships;
  if (!Array.isArray(rels)) return [];
  return rels.flatMap((r: unknown) => {
    const rel = r as { resourceType?: unknown; resourceId?: unknown };
    return rel.resourceType === resourceType && typeof rel.resourceId === 'string' ? [rel.resourceId] : [];
  });
}

function placement(node: GraphNodeRow): { vpc: string | null; subnet: string | null } {
  const config = (node.properties.configuration ?? {}) as Record<string, unknown>;
  const nested = (key: string) => text((config[key] as Record<string, unknown> | undefined)?.vpcId);
  const vpc = text(config.vpcId) ?? text(config.VpcId) ?? nested('dBSubnetGroup') ?? nested('vpcConfig') ?? relationship(node.properties, 'AWS::EC2::VPC')[0] ?? null;
  const subnets = relationship(node.properties, 'AWS::EC2::Subnet');
  const subnet = text(config.subnetId) ?? text(config.SubnetId) ?? (subnets.length === 1 ? subnets[0]! : null);
  return { vpc, subnet: node.type === VPC_TYPE || node.type === SUBNET_TYPE ? null : subnet };
}

export function buildModel(rows: GraphNodeRow[], edges: GraphEdgeRow[], findings: Map<string, FindingSummary>): Model {
  const nodes = new Map(rows.map((n) => [n.id, n]));
  const where = new Map(rows.map((n) => [n.id, placement(n)]));
  // Containment from edges, for nodes whose properties do not say where they sit.
  for (const e of edges) {
    for (const [a, b] of [
      [e.source, e.target],
      [e.target, e.source],
    ] as const) {
      const node = nodes.get(a);
      const other = nodes.get(b);
      if (!node || !other || node.type === VPC_TYPE) continue;
      const place = where.get(a)!;
      if (other.type === SUBNET_TYPE && node.type !== SUBNET_TYPE && !place.subnet) place.subnet = other.native_id;
      else if (other.type === VPC_TYPE && !place.vpc) place.vpc = other.native_id;
    }
  }
  const byNative = new Map<string, GraphNodeRow>();
  for (const n of rows) if (n.type === VPC_TYPE || n.type === SUBNET_TYPE) byNative.set(`${n.type}|${n.account_id ?? ''}|${n.region}|${n.native_id}`, n);

  const groups = new Map<string, Group>();
  const roots: string[] = [];
  const home = new Map<string, string>();
  const ensure = (key: string, kind: ContainerKind, name: string, parent: string | null): Group => {
    let g = groups.get(key);
    if (!g) {
      g = { key, kind, name, parent, nodeId: null, children: [], items: [], size: 0, severity: null, findings: 0 };
      groups.set(key, g);
      if (parent) groups.get(parent)!.children.push(key);
      else roots.push(key);
    }
    return g;
  };
  const account = (id: string | null) => (id ? ensure(`a:${id}`, 'account', id, null) : ensure('a:', 'no_account', '', null)).key;
  const region = (acc: string | null, name: string) => {
    const global = !name || name === 'global';
    return ensure(`r:${acc ?? ''}|${name}`, global ? 'global' : 'region', name, account(acc)).key;
  };
  const adopt = (g: Group, type: string, acc: string | null, reg: string, native: string) => {
    const owner = byNative.get(`${type}|${acc ?? ''}|${reg}|${native}`);
    if (owner && !g.nodeId) {
      g.nodeId = owner.id;
      g.name = owner.name && owner.name !== native ? `${owner.name} (${native})` : native;
      home.set(owner.id, g.key);
    }
  };
  const vpc = (acc: string | null, reg: string, id: string) => {
    const g = ensure(`v:${acc ?? ''}|${reg}|${id}`, 'vpc', id, region(acc, reg));
    adopt(g, VPC_TYPE, acc, reg, id);
    return g.key;
  };
  const subnet = (acc: string | null, reg: string, vpcId: string | null, id: string) => {
    const owner = byNative.get(`${SUBNET_TYPE}|${acc ?? ''}|${reg}|${id}`);
    const parentVpc = (owner && where.get(owner.id)?.vpc) ?? vpcId;
    const g = ensure(`s:${acc ?? ''}|${reg}|${id}`, 'subnet', id, parentVpc ? vpc(acc, reg, parentVpc) : region(acc, reg));
    adopt(g, SUBNET_TYPE, acc, reg, id);
    return g.key;
  };

  for (const n of rows) {
    const place = where.get(n.id)!;
    if (n.type === VPC_TYPE) {
      vpc(n.account_id, n.region, n.native_id);
      continue;
    }
    if (n.type === SUBNET_TYPE) {
      subnet(n.account_id, n.region, place.vpc, n.native_id);
      continue;
    }
    const key =
      n.account_id === 'aws'
        ? ensure('m:aws', 'managed', '', null).key
        : place.subnet
          ? subnet(n.account_id, n.region, place.vpc, place.subnet)
          : place.vpc
            ? vpc(n.account_id, n.region, place.vpc)
            : region(n.account_id, n.region);
    groups.get(key)!.items.push(n.id);
    home.set(n.id, key);
  }

  // Sizes and worst severities, bottom up.
  const total = (key: string): Group => {
    const g = groups.get(key)!;
    g.size = g.items.length + (g.nodeId ? 1 : 0);
    for (const id of [...g.items, ...(g.nodeId ? [g.nodeId] : [])]) {
      const f = findings.get(id);
      if (f) {
        g.findings += f.count;
        g.severity = worse(g.severity, f.severity);
      }
    }
    for (const child of g.children) {
      const c = total(child);
      g.size += c.size;
      g.findings += c.findings;
      g.severity = worse(g.severity, c.severity);
    }
    return g;
  };
  for (const key of roots) total(key);
  return { groups, roots, home, nodes, findings };
}

/** The groups holding a resource or group, innermost first (not a VPC or subnet node's own group). */
export function ancestors(model: Model, id: string): string[] {
  const chain: string[] = [];
  const group = model.groups.get(id);
  let current: string | null;
  if (group) current = group.parent;
  else {
    const home = model.home.get(id) ?? null;
    current = home && model.groups.get(home)?.nodeId === id ? (model.groups.get(home)?.parent ?? null) : home;
  }
  while (current) {
    chain.push(current);
    current = model.groups.get(current)?.parent ?? null;
  }
  return chain;
}

/** The containers a large graph opens at first, so its VPCs show (each closed, with its count). */
const OPEN_WHEN_LARGE: ReadonlySet<ContainerKind> = new Set(['account', 'no_account', 'managed', 'region', 'global']);

/** Groups open at first: all of them for a small graph, accounts and regions (so VPCs show) for a large one. */
export function initialExpanded(model: Model, large: boolean): Set<string> {
  const open = new Set<string>();
  for (const g of model.groups.values()) {
    if (!large || OPEN_WHEN_LARGE.has(g.kind)) open.add(g.key);
  }
  return open;
}

export interface VisibleElement {
  group: 'nodes' | 'edges';
  data: Record<string, unknown>;
  classes?: string;
}

/**
 * What the canvas shows: open groups as compound nodes with their contents; a closed group as one
 * node with its count; each edge between the visible things that hold its ends (merged when several
 * edges fall on the same pair).
 */
export function visibleElements(
  model: Model,
  edges: GraphEdgeRow[],
  open: Set<string>,
  label: { group: (g: Group, closed: boolean) => string; resource: (n: GraphNodeRow, f: FindingSummary | undefined) => string },
): {
  elements: VisibleElement[];
  /** Where a resource is on the canvas now: its own node, or the closed group holding it. */
  shownAs: Map<string, string>;
} {
  const elements: VisibleElement[] = [];
  const shownAs = new Map<string, string>();
  const severityClass = (s: string | null) => (s ? ` sev-${s.toLowerCase()}` : '');
  const mark = (key: string, as: string) => {
    const g = model.groups.get(key)!;
    if (g.nodeId) shownAs.set(g.nodeId, as);
    for (const id of g.items) shownAs.set(id, as);
    for (const c of g.children) mark(c, as);
  };
  const walk = (key: string, parent: string | null) => {
    const g = model.groups.get(key)!;
    const closed = !open.has(key);
    elements.push({
      group: 'nodes',
      data: { id: key, label: label.group(g, closed), parent: parent ?? undefined, kind: g.kind, resource: g.nodeId ?? undefined, group: true },
      classes: `group ${g.kind}${closed ? ' closed' : ''}${closed ? severityClass(g.severity) : ''}`,
    });
    if (closed) {
      mark(key, key);
      return;
    }
    if (g.nodeId) shownAs.set(g.nodeId, key);
    for (const c of g.children) walk(c, key);
    for (const id of g.items) {
      const n = model.nodes.get(id)!;
      shownAs.set(id, id);
      const f = model.findings.get(id);
      elements.push({
        group: 'nodes',
        data: { id, label: label.resource(n, f), parent: key, type: n.type, resource: id },
        classes: `resource${severityClass(f?.severity ?? null)}`,
      });
    }
  };
  for (const key of model.roots) walk(key, null);

  const seen = new Set<string>();
  for (const e of edges) {
    const s = shownAs.get(e.source);
    const t = shownAs.get(e.target);
    // A line between a resource and a group holding it is shown by the nesting itself.
    if (!s || !t || s === t || ancestors(model, s).includes(t) || ancestors(model, t).includes(s)) continue;
    const id = `${s}->${t}`;
    if (seen.has(id)) continue;
    seen.add(id);
    elements.push({ group: 'edges', data: { id, source: s, target: t, type: e.type } });
  }
  return { elements, shownAs };
}
