import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NormalizedSchema } from '@smithy/core/schema';
import { lookupTable } from '../../platform/lookup-table.js';
import { projectPath } from '../../platform/paths.js';
import { AWS_SERVICES, type AwsService } from './aws.js';

/**
 * Recorded AWS API responses (content/demo/aws-recorded: CloudMapper's public demo account, see
 * content/demo/README.md) played back to the aws discovery plugin on 127.0.0.1: `controlgraph demo`
 * reads the demo estate through it, and the plugin's tests read through it since no AWS account is
 * reachable there.
 *
 * Every service goes through its real SDK v3 client: one loopback HTTP server answers each signed
 * request in the wire format of the service's protocol, so the clients' own serializers, signers and
 * deserializers run:
 *
 * - EC2 (ec2Query), IAM, RDS, ELB and ELBv2 (awsQuery): form-encoded `Action=…&Version=…` POSTs,
 *   answered with XML. The recordings are the JSON shape the SDK returns (the CLI prints the same
 *   structures); they are written out as XML with the element names of the operation's output schema
 *   in the client package, which is what the client's deserializer reads back.
 * - Lambda (restJson1): `GET /2015-03-31/functions/`, answered with the recording as JSON.
 * - S3 (restXml): path-style REST calls, answered in S3's XML.
 * - S3 Control (restXml, signed as s3, paths under `/v20180820/`): the account's public access block
 *   and the access points.
 * - CloudTrail and KMS (awsJson1_1) and CloudWatch (awsJson1_0): JSON POSTs naming the operation in
 *   `X-Amz-Target`, answered with JSON (timestamps as epoch seconds, from the output schema).
 *
 * A call the data set has no recording of is answered as AWS answers an account without such
 * resources (an empty list, S3 Control's NoSuchPublicAccessBlockConfiguration, IAM's NoSuchEntity for
 * the account password policy), or, for the status of
 * a resource it records (a trail's GetTrailStatus), with NotImplemented, which leaves the status
 * absent; content/demo/README.md lists them. A test can add recordings written for it
 * (`startAwsReplay({ overlay })`), refuse a service or call (`deny`) and throttle a call (`throttle`).
 *
 * Two list calls answer in two pages, to exercise the plugin's paging: RDS DescribeDBInstances (the
 * recording, then rds-describe-db-instances.page-2.json, linked by `Marker` without `IsTruncated`,
 * as RDS does) and EC2 DescribeSecurityGroups (the recorded groups split by `NextToken`).
 */

/** The demo account of the recordings. */
export const DEMO_ACCOUNT = '123456789012';
export const DEMO_REGION = 'us-east-1';
export const RECORDED = projectPath('content', 'demo', 'aws-recorded', DEMO_REGION);
type Any = Record<string, any>;
/** A recording: the JSON output of one call. */
export const recorded = (name: string) => JSON.parse(readFileSync(`${RECORDED}/${name}.json`, 'utf8')) as Any;

/**
 * Recordings a test adds (test/fixtures, each marked as written for its test), looked up before
 * content/demo's: a directory of `<service>-<call>.json` files and per-resource `<service>-<call>/<id>.json`.
 */
let overlay: string | null = null;
/** Replays running in this process: the overlay is the process's, so two running replays must agree on it. */
let running = 0;
/** A recording, from the test's overlay if it has one, else from content/demo; null when neither has it. */
function recording(name: string): Any | null {
  for (const dir of overlay ? [overlay, RECORDED] : [RECORDED]) {
    try {
      return JSON.parse(readFileSync(`${dir}/${name}.json`, 'utf8')) as Any;
    } catch (error) {
      if ((error as { code?: string }).code !== 'ENOENT') throw error;
    }
  }
  return null;
}
/**
 * What AWS answers a list call of an account that has none of the resources: the data set has no
 * recording of the call (content/demo/README.md lists these answers).
 */
const orEmpty = (name: string, empty: Any) => () => [recording(name) ?? empty];

/**
 * A call about one resource answered from a recording of all of them: the entries of `list` whose
 * `key` is the request's `param` (DescribeLaunchTemplateVersions of a template, DescribeListeners of a
 * load balancer), or the per-resource recording `<name>/<id>.json` (a snapshot's attributes).
 */
