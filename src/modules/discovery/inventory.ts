import type { NodeRecord } from '../graph/index.js';
import type { EdgeRecord } from '../graph/index.js';
import { nodeTypeFromConfigType } from '../compliance/index.js';

/** What a discovery plugin produces: nodes in the AWS Config property model, edges, and counts. */
export interface Inventory {
  nodes: NodeRecord[];
  edges: EdgeRecord[];
  /** Plugin-specific counts (resources seen, mapped, skipped, …). */
  counts: Record<string, number>;
  warnings: string[];
}

/** Region and account of an ARN (`arn:partition:service:region:account:resource`), when present. */
export function arnParts(arn: unknown): { region: string | null; account: string | null } {
  if (typeof arn !== 'string' || !arn.startsWith('arn:')) return { region: null, account: null };
  const parts = arn.split(':');
  return { region: parts[3] || null, account: parts[4] || null };
}

/** `us-east-1a` → `us-east-1`. */
export function regionOfZone(zone: unknown): string | null {
  return typeof zone === 'string' && /^[a-z]{2}(-[a-z]+)+-\d[a-z]$/.test(zone) ? zone.slice(0, -1) : null;
}

/** A node of an AWS Config resource type, with the configuration item's shape. */
export function awsNode(input: {
  configType: string;
  nativeId: string;
  name: string;
  region: string;
  account: string | null;
  configuration: Record<string, unknown>;
  supplementaryConfiguration?: Record<string, unknown>;
  relationships?: Array<Record<string, unknown>>;
  tags?: Record<string, unknown>;
  arn?: string | null;
  source?: NodeRecord['source'];
}): NodeRecord {
  const type = nodeTypeFromConfigType(input.configType);
  return {
    id: `aws:${input.region}:${type}:${input.nativeId}`,
    provider: 'aws',
    region: input.region,
    type,
    native_id: input.nativeId,
    name: input.name,
    account_id: input.account,
    properties: {
      resourceType: input.configType,
      resourceId: input.nativeId,
      resourceName: input.name,
      awsRegion: input.region,
      ...(input.account ? { accountId: input.account } : {}),
      ...(input.arn ? { arn: input.arn } : {}),
      configuration: input.configuration,
      supplementaryConfiguration: input.supplementaryConfiguration ?? {},
      relationships: input.relationships ?? [],
    },
    tags: input.tags ?? {},
    source: input.source ?? null,
  };
}

/** PascalCase keys of an AWS API response to AWS Config's camelCase (`DBInstanceIdentifier` → `dBInstanceIdentifier`). */
export function configCase(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(configCase);
  if (value instanceof Date) return value.toISOString();
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k.charAt(0).toLowerCase() + k.slice(1)] = configCase(v);
    return out;
  }
  return value;
}

/** AWS tag lists `[{Key, Value}]` as an object. */
export function tagObject(tags: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (Array.isArray(tags))
    for (const t of tags) if (t && typeof t === 'object' && 'Key' in t) out[String((t as { Key: unknown }).Key)] = String((t as { Value?: unknown }).Value ?? '');
  return out;
}

/**
 * An API response as JSON with its own member names (timestamps as ISO strings): the configuration of
 * the AWS Config types recorded with CloudFormation's PascalCase names (launch templates, listeners,
 * transit gateways, Client VPN endpoints, S3 access points).
 */
export function plain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plain);
  if (value instanceof Date) return value.toISOString();
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (k !== '$metadata') out[k] = plain(v);
    return out;
  }
  return value;
}
