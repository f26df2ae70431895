import { propertyModel } from '../../compliance/index.js';
import { arnParts, awsNode } from '../inventory.js';
import { relationshipEdges } from '../config-relationships.js';
import type { ImportedNode } from './import-record.js';
import { configTypeOfArn, ownArn } from './arn-resource-type.js';

/**
 * One AWS Config configuration item (from a snapshot, a history page, batch-get-resource-config or a
 * select-resource-config result) as a graph node in the property model our rules read (awsNode), and
 * its relationships as edges. A record that cannot be a node throws ItemError with the reason.
 */
export class ItemError extends Error {
  override name = 'ItemError';
}

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Statuses of an item that describes no resource to import (AWS Config's configurationItemStatus). */
const GONE = new Set(['ResourceDeleted', 'ResourceDeletedNotRecorded', 'ResourceNotRecorded']);

/**
 * A recorded timestamp as an ISO string: Cloud Custodian's recordings (and boto3 dumps generally)
 * write datetimes as `{"__class__": "datetime", "year": …, "microsecond": …}` objects; rules and the
 * API compare timestamps as strings, as AWS Config writes them.
 */
function datetimeObject(value: Obj): string | undefined {
  if (value.__class__ !== 'datetime') return undefined;
  const n = (k: string) => (typeof value[k] === 'number' ? (value[k] as number) : 0);
  const ms = Date.UTC(n('year'), n('month') - 1, n('day') || 1, n('hour'), n('minute'), n('second'), Math.floor(n('microsecond') / 1000));
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

/** The value with every recorded datetime object turned into its ISO string. */
export function isoDates(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(isoDates);
  if (!isObject(value)) return value;
  const date = datetimeObject(value);
  if (date !== undefined) return date;
  const out: Obj = {};
  for (const [k, v] of Object.entries(value)) out[k] = isoDates(v);
  return out;
}

/** `configuration` and `supplementaryConfiguration` are JSON text in history pages and some exports. */
function objectMember(item: Obj, key: string): Obj {
  const value = item[key];
  if (value === undefined || value === null) return {};
  if (isObject(value)) return value;
  if (typeof value === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch (error) {
      throw new ItemError(`${key} is a string that is not JSON (${(error as Error).message})`);
    }
    if (isObject(parsed)) return isoDates(parsed) as Obj;
    if (parsed === null) return {};
  }
  throw new ItemError(`${key} is not an object`);
}

/** Tags as an object: configuration items have `{key: value}`; select results may carry `[{key, value}]`. */
function tagsOf(value: unknown): Obj {
  if (isObject(value)) return value;
  const out: Obj = {};
  if (Array.isArray(value)) {
    for (const t of value) {
      if (!isObject(t)) continue;
      const key = t.key ?? t.Key;
      if (typeof key === 'string') out[key] = t.value ?? t.Value ?? '';
    }
  }
  return out;
}

/**
 * Security groups recorded before AWS Config added `ipv4Ranges` (configuration item version 1.2, as
 * in the RDK's example) list their CIDRs only as `ipRanges` strings; current items carry both, and
 * rules read `ipv4Ranges` (the aws plugin writes both too). The older form gets the newer field.
 */
function withIpv4Ranges(configType: string, configuration: Obj): Obj {
  if (configType !== 'AWS::EC2::SecurityGroup') return configuration;
  const upgrade = (rules: unknown) =>
    Array.isArray(rules)
      ? rules.map((r) =>
          isObject(r) && r.ipv4Ranges === undefined && Array.isArray(r.ipRanges)
            ? { ...r, ipv4Ranges: r.ipRanges.filter((c) => typeof c === 'string').map((cidrIp) => ({ cidrIp })) }
            : r,
        )
      : rules;
  const out = { ...configuration };
  for (const key of ['ipPermissions', 'ipPermissionsEgress']) if (key in out) out[key] = upgrade(out[key]);
  return out;
}

/**
 * The configuration API (history, batch-get) returns each supplementary configuration as text
 * (`"BucketVersioningConfiguration": "{\"status\":\"Enabled\"}"`, `"KeyRotationStatus": "true"`), where
 * S3 snapshots and Config rule events hold values. Text is turned into the value the property model
 * (content/aws-config-schema) gives the member: an object or list, a boolean, a number. A member the
 * model does not know (S3's BucketPolicy) becomes the object its text holds, except S3's
 * AccessControlList, which AWS Config keeps as text in every form (and the aws plugin too).
 */
const KEPT_AS_TEXT = new Set(['AccessControlList']);

function typedSupplementary(configType: string, supplementary: Obj): Obj {
  const model = propertyModel();
  const out: Obj = {};
  for (const [key, value] of Object.entries(supplementary)) {
    if (typeof value !== 'string' || KEPT_AS_TEXT.has(key)) {
      out[key] = value;
      continue;
    }
    const type = model.typeOf(configType, `supplementaryConfiguration.${key}`) ?? (/^\s*[[{]/.test(value) ? 'object' : 'string');
    out[key] = typedText(value, type);
  }
  return out;
}

function typedText(value: string, type: string): unknown {
  if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  if ((type === 'integer' || type === 'number') && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  if (type !== 'object') return value;
  try {
    const parsed: unknown = JSON.parse(value);
    return parsed !== null && typeof parsed === 'object' ? isoDates(parsed) : value;
  } catch {
    return value;
  }
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * The node of a configuration item. The item's own fields win; what a select-resource-config result
 * did not select (resourceType, awsRegion, accountId) comes from the resource's ARN when it has one.
 */
export function configItemNode(raw: unknown): ImportedNode {
  if (!isObject(raw)) throw new ItemError(`a configuration item must be a JSON object (got ${raw === null ? 'null' : Array.isArray(raw) ? 'an array' : typeof raw})`);
  const item = isoDates(raw) as Obj;
  const status = text(item.configurationItemStatus);
  if (status && GONE.has(status))
    throw new ItemError(`${text(item.resourceType) ?? 'resource'} ${text(item.resourceId) ?? ''} has status ${status}: nothing to import`.replace('  ', ' '));
  const configuration = objectMember(item, 'configuration');
  const arn = ownArn(item, configuration);
  const configType = text(item.resourceType) ?? (arn ? configTypeOfArn(arn) : undefined);
  const nativeId = text(item.resourceId);
  const missing = [configType ? null : 'resourceType', nativeId ? null : 'resourceId'].filter(Boolean);
  if (missing.length) throw new ItemError(`no ${missing.join(' and no ')}${arn ? '' : ' (and no ARN to tell it)'}: select ${missing.join(', ')} with the configuration`);
  if (!/^AWS::[A-Za-z0-9]+::[A-Za-z0-9]+$/.test(configType!)) throw new ItemError(`resourceType "${configType}" is not an AWS Config resource type`);
  const fromArn = arnParts(arn);
  const region = text(item.awsRegion) ?? fromArn.region ?? (configType!.startsWith('AWS::IAM::') ? 'global' : '');
  const node = awsNode({
    configType: configType!,
    nativeId: nativeId!,
    name: text(item.resourceName) ?? nativeId!,
    region,
    account: text(item.accountId) ?? text(item.awsAccountId) ?? fromArn.account,
    arn: arn ?? null,
    configuration: withIpv4Ranges(configType!, configuration),
    supplementaryConfiguration: typedSupplementary(configType!, objectMember(item, 'supplementaryConfiguration')),
    relationships: Array.isArray(item.relationships) ? (item.relationships as Obj[]) : [],
    tags: tagsOf(item.tags),
  });
  const { source: _source, ...rest } = node;
  return { kind: 'node', node: rest, edges: relationshipEdges(item.relationships, region) };
}

/** When the item was captured (ISO string), to keep the newest of several items of one resource. */
export function captureTime(raw: unknown): string {
  if (!isObject(raw)) return '';
  const value = isoDates(raw.configurationItemCaptureTime);
  // Some SDK dumps write epoch seconds (or milliseconds) instead of a string.
  if (typeof value === 'number' && Number.isFinite(value)) return new Date(value < 1e11 ? value * 1000 : value).toISOString();
  return typeof value === 'string' ? value : '';
}