const filtered = (name: string, list: string, key: string, param: string) => (form: URLSearchParams) => {
  const all = (recording(name)?.[list] ?? []) as Any[];
  return [{ [list]: all.filter((x) => x[key] === form.get(param)) }];
};
const perId = (name: string, param: string, missing: string) => (form: URLSearchParams) => {
  const id = form.get(param) ?? '';
  const found = /^[\w.-]+$/.test(id) ? recording(`${name}/${id}`) : null;
  if (!found) throw new ReplayError(missing, `${id} is not in the recordings`, 404);
  return [found];
};

const XMLNS = 'http://s3.amazonaws.com/doc/2006-03-01/';
const esc = (v: unknown) => String(v ?? '').replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

// ---------------------------------------------------------------------------------------------
// Query protocols (EC2, IAM, RDS, ELB, ELBv2)

/** How a list call links its pages: the output member holding the next token and the request parameter taking it. */
type Paging = 'NextToken' | 'NextMarker' | 'Marker' | 'IsTruncated';

interface QueryService {
  /** The signing name in the request's credential scope. */
  signing: string;
  version: string;
  ec2?: boolean;
  paging: Paging;
  /** Action → its pages (recorded outputs), given the request's parameters. */
  actions: Record<string, (form: URLSearchParams) => Any[]>;
  /** Actions that answer in one piece, without the service's paging members (IAM's credential report calls). */
  unpaged?: string[];
}

/** The recorded groups in two pages (EC2 paginates with NextToken when asked for MaxResults, and whenever it likes). */
function securityGroupPages(): Any[] {
  const groups = recorded('ec2-describe-security-groups').SecurityGroups as Any[];
  const half = Math.ceil(groups.length / 2);
  return [{ SecurityGroups: groups.slice(0, half) }, { SecurityGroups: groups.slice(half) }];
}

/** The AWS Query services of the recordings, by their name in AWS_SERVICES (whose client decodes them). */
const QUERY: Partial<Record<AwsService, QueryService>> = {
  ec2: {
    signing: 'ec2',
    version: '2016-11-15',
    ec2: true,
    paging: 'NextToken',
    actions: {
      DescribeVpcs: () => [recorded('ec2-describe-vpcs')],
      DescribeSubnets: () => [recorded('ec2-describe-subnets')],
      DescribeSecurityGroups: securityGroupPages,
      DescribeInstances: () => [recorded('ec2-describe-instances')],
      DescribeNetworkInterfaces: () => [recorded('ec2-describe-network-interfaces')],
      // Written for this project (content/demo/README.md): the recordings hold one region.
      DescribeRegions: () => [{ Regions: [{ RegionName: DEMO_REGION, Endpoint: `ec2.${DEMO_REGION}.amazonaws.com`, OptInStatus: 'opt-in-not-required' }] }],
      DescribeNetworkAcls: orEmpty('ec2-describe-network-acls', { NetworkAcls: [] }),
      DescribeTransitGateways: orEmpty('ec2-describe-transit-gateways', { TransitGateways: [] }),
      DescribeVpnConnections: orEmpty('ec2-describe-vpn-connections', { VpnConnections: [] }),
      DescribeClientVpnEndpoints: orEmpty('ec2-describe-client-vpn-endpoints', { ClientVpnEndpoints: [] }),
      DescribeVolumes: orEmpty('ec2-describe-volumes', { Volumes: [] }),
      DescribeLaunchTemplates: orEmpty('ec2-describe-launch-templates', { LaunchTemplates: [] }),
      DescribeLaunchTemplateVersions: filtered('ec2-describe-launch-template-versions', 'LaunchTemplateVersions', 'LaunchTemplateId', 'LaunchTemplateId'),
    },
  },
  elbv2: {
    signing: 'elasticloadbalancing',
    version: '2015-12-01',
    paging: 'NextMarker',
    actions: {
      DescribeLoadBalancers: () => [recorded('elbv2-describe-load-balancers')],
      DescribeListeners: filtered('elbv2-describe-listeners', 'Listeners', 'LoadBalancerArn', 'LoadBalancerArn'),
    },
  },
  elb: {
    signing: 'elasticloadbalancing',
    version: '2012-06-01',
    paging: 'NextMarker',
    actions: { DescribeLoadBalancers: () => [recorded('elb-describe-load-balancers')] },
  },
  rds: {
    signing: 'rds',
    version: '2014-10-31',
    paging: 'Marker',
    actions: {
      DescribeDBInstances: () => [recorded('rds-describe-db-instances'), recorded('rds-describe-db-instances.page-2')],
      DescribeDBClusters: orEmpty('rds-describe-db-clusters', { DBClusters: [] }),
      DescribeDBSnapshots: orEmpty('rds-describe-db-snapshots', { DBSnapshots: [] }),
      DescribeDBClusterSnapshots: orEmpty('rds-describe-db-cluster-snapshots', { DBClusterSnapshots: [] }),
      DescribeDBSnapshotAttributes: perId('rds-describe-db-snapshot-attributes', 'DBSnapshotIdentifier', 'DBSnapshotNotFound'),
      DescribeDBClusterSnapshotAttributes: perId('rds-describe-db-cluster-snapshot-attributes', 'DBClusterSnapshotIdentifier', 'DBClusterSnapshotNotFoundFault'),
    },
  },
  iam: {
    signing: 'iam',
    version: '2010-05-08',
    paging: 'IsTruncated',
    unpaged: ['GenerateCredentialReport', 'GetCredentialReport', 'GetAccountPasswordPolicy'],
    actions: {
      GetAccountAuthorizationDetails: () => [recorded('iam-get-account-authorization-details')],
      GenerateCredentialReport: () => [recorded('iam-generate-credential-report')],
      GetCredentialReport: () => [recorded('iam-get-credential-report')],
      // The data set has no password policy: IAM's answer for an account without one (content/demo/README.md).
      GetAccountPasswordPolicy: () => {
        const policy = recording('iam-get-account-password-policy');
        if (!policy) throw new ReplayError('NoSuchEntity', `The Password Policy with domain name ${DEMO_ACCOUNT} cannot be found.`, 404);
        return [policy];
      },
    },
  },
};

