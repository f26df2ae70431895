import { DOMParser } from '@xmldom/xmldom';
import type { TestApp } from '../harness/app.js';
import { call } from '../harness/identity.js';

function prng(seed: number) {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

const WORKLOAD = ['aws.ec2.instance', 'aws.rds.db_instance', 'aws.lambda.function', 'aws.elasticloadbalancingv2.load_balancer', 'aws.ec2.network_interface'];
const GLOBAL = ['aws.s3.bucket', 'aws.iam.role', 'aws.sqs.queue', 'aws.kms.key'];

/**
 * A synthetic AWS estate of exactly `count` nodes shaped like AWS Config items: per account and
 * region a VPC with three subnets, workloads in the subnets (configuration.vpcId/subnetId),
 * security groups in the VPC, and regional or global services outside it; edges between workloads.
 */
export function estate(count: number, seed = 11) {
  const random = prng(seed);
  const nodes: Array<Record<string, unknown>> = [];
  const edges: Array<{ source: string; target: string; type: string }> = [];
  const id = (n: { region: string; type: string; native_id: string }) => `aws:${n.region}:${n.type}:${n.native_id}`;
  const add = (type: string, nativeId: string, region: string, account: string, configuration: Record<string, unknown> = {}, name = nativeId) => {
    const node = {
      provider: 'aws',
      region,
      type,
      native_id: nativeId,
      name,
      account_id: account,
      properties: { configuration, supplementaryConfiguration: {}, relationships: [] },
      tags: {},
    };
    nodes.push(node);
    return id(node);
  };
  let block = 0;
  const workloads: string[] = [];
  while (nodes.length < count) {
    const account = ['111111111111', '222222222222'][block % 2]!;
    const region = ['us-east-1', 'eu-west-1', 'ap-south-1'][Math.floor(block / 2) % 3]!;
    const vpc = `vpc-${block}`;
    add('aws.ec2.vpc', vpc, region, account, { vpcId: vpc, cidrBlock: '10.0.0.0/16' }, `vpc-${region}-${block}`);
    const subnets = [0, 1, 2].map((s) => `subnet-${block}-${s}`);
    for (const [s, subnet] of subnets.entries()) {
      if (nodes.length >= count) break;
      add('aws.ec2.subnet', subnet, region, account, { subnetId: subnet, vpcId: vpc }, s === 0 ? `public-${block}` : `private-${block}-${s}`);
    }
    for (let k = 0; k < 45 && nodes.length < count; k++) {
      const type = WORKLOAD[Math.floor(random() * WORKLOAD.length)]!;
      const subnet = subnets[Math.floor(random() * subnets.length)]!;
      const native = `${type.split('.')[2]}-${block}-${k}`;
      workloads.push(add(type, native, region, account, { vpcId: vpc, subnetId: subnet }, `${type.split('.')[2]!.replace(/_/g, '-')}-${block}-${k}`));
    }
    for (let k = 0; k < 4 && nodes.length < count; k++) add('aws.ec2.security_group', `sg-${block}-${k}`, region, account, { groupId: `sg-${block}-${k}`, vpcId: vpc });
    for (let k = 0; k < 6 && nodes.length < count; k++) {
      const type = GLOBAL[Math.floor(random() * GLOBAL.length)]!;
      add(type, `${type.split('.')[2]}-${block}-${k}`, type === 'aws.iam.role' ? 'global' : region, account);
    }
    block++;
  }
  for (let i = 0; i < workloads.length * 0.7; i++) {
    const a = Math.floor(random() * workloads.length);
    const b = Math.min(workloads.length - 1, a + 1 + Math.floor(random() * 6));
    if (a !== b) edges.push({ source: workloads[a]!, target: workloads[b]!, type: random() < 0.5 ? 'connects_to' : 'routes_to' });
  }
  const unique = new Map(edges.map((e) => [`${e.source}|${e.target}|${e.type}`, e]));
  return { nodes: nodes.slice(0, count), edges: [...unique.values()] };
}

export async function loadEstate(t: TestApp, token: string, tenantId: string, graph: { nodes: unknown[]; edges: unknown[] }) {
  for (let i = 0; i < graph.nodes.length; i += 5000) {
    await call(t.app, token, { method: 'POST', url: `/api/v1/tenants/${tenantId}/nodes`, payload: { nodes: graph.nodes.slice(i, i + 5000) }, expect: 201 });
  }
  for (let i = 0; i < graph.edges.length; i += 5000) {
    await call(t.app, token, { method: 'POST', url: `/api/v1/tenants/${tenantId}/edges`, payload: { edges: graph.edges.slice(i, i + 5000) }, expect: 201 });
  }
}

/** Width and height from a PNG's IHDR chunk. */
export function pngSize(png: Buffer): { width: number; height: number } {
  if (png.subarray(0, 8).toString('hex') !== '89504e470d0a1a0a') throw new Error('not a PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

export interface ParsedDrawio {
  diagrams: number;
  cells: Array<{
    id: string;
    parent: string | null;
    vertex: boolean;
    edge: boolean;
    style: string;
    value: string | null;
    source: string | null;
    target: string | null;
    attrs: Record<string, string>;
    geometry: Record<string, number>;
    /** An edge's waypoints (mxGeometry's Array of mxPoint). */
    points: Array<[number, number]>;
  }>;
}

/** Parses a draw.io file and checks its structure the way draw.io reads it (throws naming the problem). */
export function parseDrawio(xml: string): ParsedDrawio {
  const errors: string[] = [];
  const doc = new DOMParser({ onError: (level, message) => void (level !== 'warning' && errors.push(message)) }).parseFromString(xml, 'text/xml');
  if (errors.length) throw new Error(`XML errors: ${errors.join('; ')}`);
  const root = doc.documentElement!;
  if (root.nodeName !== 'mxfile') throw new Error(`root element is ${root.nodeName}, not mxfile`);
  const diagrams = root.getElementsByTagName('diagram');
  const model = diagrams[0]?.getElementsByTagName('mxGraphModel')[0];
  if (!model) throw new Error('no mxGraphModel in the diagram');
  const cells: ParsedDrawio['cells'] = [];
  const list = model.getElementsByTagName('mxCell');
  for (let i = 0; i < list.length; i++) {
    const cell = list[i]!;
    const wrapper = cell.parentNode as unknown as typeof cell;
    const wrapped = wrapper.nodeName === 'UserObject' || wrapper.nodeName === 'object';
    const attrs: Record<string, string> = {};
    if (wrapped) for (let a = 0; a < wrapper.attributes.length; a++) attrs[wrapper.attributes[a]!.name] = wrapper.attributes[a]!.value;
    const geo = cell.getElementsByTagName('mxGeometry')[0];
    const geometry: Record<string, number> = {};
    if (geo) for (const k of ['x', 'y', 'width', 'height']) if (geo.getAttribute(k) !== null) geometry[k] = Number(geo.getAttribute(k));
    const points: Array<[number, number]> = [];
    const array = geo?.getElementsByTagName('Array')[0];
    if (array) {
      const list = array.getElementsByTagName('mxPoint');
      for (let p = 0; p < list.length; p++) points.push([Number(list[p]!.getAttribute('x')), Number(list[p]!.getAttribute('y'))]);
    }
    cells.push({
      id: (wrapped ? wrapper.getAttribute('id') : cell.getAttribute('id')) ?? '',
      parent: cell.getAttribute('parent'),
      vertex: cell.getAttribute('vertex') === '1',
      edge: cell.getAttribute('edge') === '1',
      style: cell.getAttribute('style') ?? '',
      value: cell.getAttribute('value'),
      source: cell.getAttribute('source'),
      target: cell.getAttribute('target'),
      attrs,
      geometry,
      points,
    });
  }
  const ids = new Set(cells.map((c) => c.id));
  if (ids.size !== cells.length) throw new Error('duplicate cell ids');
  if (!ids.has('0') || !ids.has('1')) throw new Error('cells 0 and 1 are missing');
  for (const c of cells) {
    if (c.id !== '0' && (!c.parent || !ids.has(c.parent))) throw new Error(`cell ${c.id} has an unknown parent ${c.parent}`);
    if (c.edge && (!c.source || !ids.has(c.source) || !c.target || !ids.has(c.target))) throw new Error(`edge ${c.id} has a dangling end`);
  }
  return { diagrams: diagrams.length, cells };
}
