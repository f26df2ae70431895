import { FilterError } from './errors.js';
import { lookupTable } from '../../../platform/lookup-table.js';

/**
 * What a filter can compare: node columns, tags, raw properties, and named attributes mapped onto the
 * AWS Config configuration item that `properties` holds (contracts §3). The mapping is data, so the
 * README's table and the SQL come from the same place.
 */

export interface AttributePart {
  text: string;
  /** A quoted part is one segment whatever it contains (dots included). */
  quoted: boolean;
}

export const NODE_COLUMNS = ['id', 'name', 'type', 'provider', 'region', 'account_id', 'native_id'] as const;
export type NodeColumn = (typeof NODE_COLUMNS)[number];

/** One place a mapped attribute may be found: a property path, or an AWS Config relationship. */
export type MappedSource = { path: string[] } | { relationship: string };

export interface MappedAttribute {
  description: string;
  /** Tried in order; the first present value is the attribute's value. */
  sources: MappedSource[];
}

export const MAPPED_ATTRIBUTES: Record<string, MappedAttribute> = lookupTable({
  vpc_id: {
    description: 'the VPC of the resource',
    sources: [
      { path: ['configuration', 'vpcId'] },
      { path: ['configuration', 'VpcId'] },
      { path: ['configuration', 'dBSubnetGroup', 'vpcId'] },
      { path: ['configuration', 'vpcConfig', 'vpcId'] },
      { path: ['configuration', 'VpcConfig', 'VpcId'] },
      { path: ['configuration', 'VpcConfiguration', 'VpcId'] },
      { relationship: 'AWS::EC2::VPC' },
      { path: ['vpc_id'] },
    ],
  },
  subnet_id: {
    description: 'the subnet of the resource',
    sources: [{ path: ['configuration', 'subnetId'] }, { path: ['configuration', 'SubnetId'] }, { relationship: 'AWS::EC2::Subnet' }, { path: ['subnet_id'] }],
  },
  availability_zone: {
    description: 'the availability zone',
    sources: [{ path: ['availabilityZone'] }, { path: ['configuration', 'availabilityZone'] }, { path: ['configuration', 'placement', 'availabilityZone'] }],
  },
  arn: { description: 'the ARN of the configuration item', sources: [{ path: ['arn'] }, { path: ['configuration', 'arn'] }] },
  resource_type: { description: 'the AWS Config resource type, e.g. AWS::EC2::Instance', sources: [{ path: ['resourceType'] }] },
});

export type Attribute =
  | { kind: 'column'; name: string; column: NodeColumn }
  | { kind: 'tag'; name: string; key: string }
  | { kind: 'property'; name: string; path: string[] }
  | { kind: 'mapped'; name: string; mapping: MappedAttribute };

export const KNOWN_ATTRIBUTES = [...NODE_COLUMNS, ...Object.keys(MAPPED_ATTRIBUTES), 'tags.<key>', 'properties.<path>'];

/** Splits bare parts at dots; quoted parts stay whole. */
function segments(parts: AttributePart[]): string[] {
  const out: string[] = [];
  let current = '';
  let pending = false;
  for (const part of parts) {
    if (part.quoted) {
      current += part.text;
      pending = true;
      continue;
    }
    const pieces = part.text.split('.');
    current += pieces[0]!;
    pending = pending || pieces[0]!.length > 0;
    for (const piece of pieces.slice(1)) {
      out.push(current);
      current = piece;
      pending = piece.length > 0;
    }
  }
  if (pending || current) out.push(current);
  return out;
}

export function resolveAttribute(parts: AttributePart[], position: number): Attribute {
  const head = parts[0]!.text;
  const name = parts.map((p) => (p.quoted ? JSON.stringify(p.text) : p.text)).join('');
  const lower = head.toLowerCase();
  if (lower.startsWith('tags.')) {
    // Everything after "tags." is the key (tag keys may hold dots: kubernetes.io/cluster/x).
    const key =
      head.slice(5) +
      parts
        .slice(1)
        .map((p) => p.text)
        .join('');
    if (!key) throw new FilterError('tags. needs a tag key, e.g. tags.env', position);
    return { kind: 'tag', name, key };
  }
  if (lower.startsWith('properties.') || lower === 'properties') {
    const path = segments(parts).slice(1);
    if (path.length === 0 || path.some((s) => s === '')) {
      throw new FilterError(`"${name}" is not a property path: write properties.<key>[.<key>...], e.g. properties.configuration.instanceType`, position);
    }
    return { kind: 'property', name, path };
  }
  if (parts.length === 1) {
    if ((NODE_COLUMNS as readonly string[]).includes(lower)) return { kind: 'column', name: lower, column: lower as NodeColumn };
    const mapping = MAPPED_ATTRIBUTES[lower];
    if (mapping) return { kind: 'mapped', name: lower, mapping };
  }
  throw new FilterError(`unknown attribute "${name}": known are ${KNOWN_ATTRIBUTES.join(', ')}`, position);
}