const pageToken = (index: number) => `replay-page-${index + 1}`;

/** Page `index` of `pages`, with the next page's token set the way the service sets it. */
function withToken(pages: Any[], index: number, paging: Paging): Any {
  const page = { ...pages[index] };
  const more = index + 1 < pages.length;
  if (paging === 'IsTruncated') {
    page.IsTruncated = more;
    if (more) page.Marker = pageToken(index + 1);
  } else if (more) {
    page[paging] = pageToken(index + 1);
  }
  return page;
}

/** Which page a request asks for, from its NextToken (EC2) or Marker parameter; null for a token never handed out. */
function requestedPage(token: string | null | undefined, count: number): number | null {
  if (!token) return 0;
  const match = /^replay-page-(\d+)$/.exec(token);
  const index = match ? Number(match[1]) - 1 : -1;
  return index > 0 && index < count ? index : null;
}

/**
 * A value as the XML the service sends for `ns`: element names from the schema's xmlName traits,
 * wrapped lists (`<member>`, EC2's `<item>`) unless flattened, timestamps in ISO 8601. Recorded keys
 * the model does not know are left out and noted in `unmodelled`.
 */
function toXml(ns: NormalizedSchema, tag: string, value: unknown, unmodelled: Set<string>): string {
  if (value === undefined || value === null) return '';
  if (ns.isListSchema()) {
    const items = Array.isArray(value) ? value : [value];
    const item = ns.getValueSchema();
    if (ns.getMergedTraits().xmlFlattened) return items.map((v) => toXml(item, tag, v, unmodelled)).join('');
    const itemTag = item.getMergedTraits().xmlName ?? 'member';
    return `<${tag}>${items.map((v) => toXml(item, itemTag, v, unmodelled)).join('')}</${tag}>`;
  }
  if (ns.isMapSchema()) {
    const key = ns.getKeySchema().getMergedTraits().xmlName ?? 'key';
    const val = ns.getValueSchema();
    const valTag = val.getMergedTraits().xmlName ?? 'value';
    const entries = Object.entries(value as Any).map(([k, v]) => `<${key}>${esc(k)}</${key}>${toXml(val, valTag, v, unmodelled)}`);
    if (ns.getMergedTraits().xmlFlattened) return entries.map((e) => `<${tag}>${e}</${tag}>`).join('');
    return `<${tag}>${entries.map((e) => `<entry>${e}</entry>`).join('')}</${tag}>`;
  }
  if (ns.isStructSchema()) return `<${tag}>${membersXml(ns, value as Any, unmodelled)}</${tag}>`;
  return `<${tag}>${esc(scalar(ns, value))}</${tag}>`;
}

function membersXml(ns: NormalizedSchema, value: Any, unmodelled: Set<string>): string {
  const members = new Map(ns.structIterator());
  for (const key of Object.keys(value)) if (!members.has(key)) unmodelled.add(`${ns.getName()}.${key}`);
  let out = '';
  for (const [name, member] of members) out += toXml(member, member.getMemberTraits().xmlName ?? name, value[name], unmodelled);
  return out;
}

function scalar(ns: NormalizedSchema, value: unknown): string {
  if (ns.isTimestampSchema()) {
    const date = new Date(value as string);
    const format = ns.getSchema();
    return format === 6 ? date.toUTCString() : format === 7 ? String(date.getTime() / 1000) : date.toISOString();
  }
  if (ns.isBlobSchema()) return Buffer.from(String(value)).toString('base64');
  // IAM's policy documents: the CLI prints them decoded; the API sends them URL-encoded.
  if (typeof value === 'object') return encodeURIComponent(JSON.stringify(value));
  return String(value);
}

/** The operation's output schema, from the client package's schemas (`<Action>$`: [9, namespace, name, traits, input, output]). */
function outputSchema(mod: Any, action: string): NormalizedSchema {
  const operation = mod[`${action}$`] as unknown[] | undefined;
  if (!operation) throw new Error(`no schema for ${action}`);
  return NormalizedSchema.of(operation[5] as Parameters<typeof NormalizedSchema.of>[0]);
}

function queryXml(service: QueryService, action: string, body: string, requestId: string): string {
  if (service.ec2) return `<${action}Response xmlns="http://ec2.amazonaws.com/doc/${service.version}/"><requestId>${requestId}</requestId>${body}</${action}Response>`;
  const ns = `https://${service.signing}.amazonaws.com/doc/${service.version}/`;
  return `<${action}Response xmlns="${ns}"><${action}Result>${body}</${action}Result><ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></${action}Response>`;
}

function queryError(res: ServerResponse, service: QueryService | undefined, status: number, code: string, message: string, requestId: string) {
  res.writeHead(status, { 'content-type': 'text/xml' });
  res.end(
    service?.ec2
      ? `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>${code}</Code><Message>${esc(message)}</Message></Error></Errors><RequestID>${requestId}</RequestID></Response>`
      : `<?xml version="1.0" encoding="UTF-8"?>\n<ErrorResponse><Error><Type>Sender</Type><Code>${code}</Code><Message>${esc(message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
  );
}

// ---------------------------------------------------------------------------------------------
// S3 (restXml)

function s3Error(res: ServerResponse, status: number, code: string, message: string) {
  res.writeHead(status, { 'content-type': 'application/xml' });
  res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${esc(message)}</Message><RequestId>replay</RequestId></Error>`);
}

function xml(res: ServerResponse, body: string) {
  res.writeHead(200, { 'content-type': 'application/xml' });
  res.end(`<?xml version="1.0" encoding="UTF-8"?>\n${body}`);
}

/**
 * S3 from the recordings: ListBuckets, GetBucketLocation, GetBucketAcl, GetBucketPolicy,
 * GetBucketVersioning (none recorded: never enabled), GetBucketEncryption (none recorded: the
 * not-found error S3 sends), and GetObject for `objects` (a Terraform state).
 */
function serveS3(url: URL, res: ServerResponse, objects: Map<string, Buffer>) {
  const buckets = recorded('s3-list-buckets') as { Buckets: Array<{ Name: string; CreationDate: string }>; Owner: { ID: string; DisplayName: string } };
  const perBucket = (call: string, bucket: string) => {
    try {
      return JSON.parse(readFileSync(`${RECORDED}/${call}/${bucket}.json`, 'utf8')) as Any;
    } catch {
      return null;
    }
  };
  const [bucket, ...rest] = url.pathname.slice(1).split('/').map(decodeURIComponent);
  const key = rest.join('/');
  if (!bucket) {
    return xml(
      res,
      `<ListAllMyBucketsResult xmlns="${XMLNS}"><Owner><ID>${esc(buckets.Owner.ID)}</ID><DisplayName>${esc(buckets.Owner.DisplayName)}</DisplayName></Owner><Buckets>${buckets.Buckets.map(
        (b) => `<Bucket><Name>${esc(b.Name)}</Name><CreationDate>${new Date(b.CreationDate).toISOString()}</CreationDate></Bucket>`,
      ).join('')}</Buckets></ListAllMyBucketsResult>`,
    );
  }
  if (key) {
    const body = objects.get(`${bucket}/${key}`);
    if (!body) return s3Error(res, 404, 'NoSuchKey', 'The specified key does not exist.');
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
    return res.end(body);
  }
  if (!buckets.Buckets.some((b) => b.Name === bucket)) return s3Error(res, 404, 'NoSuchBucket', 'The specified bucket does not exist');
  const q = url.searchParams;
  if (q.has('location')) {
    const location = perBucket('s3-get-bucket-location', bucket)?.LocationConstraint;
    return xml(res, `<LocationConstraint xmlns="${XMLNS}">${esc(location ?? '')}</LocationConstraint>`);
  }
  if (q.has('acl')) {
    const acl = perBucket('s3-get-bucket-acl', bucket);
    if (!acl) return s3Error(res, 403, 'AccessDenied', 'Access Denied');
    const grants = (acl.Grants as Any[])
      .map(
        (g) =>
          `<Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="${esc(g.Grantee.Type)}"><ID>${esc(g.Grantee.ID)}</ID><DisplayName>${esc(g.Grantee.DisplayName)}</DisplayName></Grantee><Permission>${esc(g.Permission)}</Permission></Grant>`,
      )
      .join('');
    return xml(
      res,
      `<AccessControlPolicy xmlns="${XMLNS}"><Owner><ID>${esc(acl.Owner.ID)}</ID><DisplayName>${esc(acl.Owner.DisplayName)}</DisplayName></Owner><AccessControlList>${grants}</AccessControlList></AccessControlPolicy>`,
    );
  }
  if (q.has('policy')) {
    const policy = perBucket('s3-get-bucket-policy', bucket);
    if (!policy) return s3Error(res, 404, 'NoSuchBucketPolicy', 'The bucket policy does not exist');
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(policy.Policy);
  }
  if (q.has('versioning')) return xml(res, `<VersioningConfiguration xmlns="${XMLNS}"/>`);
  if (q.has('encryption')) return s3Error(res, 404, 'ServerSideEncryptionConfigurationNotFoundError', 'The server side encryption configuration was not found');
  return s3Error(res, 501, 'NotImplemented', 'not in the recordings');
}

// ---------------------------------------------------------------------------------------------
// Lambda (restJson1)

function serveLambda(url: URL, res: ServerResponse, calls: string[], requestId: string) {
  const json = (status: number, body: unknown, errorType?: string) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-requestid': requestId, ...(errorType ? { 'x-amzn-errortype': errorType } : {}) });
    res.end(JSON.stringify(body));
  };
  if (!/^\/2015-03-31\/functions\/?$/.test(url.pathname)) return json(404, { message: `not in the recordings: ${url.pathname}` }, 'ResourceNotFoundException');
  const marker = url.searchParams.get('Marker');
  calls.push(`lambda ListFunctions${marker ? ` Marker=${marker}` : ''}`);
  const pages = [recorded('lambda-list-functions')];
  const index = requestedPage(marker, pages.length);
  if (index === null) return json(400, { message: `unknown Marker ${marker}` }, 'InvalidParameterValueException');
  return json(200, withToken(pages, index, 'NextMarker'));
}

// ---------------------------------------------------------------------------------------------
// JSON protocols (CloudTrail and KMS: awsJson1_1; CloudWatch: awsJson1_0): POSTs naming the
// operation in X-Amz-Target, answered with JSON.

/** The error a call of the recordings answers with, in the service's protocol. */
class ReplayError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** A call the data set has no recording of, for an existing resource: the plugin leaves what it would tell absent. */
const notRecorded = (what: string) => new ReplayError('NotImplemented', `${what} is not in the recordings`, 501);

/** The last segment of an ARN's resource (`…:trail/name` → `name`, `…:key/id` → `id`), or the value itself. */
const lastSegment = (value: unknown) =>
  String(value ?? '')
    .split(/[/:]/)
    .pop() ?? '';

/** A per-resource recording (`<call>/<id>.json`), or the error `missing` answers with. */
function perResource(call: string, id: string, missing: ReplayError): Any {
  if (!/^[\w.-]+$/.test(id)) throw missing;
  const found = recording(`${call}/${id}`);
  if (!found) throw missing;
  return found;
}

/** The services speaking a JSON protocol, by their name in AWS_SERVICES. */
const JSON_SIGNING = new Set<AwsService>(['cloudtrail', 'kms', 'cloudwatch']);

interface JsonService {
  name: AwsService;
  actions: Record<string, (input: Any) => Any>;
}

/** By signing name. Empty answers are what AWS gives an account without such resources (content/demo/README.md). */
const JSON_SERVICES = lookupTable<JsonService>({
  cloudtrail: {
    name: 'cloudtrail',
    actions: {
      DescribeTrails: () => recording('cloudtrail-describe-trails') ?? { trailList: [] },
      GetTrailStatus: (input) => perResource('cloudtrail-get-trail-status', lastSegment(input.Name), notRecorded(`GetTrailStatus of ${input.Name}`)),
      GetEventSelectors: (input) => perResource('cloudtrail-get-event-selectors', lastSegment(input.TrailName), notRecorded(`GetEventSelectors of ${input.TrailName}`)),
    },
  },
  kms: {
    name: 'kms',
    actions: {
      // One key a page, linked by NextMarker with Truncated, as KMS pages (to read the plugin's paging).
      ListKeys: (input) => {
        const keys = (recording('kms-list-keys')?.Keys ?? []) as Any[];
        const pages = keys.length ? keys.map((k) => ({ Keys: [k] })) : [{ Keys: [] }];
        const index = requestedPage(input.Marker as string | undefined, pages.length);
        if (index === null) throw new ReplayError('InvalidMarkerException', `unknown Marker ${input.Marker}`);
        return { ...withToken(pages, index, 'NextMarker'), Truncated: index + 1 < pages.length };
      },
      DescribeKey: (input) => perResource('kms-describe-key', lastSegment(input.KeyId), new ReplayError('NotFoundException', `Key '${input.KeyId}' does not exist`)),
      GetKeyRotationStatus: (input) => perResource('kms-get-key-rotation-status', lastSegment(input.KeyId), notRecorded(`GetKeyRotationStatus of ${input.KeyId}`)),
    },
  },
  monitoring: {
    name: 'cloudwatch',
    actions: { DescribeAlarms: () => recording('cloudwatch-describe-alarms') ?? { MetricAlarms: [], CompositeAlarms: [] } },
  },
});

/** A value as the JSON protocols send it for `ns`: timestamps as epoch seconds, blobs in base64. */
function toJson(ns: NormalizedSchema, value: unknown, unmodelled: Set<string>): unknown {
  if (value === undefined || value === null) return value;
  if (ns.isListSchema()) return (value as unknown[]).map((v) => toJson(ns.getValueSchema(), v, unmodelled));
  if (ns.isMapSchema()) return Object.fromEntries(Object.entries(value as Any).map(([k, v]) => [k, toJson(ns.getValueSchema(), v, unmodelled)]));
  if (ns.isStructSchema()) {
    const members = new Map(ns.structIterator());
    const out: Any = {};
    for (const [k, v] of Object.entries(value as Any)) {
      const member = members.get(k);
      if (member) out[k] = toJson(member, v, unmodelled);
      else unmodelled.add(`${ns.getName()}.${k}`);
    }
    return out;
  }
  if (ns.isTimestampSchema()) return new Date(value as string).getTime() / 1000;
  if (ns.isBlobSchema()) return Buffer.from(String(value)).toString('base64');
  return value;
}

function jsonAnswer(res: ServerResponse, status: number, body: unknown, requestId: string, errorType?: string) {
  res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': requestId, ...(errorType ? { 'x-amzn-errortype': errorType } : {}) });
  res.end(JSON.stringify(body));
}

// ---------------------------------------------------------------------------------------------
// S3 Control (restXml): the account's public access block and the region's access points.

/** S3 Control's calls of the recordings, by path; what each answers is in content/demo/README.md. */
function s3ControlAction(pathname: string): string {
  if (pathname === '/v20180820/configuration/publicAccessBlock') return 'GetPublicAccessBlock';
  if (pathname === '/v20180820/accesspoint') return 'ListAccessPoints';
  if (pathname.startsWith('/v20180820/accesspoint/')) return 'GetAccessPoint';
  return `unknown ${pathname}`;
}

async function serveS3Control(url: URL, res: ServerResponse, unmodelled: Set<string>): Promise<void> {
  const action = s3ControlAction(url.pathname);
  const schemaXml = async (root: string, value: Any) =>
    xml(res, `<${root} xmlns="${XMLNS}">${membersXml(outputSchema(await AWS_SERVICES.s3control.load(), action), value, unmodelled)}</${root}>`);
  if (action === 'GetPublicAccessBlock') {
    const block = recording('s3control-get-public-access-block');
    if (!block) return s3Error(res, 404, 'NoSuchPublicAccessBlockConfiguration', 'The public access block configuration was not found');
    const c = block.PublicAccessBlockConfiguration as Any;
    return xml(
      res,
      `<PublicAccessBlockConfiguration xmlns="${XMLNS}">${['BlockPublicAcls', 'IgnorePublicAcls', 'BlockPublicPolicy', 'RestrictPublicBuckets'].map((k) => `<${k}>${esc(c[k] ?? false)}</${k}>`).join('')}</PublicAccessBlockConfiguration>`,
    );
  }
  if (action === 'ListAccessPoints') return schemaXml('ListAccessPointsResult', recording('s3control-list-access-points') ?? { AccessPointList: [] });
  if (action === 'GetAccessPoint') {
    const name = decodeURIComponent(url.pathname.slice('/v20180820/accesspoint/'.length));
    const found = /^[\w.-]+$/.test(name) ? recording(`s3control-get-access-point/${name}`) : null;
    if (!found) return s3Error(res, 404, 'NoSuchAccessPoint', 'The specified accesspoint does not exist');
    return schemaXml('GetAccessPointResult', found);
  }
  return s3Error(res, 501, 'NotImplemented', `${url.pathname} is not in the recordings`);
}

// ---------------------------------------------------------------------------------------------

export interface AwsReplayOptions {
  /** A directory of recordings written for a test, looked up before content/demo's (see `recording`). */
  overlay?: string;
}

export interface AwsReplay {
  endpoint: string;
  /** Every HTTP request served, as `METHOD /path?query`. */
  requests: string[];
  /** Every call answered but S3's, as `service Action` plus its page token (the service as named in AWS_SERVICES). */
  calls: string[];
  /** Recorded keys the client's output schema has no member for (not sent). */
  unmodelled: Set<string>;
  /** Objects served by S3 GetObject, by `bucket/key` (put there by tests, e.g. a Terraform state). */
  objects: Map<string, Buffer>;
  /** Who signed each request (in the order of `requests`): the access key id and the session token. */
  signers: Array<{ accessKeyId: string | null; sessionToken: string | null }>;
  /**
   * Services (`kms`) or calls (`kms ListKeys`) answered with the service's permission error
   * (AccessDenied, EC2's UnauthorizedOperation, AccessDeniedException), as for credentials whose
   * policy does not allow them.
   */
  deny: Set<string>;
  /** Calls (`kms ListKeys`) answered with the service's throttling error this many more times before their recording. */
  throttle: Map<string, number>;
  close(): Promise<void>;
}

/** The signing name of a SigV4-signed request (`Credential=AKID/date/region/service/aws4_request`). */
const signingName = (req: IncomingMessage) => /Credential=[^/]+\/[^/]+\/[^/]+\/([^/]+)\/aws4_request/.exec(req.headers.authorization ?? '')?.[1];
/** The access key id and session token a SigV4 request was signed with. */
export function signerOf(req: IncomingMessage): { accessKeyId: string | null; sessionToken: string | null } {
  const token = req.headers['x-amz-security-token'];
  return { accessKeyId: /Credential=([^/]+)\//.exec(req.headers.authorization ?? '')?.[1] ?? null, sessionToken: typeof token === 'string' ? token : null };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The replay server on 127.0.0.1 (an ephemeral port). */
export async function startAwsReplay(options: AwsReplayOptions = {}): Promise<AwsReplay> {
  if (running > 0 && (options.overlay ?? null) !== overlay) throw new Error('another aws replay with other recordings is running in this process');
  overlay = options.overlay ?? null;
  running++;
  const deny = new Set<string>();
  const throttle = new Map<string, number>();
  /** The permission or throttling error `service Action` is answered with now, if any. */
  const refusal = (service: AwsService, action: string): ReplayError | null => {
    if (deny.has(service) || deny.has(`${service} ${action}`)) {
      const code = service === 'ec2' ? 'UnauthorizedOperation' : JSON_SIGNING.has(service) ? 'AccessDeniedException' : 'AccessDenied';
      return new ReplayError(code, `not authorized to perform ${service}:${action} (replay)`, 403);
    }
    const left = throttle.get(`${service} ${action}`) ?? 0;
    if (left > 0) {
      throttle.set(`${service} ${action}`, left - 1);
      const code = service === 'ec2' ? 'RequestLimitExceeded' : JSON_SIGNING.has(service) ? 'ThrottlingException' : 'Throttling';
      return new ReplayError(code, 'Rate exceeded (replay)', 400);
    }
    return null;
  };
  const requests: string[] = [];
  const calls: string[] = [];
  const unmodelled = new Set<string>();
  const objects = new Map<string, Buffer>();
  const signers: AwsReplay['signers'] = [];
  let served = 0;

  async function serveQuery(signing: string, req: IncomingMessage, res: ServerResponse, requestId: string) {
    const form = new URLSearchParams(await readBody(req));
    const action = form.get('Action') ?? '';
    const version = form.get('Version');
    const [name, service] = (Object.entries(QUERY) as Array<[AwsService, QueryService]>).find(([, s]) => s.signing === signing && s.version === version) ?? [];
    if (!name || !service) return queryError(res, undefined, 400, 'InvalidAction', `no ${signing} API of version ${version} in the recordings`, requestId);
    const param = service.ec2 ? 'NextToken' : 'Marker';
    const token = form.get(param);
    calls.push(`${name} ${action}${token ? ` ${param}=${token}` : ''}`);
    const refused = refusal(name, action);
    if (refused) return queryError(res, service, refused.status, refused.code, refused.message, requestId);
    // Object.hasOwn: an Action named like an Object.prototype member is not in the recordings either.
    let pages: Any[] | undefined;
    try {
      pages = Object.hasOwn(service.actions, action) ? service.actions[action]!(form) : undefined;
    } catch (error) {
      if (!(error instanceof ReplayError)) throw error;
      return queryError(res, service, error.status, error.code, error.message, requestId);
    }
    if (!pages) return queryError(res, service, 400, 'InvalidAction', `${action} is not in the recordings`, requestId);
    const index = requestedPage(token, pages.length);
    if (index === null) return queryError(res, service, 400, 'InvalidParameterValue', `unknown ${param} ${token}`, requestId);
    const schema = outputSchema(await AWS_SERVICES[name].load(), action);
    const page = service.unpaged?.includes(action) ? pages[index]! : withToken(pages, index, service.paging);
    const body = membersXml(schema, page, unmodelled);
    res.writeHead(200, { 'content-type': 'text/xml;charset=UTF-8', 'x-amzn-requestid': requestId });
    res.end(`<?xml version="1.0" encoding="UTF-8"?>\n${queryXml(service, action, body, requestId)}`);
  }

  async function serveJson(service: JsonService, req: IncomingMessage, res: ServerResponse, requestId: string) {
    const target = String(req.headers['x-amz-target'] ?? '');
    const action = target.slice(target.lastIndexOf('.') + 1);
    const input = JSON.parse((await readBody(req)) || '{}') as Any;
    const token = (input.Marker ?? input.NextToken) as string | undefined;
    calls.push(`${service.name} ${action}${token ? ` ${input.Marker ? 'Marker' : 'NextToken'}=${token}` : ''}`);
    try {
      const refused = refusal(service.name, action);
      if (refused) throw refused;
      if (!Object.hasOwn(service.actions, action)) throw new ReplayError('UnknownOperationException', `${action} is not in the recordings`);
      const out = service.actions[action]!(input);
      jsonAnswer(res, 200, toJson(outputSchema(await AWS_SERVICES[service.name].load(), action), out, unmodelled), requestId);
    } catch (error) {
      if (!(error instanceof ReplayError)) throw error;
      jsonAnswer(res, error.status, { __type: error.code, message: error.message }, requestId, error.code);
    }
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://replay');
    requests.push(`${req.method} ${url.pathname}${url.search}`);
    signers.push(signerOf(req));
    const requestId = `replay-${++served}`;
    const signing = signingName(req);
    const done = (error: unknown) => {
      if (!res.headersSent) queryError(res, undefined, 500, 'InternalFailure', String(error), requestId);
      else res.destroy();
    };
    try {
      if (!signing) return queryError(res, undefined, 403, 'MissingAuthenticationToken', 'request is not signed', requestId);
      if (signing === 's3' && url.pathname.startsWith('/v20180820/')) {
        const action = s3ControlAction(url.pathname);
        const refused = refusal('s3control', action);
        calls.push(`s3control ${action}`);
        if (refused) return s3Error(res, 403, 'AccessDenied', refused.message);
        serveS3Control(url, res, unmodelled).catch(done);
        return;
      }
      if (signing === 's3') return serveS3(url, res, objects);
      const json = JSON_SERVICES[signing];
      if (json) {
        serveJson(json, req, res, requestId).catch(done);
        return;
      }
      if (signing === 'lambda') return serveLambda(url, res, calls, requestId);
      if (req.method !== 'POST') return queryError(res, undefined, 400, 'InvalidAction', `${req.method} ${url.pathname} is not in the recordings`, requestId);
      serveQuery(signing, req, res, requestId).catch(done);
    } catch (error) {
      done(error);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    calls,
    unmodelled,
    objects,
    signers,
    deny,
    throttle,
    close: () =>
      new Promise((resolve) =>
        server.close(() => {
          if (--running === 0) overlay = null;
          resolve();
        }),
      ),
  };
}
