import { PermanentJobError } from '../../platform/jobs/definition.js';
import type { NodeRecord } from '../graph/index.js';
import type { EdgeRecord } from '../graph/index.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseCredentialReport, ROOT_ROW, type CredentialReport } from './aws-credential-report.js';
import { arnParts, awsNode, configCase, plain, regionOfZone, tagObject, type Inventory } from './inventory.js';
import { errorName, PERMISSION_ERROR } from './aws-errors.js';
import { readCloudTrail } from './aws-cloudtrail.js';
import { readCloudWatch } from './aws-cloudwatch.js';
import { readEc2Storage } from './aws-ec2-storage.js';
import { readAccountPasswordPolicy } from './aws-iam-password-policy.js';
import { readKms } from './aws-kms.js';
import { readRds } from './aws-rds.js';
import { readAccessPoints, readAccountPublicAccessBlock } from './aws-s3-control.js';
import { readVpcNetwork } from './aws-vpc.js';

/**
 * The aws plugin: reads an account with the AWS SDK for JavaScript v3 and maps each API response
 * onto the AWS Config property model (AWS Config's configuration items are the describe outputs with
 * camelCased keys, so `configCase` does most of the work; the differences are set explicitly).
 *
 * Each service is read through its own SDK client package, all of them dependencies of this service.
 * A package is imported when a job first reads its service, so starting the service stays cheap.
 */

export type Any = Record<string, any>;

export interface SdkClient {
  send(command: unknown, options?: { abortSignal?: AbortSignal }): Promise<Any>;
}

export interface AwsPluginOptions {
  /** Loads an SDK client package (`@aws-sdk/client-ec2`, …); null when it is not installed. */
  loadSdk?: (pkg: string) => Promise<Any | null>;
  /** Called with every client made (e.g. to set middleware). */
  configureClient?: (client: SdkClient, service: string, region: string) => void;
  /**
   * What every client signs with: the tenant's cloud connection. Absent only for a tenant the
   * operator granted the service's own credentials (the SDK's default chain then applies).
   */
  credentials?: () => Promise<{ accessKeyId: string; secretAccessKey: string; sessionToken?: string; expiration?: Date }>;
  /**
   * Where every client sends its requests, instead of the endpoints of the AWS configuration: the
   * recorded-response replay of `controlgraph demo` (aws-replay.ts). Never set from a job's config.
   */
  endpoint?: string;
  /**
   * How many times a client sends a request before giving up (the SDK's retry strategy: throttling
   * and transient errors are retried with exponential backoff and jitter). Default AWS_MAX_ATTEMPTS.
   */
  maxAttempts?: number;
  /** How often and how far apart GenerateCredentialReport is asked while IAM builds the report (tests shorten it). */
  credentialReportPoll?: { attempts: number; intervalMs: number };
}

export interface AwsConfig {
  regions?: string[];
  services?: string[];
  account_id?: string;
}

export const AWS_SERVICES = {
  ec2: { pkg: '@aws-sdk/client-ec2', client: 'EC2Client', global: false, load: () => import('@aws-sdk/client-ec2') },
  elbv2: {
    pkg: '@aws-sdk/client-elastic-load-balancing-v2',
    client: 'ElasticLoadBalancingV2Client',
    global: false,
    load: () => import('@aws-sdk/client-elastic-load-balancing-v2'),
  },
  elb: { pkg: '@aws-sdk/client-elastic-load-balancing', client: 'ElasticLoadBalancingClient', global: false, load: () => import('@aws-sdk/client-elastic-load-balancing') },
  rds: { pkg: '@aws-sdk/client-rds', client: 'RDSClient', global: false, load: () => import('@aws-sdk/client-rds') },
  lambda: { pkg: '@aws-sdk/client-lambda', client: 'LambdaClient', global: false, load: () => import('@aws-sdk/client-lambda') },
  s3: { pkg: '@aws-sdk/client-s3', client: 'S3Client', global: true, load: () => import('@aws-sdk/client-s3') },
  iam: { pkg: '@aws-sdk/client-iam', client: 'IAMClient', global: true, load: () => import('@aws-sdk/client-iam') },
  cloudtrail: { pkg: '@aws-sdk/client-cloudtrail', client: 'CloudTrailClient', global: false, load: () => import('@aws-sdk/client-cloudtrail') },
  kms: { pkg: '@aws-sdk/client-kms', client: 'KMSClient', global: false, load: () => import('@aws-sdk/client-kms') },
  cloudwatch: { pkg: '@aws-sdk/client-cloudwatch', client: 'CloudWatchClient', global: false, load: () => import('@aws-sdk/client-cloudwatch') },
  s3control: { pkg: '@aws-sdk/client-s3-control', client: 'S3ControlClient', global: false, load: () => import('@aws-sdk/client-s3-control') },
} as const;
export type AwsService = keyof typeof AWS_SERVICES;

/**
 * Client packages provided by the embedding process instead of the dependencies' `import()`, e.g. an
 * SDK build bundled elsewhere.
 */
const provided = new Map<string, Any>();

export function provideAwsSdkModule(pkg: string, module: Any | null): void {
  if (module) provided.set(pkg, module);
  else provided.delete(pkg);
}

async function defaultLoadSdk(pkg: string): Promise<Any | null> {
  const given = provided.get(pkg);
  if (given) return given;
  const spec = Object.values(AWS_SERVICES).find((s) => s.pkg === pkg);
  if (!spec) return null;
  try {
    return (await spec.load()) as Any;
  } catch (error) {
    // The package itself is missing (a broken install); a package that fails otherwise is an error of its own.
    if ((error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' && String((error as Error).message).includes(pkg)) return null;
    throw error;
  }
}

/**
 * The account of an IAM principal's ARN. Only AWS-managed policies live in the pseudo-account "aws";
 * a user, group or role ARN naming it (as some recordings do) tells nothing about its account.
 */
function principalAccount(arn: unknown): string | null {
  const account = arnParts(arn).account;
  return account && /^\d{12}$/.test(account) ? account : null;
}

function mostCommon(values: string[]): string | null {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  let best: string | null = null;
  for (const [v, n] of counts) if (best === null || n > counts.get(best)!) best = v;
  return best;
}

const nameTag = (tags: Record<string, string>, fallback: string) => tags.Name || fallback;

/** Security group rules as AWS Config writes them: ipRanges as strings, ipv4Ranges as objects. */
function sgRules(rules: unknown): Any[] {
  return (Array.isArray(rules) ? rules : []).map((r: Any) => {
    const rule = configCase(r) as Any;
    const v4 = (rule.ipRanges ?? []) as Any[];
    return { ...rule, ipv4Ranges: v4, ipRanges: v4.map((x) => x.cidrIp) };
  });
}

/** An IAM policy document: the API returns it URL-encoded; the CLI (and recordings of it) decoded. */
function encodedDocument(doc: unknown): string | undefined {
  if (doc === undefined || doc === null) return undefined;
  return typeof doc === 'string' ? doc : encodeURIComponent(JSON.stringify(doc));
}

/** Inline policies as AWS Config records them: `{policyName, policyDocument}` with the document URL-encoded. */
const inlinePolicies = (list: unknown) => (Array.isArray(list) ? list : []).map((x: Any) => ({ policyName: x.PolicyName, policyDocument: encodedDocument(x.PolicyDocument) }));

/**
 * How often, and how long apart, GenerateCredentialReport is asked again while IAM builds the
 * report (it takes seconds; IAM answers STARTED, then INPROGRESS, then COMPLETE).
 */
export const CREDENTIAL_REPORT_POLLS = 15;
export const CREDENTIAL_REPORT_POLL_MS = 2000;

/**
 * What the steps of one inventory share: the nodes and edge references read so far, the warnings,
 * the account being read, and the SDK calls (paginated `all`, optional-configuration `one`).
 */
export interface AwsReader {
  nodes: NodeRecord[];
  counts: Record<string, number>;
  warnings: string[];
  /** Native ids and ARNs to node ids, for the edges. */
  lookup: Map<string, string>;
  links: Array<{ source: string; ref: string; type: string }>;
  account: string | null;
  signal: AbortSignal | undefined;
  /** Records a node under its lookup keys; returns its id. */
  add(node: NodeRecord, ...keys: Array<string | undefined | null>): string;
  /** An edge of `type` from `source` to whatever `refs` name, resolved once everything is read. */
  refer(source: string, refs: unknown, type: string): void;
  clientFor(service: AwsService, region: string): Promise<{ mod: Any; client: SdkClient }>;
  all(service: AwsService, region: string, command: string, input?: Any): Promise<Any[]>;
  one(service: AwsService, region: string, command: string, input: Any, what: string): Promise<Any | null>;
  /**
   * Reads one kind of resource; a refused read (AccessDenied, UnauthorizedOperation, a region or
   * service the account has not opted in to) becomes a warning and the other reads go on.
   */
  guard(service: AwsService, region: string, what: string, read: () => Promise<void>): Promise<void>;
}

/**
 * How many times a client sends a request: the SDK's standard retry strategy already retries
 * throttling (Throttling, ThrottlingException, RequestLimitExceeded, TooManyRequestsException, …),
 * 5xx and connection errors with exponential backoff and jitter (a throttling error waits from a
 * 500 ms base, doubling, up to 20 s). The SDK's default of 3 attempts is too few for an account-wide
 * read that throttles, so more are allowed. 'adaptive' mode is not used: its client-side rate limiter
 * can fall to half a request a second after one throttle, which a per-key read (KMS rotation) would
 * then crawl at.
 */
export const AWS_MAX_ATTEMPTS = 10;

/**
 * The next page's request token of a list call, by the API's convention: EC2's NextToken; ELB,
 * ELBv2 and Lambda answer NextMarker for the request's Marker; IAM answers Marker with IsTruncated
 * (IsTruncated false ends the list); RDS answers Marker alone, present only while pages remain;
 * S3's ListBuckets a ContinuationToken.
 */
function nextPage(out: Any): Any | null {
  if (out.NextToken) return { NextToken: out.NextToken };
  if (out.NextMarker) return { Marker: out.NextMarker };
  if (out.Marker && out.IsTruncated !== false) return { Marker: out.Marker };
  if (out.ContinuationToken) return { ContinuationToken: out.ContinuationToken };
  return null;
}

function awsReader(config: AwsConfig, options: AwsPluginOptions, signal: AbortSignal | undefined): AwsReader {
  const load = options.loadSdk ?? defaultLoadSdk;
  const byId = new Map<string, NodeRecord>();
  const clients = new Map<string, { mod: Any; client: SdkClient }>();
  const r: AwsReader = {
    nodes: [],
    counts: {},
    warnings: [],
    lookup: new Map<string, string>(),
    links: [],
    account: config.account_id ?? null,
    signal,
    add(node, ...keys) {
      // Two different resources under one id (two roles recorded with the same RoleId, as CloudMapper's
      // demo account has) would leave only the last: the later one is kept under its ARN instead.
      const arn = (node.properties as Any).arn as string | undefined;
      const prior = byId.get(node.id);
      const priorArn = prior && ((prior.properties as Any).arn as string | undefined);
      if (arn && priorArn && priorArn !== arn) {
        r.warnings.push(`${node.type} ${node.native_id} is the id of both ${priorArn} and ${arn}; the second is kept under its ARN`);
        node.id = `aws:${node.region}:${node.type}:${arn}`;
      }
      byId.set(node.id, node);
      r.nodes.push(node);
      r.counts[node.type] = (r.counts[node.type] ?? 0) + 1;
      for (const k of keys) if (k) r.lookup.set(k, node.id);
      return node.id;
    },
    refer(source, refs, type) {
      for (const ref of Array.isArray(refs) ? refs : [refs]) if (typeof ref === 'string' && ref) r.links.push({ source, ref, type });
    },
    async clientFor(service, region) {
      const key = `${service}|${region}`;
      if (!clients.has(key)) {
        const spec = AWS_SERVICES[service];
        // Every client package is a dependency: one missing is a broken install, not a service to skip
        // (reading the account without it would drop that service's resources from the graph).
        let mod: Any | null;
        try {
          mod = await load(spec.pkg);
        } catch (error) {
          throw new PermanentJobError(`aws: cannot read ${service}: ${spec.pkg} failed to load (${(error as Error).message}); reinstall the dependencies (npm ci)`);
        }
        if (!mod) throw new PermanentJobError(`aws: cannot read ${service}: ${spec.pkg} is not installed; it is a dependency of this service: reinstall the dependencies (npm ci)`);
        const client = new mod[spec.client]({
          region,
          retryMode: 'standard',
          maxAttempts: options.maxAttempts ?? AWS_MAX_ATTEMPTS,
          ...(options.credentials ? { credentials: options.credentials } : {}),
          // Path-style S3 requests: a bucket name cannot be a host name of a loopback endpoint.
          ...(options.endpoint ? { endpoint: options.endpoint, ...(service === 's3' ? { forcePathStyle: true } : {}) } : {}),
        }) as SdkClient;
        if (service === 's3control') s3ControlOnIpEndpoint(client);
        options.configureClient?.(client, service, region);
        clients.set(key, { mod, client });
      }
      return clients.get(key)!;
    },
    /** Every page of a list call (see nextPage for the conventions). */
    async all(service, region, command, input = {}) {
      const c = await r.clientFor(service, region);
      const pages: Any[] = [];
      const seen = new Set<string>();
      let next: Any = { ...input };
      for (let page = 0; page < 1000; page++) {
        signal?.throwIfAborted();
        const out = await c.client.send(new c.mod[`${command}Command`](next), { abortSignal: signal });
        pages.push(out);
        const token = nextPage(out);
        // A token seen before would read the same pages again, without end.
        const key = token && JSON.stringify(token);
        if (!key || seen.has(key)) break;
        seen.add(key);
        next = { ...input, ...token };
      }
      return pages;
    },
    /**
     * One call for a resource's optional configuration. Absent configuration (no policy, no encryption
     * rule: NoSuch…/…NotFound) is null; a refused call (AccessDenied, a call the endpoint does not
     * implement) is null too, with a warning, so one unreadable bucket policy does not fail the job.
     */
    async one(service, region, command, input, what) {
      const c = await r.clientFor(service, region);
      signal?.throwIfAborted();
      try {
        return await c.client.send(new c.mod[`${command}Command`](input), { abortSignal: signal });
      } catch (error) {
        const name = errorName(error);
        if (/NoSuch|NotFound/.test(name)) return null;
        if (/AccessDenied|NotImplemented|MethodNotAllowed|UnsupportedOperation|AuthorizationError|UnauthorizedOperation/.test(name)) {
          r.warnings.push(`${service} ${command} ${what}: ${name}`);
          return null;
        }
        throw error;
      }
    },
    async guard(service, region, what, read) {
      try {
        await read();
      } catch (error) {
        const name = errorName(error);
        if (!PERMISSION_ERROR.test(name)) throw error;
        r.warnings.push(`${service} ${what} in ${region}: ${name}; not read (${String((error as Error).message).slice(0, 200)})`);
      }
    },
  };
  return r;
}

/**
 * S3 Control puts the account id in front of the endpoint's host (`123456789012.s3-control…`),
 * which an endpoint given as an IP address (the replay on 127.0.0.1, a local emulator) cannot take:
 * such an endpoint is used as it is, the account id then travels in its x-amz-account-id header.
 */
function s3ControlOnIpEndpoint(client: SdkClient): void {
  const config = (client as unknown as { config: { endpointProvider: (params: Any, context?: Any) => Any } }).config;
  const resolve = config.endpointProvider;
  config.endpointProvider = (params, context) => {
    const given = typeof params.Endpoint === 'string' ? params.Endpoint : null;
    if (given && /^https?:\/\/(\d+\.\d+\.\d+\.\d+|\[[0-9a-f:]+\])(:\d+)?\/?$/i.test(given)) return { url: new URL(given) };
    return resolve(params, context);
  };
}

/** The region the account-wide reads (IAM, S3, S3 Control, the region list) are sent to when none is configured. */
export const HOME_REGION = 'us-east-1';

export async function awsInventory(config: AwsConfig, options: AwsPluginOptions = {}, signal?: AbortSignal): Promise<Inventory> {
  const wanted = (config.services?.length ? config.services : Object.keys(AWS_SERVICES)) as AwsService[];
  const r = awsReader(config, options, signal);

  for (const service of wanted) {
    if (!Object.hasOwn(AWS_SERVICES, service)) {
      r.warnings.push(`unknown service ${service}`);
      continue;
    }
    // Loads every wanted client before the first call: a missing package fails the job at once.
    await r.clientFor(service, config.regions?.[0] ?? HOME_REGION);
  }
  // The region list matters only to regional services: a read of IAM or S3 alone does not ask for it.
  const regional = wanted.some((s) => Object.hasOwn(AWS_SERVICES, s) && !AWS_SERVICES[s].global);
  const regions = config.regions?.length ? config.regions : regional ? await enabledRegions(r) : [HOME_REGION];

  for (const region of regions) {
    for (const [service, read] of REGIONAL) if (wanted.includes(service)) await read(r, region);
  }

  // Global services, read once from the first region.
  const home = regions[0]!;
  if (wanted.includes('s3')) await r.guard('s3', home, 'buckets', () => readS3(r, home));
  if (wanted.includes('iam')) {
    await r.guard('iam', home, 'users, groups, roles and policies', () => readIam(r, home, options));
    // After the users and roles, whose ARNs told the account its node is named by.
    await readAccountPasswordPolicy(r, home);
  }
  // After IAM and the regional reads: S3 Control's calls name the account, which they told.
  if (wanted.includes('s3control')) {
    for (const region of regions) await readAccessPoints(r, region);
    await readAccountPublicAccessBlock(r, home);
  }

  return finishInventory(r, config);
}

/** The regional services in the order they are read, each read with its permission errors as warnings. */
const REGIONAL: Array<[AwsService, (r: AwsReader, region: string) => Promise<void>]> = [
  ['ec2', readEc2],
  ['elbv2', (r, region) => r.guard('elbv2', region, 'load balancers and listeners', () => readElbv2(r, region))],
  ['elb', (r, region) => r.guard('elb', region, 'classic load balancers', () => readElb(r, region))],
  ['rds', readRds],
  ['lambda', (r, region) => r.guard('lambda', region, 'functions', () => readLambda(r, region))],
  ['cloudtrail', readCloudTrail],
  ['kms', readKms],
  ['cloudwatch', readCloudWatch],
];

/**
 * The regions the account has enabled (EC2 DescribeRegions without AllRegions lists those that need
 * no opt-in and those opted in to). Without permission to list them, the home region alone, said so.
 */
async function enabledRegions(r: AwsReader): Promise<string[]> {
  let regions: string[] = [];
  await r.guard('ec2', HOME_REGION, 'regions (DescribeRegions)', async () => {
    const pages = await r.all('ec2', HOME_REGION, 'DescribeRegions');
    regions = pages
      .flatMap((p) => (p.Regions ?? []) as Any[])
      .filter((x) => x.OptInStatus !== 'not-opted-in')
      .map((x) => String(x.RegionName));
  });
  if (regions.length === 0) {
    r.warnings.push(`ec2 DescribeRegions listed no region; reading ${HOME_REGION} only`);
    return [HOME_REGION];
  }
  // The home region first: the global services are read there.
  const sorted = [...new Set(regions)].sort();
  return sorted.includes(HOME_REGION) ? [HOME_REGION, ...sorted.filter((x) => x !== HOME_REGION)] : sorted;
}

async function readEc2(r: AwsReader, region: string): Promise<void> {
  await r.guard('ec2', region, 'VPCs, subnets, security groups, instances and network interfaces', () => readEc2Core(r, region));
  await readVpcNetwork(r, region);
  await readEc2Storage(r, region);
}

async function readEc2Core(r: AwsReader, region: string): Promise<void> {
  const { add, refer } = r;
  for (const page of await r.all('ec2', region, 'DescribeVpcs')) {
    for (const v of page.Vpcs ?? []) {
      r.account ??= v.OwnerId ?? null;
      const tags = tagObject(v.Tags);
      add(
        awsNode({
          configType: 'AWS::EC2::VPC',
          nativeId: v.VpcId,
          name: nameTag(tags, v.VpcId),
          region,
          account: v.OwnerId ?? r.account,
          configuration: configCase(v) as Any,
          tags,
        }),
        v.VpcId,
      );
    }
  }
  for (const page of await r.all('ec2', region, 'DescribeSubnets')) {
    for (const s of page.Subnets ?? []) {
      const tags = tagObject(s.Tags);
      const id = add(
        awsNode({
          configType: 'AWS::EC2::Subnet',
          nativeId: s.SubnetId,
          name: nameTag(tags, s.SubnetId),
          region,
          account: s.OwnerId ?? r.account,
          configuration: configCase(s) as Any,
          tags,
          relationships: [{ resourceType: 'AWS::EC2::VPC', resourceId: s.VpcId, relationshipName: 'Is contained in Vpc' }],
        }),
        s.SubnetId,
      );
      refer(id, s.VpcId, 'in_vpc');
    }
  }
  for (const page of await r.all('ec2', region, 'DescribeSecurityGroups')) {
    for (const g of page.SecurityGroups ?? []) {
      const tags = tagObject(g.Tags);
      const configuration = { ...(configCase(g) as Any), ipPermissions: sgRules(g.IpPermissions), ipPermissionsEgress: sgRules(g.IpPermissionsEgress) };
      const id = add(
        awsNode({ configType: 'AWS::EC2::SecurityGroup', nativeId: g.GroupId, name: g.GroupName ?? g.GroupId, region, account: g.OwnerId ?? r.account, configuration, tags }),
        g.GroupId,
      );
      for (const rule of g.IpPermissions ?? [])
        refer(
          id,
          (rule.UserIdGroupPairs ?? []).map((p: Any) => p.GroupId),
          'allows_from',
        );
    }
  }
  for (const page of await r.all('ec2', region, 'DescribeInstances')) {
    for (const reservation of page.Reservations ?? []) {
      for (const i of reservation.Instances ?? []) {
        const tags = tagObject(i.Tags);
        const id = add(
          awsNode({
            configType: 'AWS::EC2::Instance',
            nativeId: i.InstanceId,
            name: nameTag(tags, i.InstanceId),
            region: regionOfZone(i.Placement?.AvailabilityZone) ?? region,
            account: reservation.OwnerId ?? r.account,
            configuration: configCase(i) as Any,
            tags,
          }),
          i.InstanceId,
        );
        refer(
          id,
          (i.SecurityGroups ?? []).map((g: Any) => g.GroupId),
          'uses_security_group',
        );
        refer(id, i.IamInstanceProfile?.Arn, 'has_instance_profile');
      }
    }
  }
  for (const page of await r.all('ec2', region, 'DescribeNetworkInterfaces')) {
    for (const n of page.NetworkInterfaces ?? []) {
      const tags = tagObject(n.TagSet);
      const id = add(
        awsNode({
          configType: 'AWS::EC2::NetworkInterface',
          nativeId: n.NetworkInterfaceId,
          name: nameTag(tags, n.NetworkInterfaceId),
          region,
          account: n.OwnerId ?? r.account,
          configuration: configCase(n) as Any,
          tags,
        }),
        n.NetworkInterfaceId,
      );
      refer(
        id,
        (n.Groups ?? []).map((g: Any) => g.GroupId),
        'uses_security_group',
      );
      refer(id, n.Attachment?.InstanceId, 'attached_to');
    }
  }
}

async function readElbv2(r: AwsReader, region: string): Promise<void> {
  for (const page of await r.all('elbv2', region, 'DescribeLoadBalancers')) {
    for (const lb of page.LoadBalancers ?? []) {
      const id = r.add(
        awsNode({
          configType: 'AWS::ElasticLoadBalancingV2::LoadBalancer',
          nativeId: lb.LoadBalancerArn,
          name: lb.LoadBalancerName,
          region,
          account: arnParts(lb.LoadBalancerArn).account ?? r.account,
          arn: lb.LoadBalancerArn,
          configuration: configCase(lb) as Any,
        }),
        lb.LoadBalancerArn,
      );
      r.refer(id, lb.SecurityGroups, 'uses_security_group');
      await readListeners(r, region, lb.LoadBalancerArn);
    }
  }
}

/**
 * A load balancer's listeners, as AWS Config records AWS::ElasticLoadBalancingV2::Listener: the
 * DescribeListeners output with its own (PascalCase) member names.
 */
async function readListeners(r: AwsReader, region: string, lbArn: string): Promise<void> {
  for (const page of await r.all('elbv2', region, 'DescribeListeners', { LoadBalancerArn: lbArn })) {
    for (const l of page.Listeners ?? []) {
      const name = `${String(lbArn).split('/').slice(-2, -1)[0] ?? 'listener'}:${l.Port ?? ''}`;
      const id = r.add(
        awsNode({
          configType: 'AWS::ElasticLoadBalancingV2::Listener',
          nativeId: l.ListenerArn,
          name,
          region,
          account: arnParts(l.ListenerArn).account ?? r.account,
          arn: l.ListenerArn,
          configuration: plain(l) as Any,
        }),
        l.ListenerArn,
      );
      r.refer(id, lbArn, 'listener_of');
    }
  }
}

async function readElb(r: AwsReader, region: string): Promise<void> {
  for (const page of await r.all('elb', region, 'DescribeLoadBalancers')) {
    for (const lb of page.LoadBalancerDescriptions ?? []) {
      const configuration = { ...(configCase(lb) as Any), vpcId: lb.VPCId };
      const id = r.add(
        awsNode({ configType: 'AWS::ElasticLoadBalancing::LoadBalancer', nativeId: lb.LoadBalancerName, name: lb.LoadBalancerName, region, account: r.account, configuration }),
        `elb:${lb.LoadBalancerName}`,
      );
      r.refer(id, lb.SecurityGroups, 'uses_security_group');
      r.refer(
        id,
        (lb.Instances ?? []).map((i: Any) => i.InstanceId),
        'routes_to',
      );
    }
  }
}

async function readLambda(r: AwsReader, region: string): Promise<void> {
  for (const page of await r.all('lambda', region, 'ListFunctions')) {
    for (const f of page.Functions ?? []) {
      const configuration = { ...(configCase(f) as Any), kmskeyArn: f.KMSKeyArn };
      const id = r.add(
        awsNode({
          configType: 'AWS::Lambda::Function',
          nativeId: f.FunctionName,
          name: f.FunctionName,
          region,
          account: arnParts(f.FunctionArn).account ?? r.account,
          arn: f.FunctionArn,
          configuration,
        }),
        f.FunctionArn,
      );
      r.refer(id, f.Role, 'assumes_role');
      r.refer(id, f.VpcConfig?.SecurityGroupIds, 'uses_security_group');
    }
  }
}

async function readS3(r: AwsReader, home: string): Promise<void> {
  for (const page of await r.all('s3', home, 'ListBuckets')) {
    for (const b of page.Buckets ?? []) {
      const get = (command: string) => r.one('s3', home, command, { Bucket: b.Name }, b.Name);
      const location = await get('GetBucketLocation');
      // us-east-1 answers an empty constraint; EU is the legacy name of eu-west-1.
      const constraint = location?.LocationConstraint || 'us-east-1';
      const region = constraint === 'EU' ? 'eu-west-1' : constraint;
      const acl = await get('GetBucketAcl');
      const policy = await get('GetBucketPolicy');
      const encryption = await get('GetBucketEncryption');
      const versioning = await get('GetBucketVersioning');
      const supplementary: Any = {};
      if (acl) supplementary.AccessControlList = JSON.stringify(configCase({ Owner: acl.Owner, Grants: acl.Grants }));
      if (policy?.Policy) supplementary.BucketPolicy = { policyText: policy.Policy };
      if (encryption?.ServerSideEncryptionConfiguration) supplementary.ServerSideEncryptionConfiguration = configCase(encryption.ServerSideEncryptionConfiguration);
      if (versioning) supplementary.BucketVersioningConfiguration = { status: versioning.Status ?? 'Off', isMfaDeleteEnabled: versioning.MFADelete === 'Enabled' };
      r.add(
        awsNode({
          configType: 'AWS::S3::Bucket',
          nativeId: b.Name,
          name: b.Name,
          region,
          account: r.account,
          configuration: { name: b.Name, creationDate: configCase(b.CreationDate), owner: configCase(page.Owner) as Any },
          supplementaryConfiguration: supplementary,
        }),
        `arn:aws:s3:::${b.Name}`,
      );
    }
  }
}

/**
 * IAM's credential report (access keys, console passwords, MFA, the root user), generated when
 * needed. Null, with a warning, when it cannot be had: the user nodes then carry no
 * CredentialReport and the rules that read it report them as not evaluated.
 */
async function credentialReport(r: AwsReader, home: string, options: AwsPluginOptions): Promise<Map<string, CredentialReport> | null> {
  const { signal } = r;
  const poll = options.credentialReportPoll ?? { attempts: CREDENTIAL_REPORT_POLLS, intervalMs: CREDENTIAL_REPORT_POLL_MS };
  for (let attempt = 1; ; attempt++) {
    const generated = await r.one('iam', home, 'GenerateCredentialReport', {}, 'the account');
    if (!generated) return null;
    if (generated.State === 'COMPLETE') break;
    if (attempt >= poll.attempts) {
      r.warnings.push(`iam GenerateCredentialReport: the credential report was still ${generated.State ?? 'not ready'} after ${attempt} requests; users are read without it`);
      return null;
    }
    await sleep(poll.intervalMs, undefined, { signal });
  }
  const c = await r.clientFor('iam', home);
  signal?.throwIfAborted();
  try {
    const out = await c.client.send(new c.mod.GetCredentialReportCommand({}), { abortSignal: signal });
    return parseCredentialReport(Buffer.from(out.Content ?? []).toString('utf8'), out.GeneratedTime ?? new Date(0));
  } catch (error) {
    const name = (error as { name?: string }).name ?? '';
    // Not present, expired or not ready (IAM's three report errors), or refused: read users without it.
    if (/CredentialReport|AccessDenied|NotImplemented|UnsupportedOperation/.test(name)) {
      r.warnings.push(`iam GetCredentialReport the account: ${name}; users are read without the credential report`);
      return null;
    }
    throw error;
  }
}

async function readIam(r: AwsReader, home: string, options: AwsPluginOptions): Promise<void> {
  const { add, refer } = r;
  const report = await credentialReport(r, home, options);
  const reported = new Set<string>();
  for (const page of await r.all('iam', home, 'GetAccountAuthorizationDetails')) {
    for (const p of page.Policies ?? []) {
      r.account ??= principalAccount(p.Arn);
      const config = configCase(p) as Any;
      config.policyVersionList = (p.PolicyVersionList ?? []).map((v: Any) => ({ ...(configCase(v) as Any), document: encodedDocument(v.Document) }));
      add(
        awsNode({
          configType: 'AWS::IAM::Policy',
          nativeId: p.PolicyId,
          name: p.PolicyName,
          region: 'global',
          account: arnParts(p.Arn).account ?? r.account,
          arn: p.Arn,
          configuration: config,
        }),
        p.Arn,
      );
    }
    for (const g of page.GroupDetailList ?? []) {
      r.account ??= principalAccount(g.Arn);
      const config = { ...(configCase(g) as Any), groupPolicyList: inlinePolicies(g.GroupPolicyList) };
      const id = add(
        awsNode({
          configType: 'AWS::IAM::Group',
          nativeId: g.GroupId,
          name: g.GroupName,
          region: 'global',
          account: principalAccount(g.Arn) ?? r.account,
          arn: g.Arn,
          configuration: config,
        }),
        g.Arn,
        `group:${g.GroupName}`,
      );
      refer(
        id,
        (g.AttachedManagedPolicies ?? []).map((m: Any) => m.PolicyArn),
        'has_policy',
      );
    }
    for (const u of page.UserDetailList ?? []) {
      r.account ??= principalAccount(u.Arn);
      const config = { ...(configCase(u) as Any), userPolicyList: inlinePolicies(u.UserPolicyList) };
      // IAM user names are unique regardless of case, so the report's row is the user's whatever its case.
      const row = report?.get(String(u.UserName).toLowerCase());
      if (row) reported.add(row.user.toLowerCase());
      const supplementaryConfiguration = row ? { CredentialReport: row } : {};
      const id = add(
        awsNode({
          configType: 'AWS::IAM::User',
          nativeId: u.UserId,
          name: u.UserName,
          region: 'global',
          account: principalAccount(u.Arn) ?? r.account,
          arn: u.Arn,
          configuration: config,
          supplementaryConfiguration,
          tags: tagObject(u.Tags),
        }),
        u.Arn,
      );
      refer(
        id,
        (u.GroupList ?? []).map((name: string) => `group:${name}`),
        'member_of',
      );
      refer(
        id,
        (u.AttachedManagedPolicies ?? []).map((m: Any) => m.PolicyArn),
        'has_policy',
      );
    }
    for (const role of page.RoleDetailList ?? []) {
      r.account ??= principalAccount(role.Arn);
      const config = {
        ...(configCase(role) as Any),
        assumeRolePolicyDocument: encodedDocument(role.AssumeRolePolicyDocument),
        rolePolicyList: inlinePolicies(role.RolePolicyList),
      };
      const id = add(
        awsNode({
          configType: 'AWS::IAM::Role',
          nativeId: role.RoleId,
          name: role.RoleName,
          region: 'global',
          account: principalAccount(role.Arn) ?? r.account,
          arn: role.Arn,
          configuration: config,
          tags: tagObject(role.Tags),
        }),
        role.Arn,
      );
      refer(
        id,
        (role.AttachedManagedPolicies ?? []).map((m: Any) => m.PolicyArn),
        'has_policy',
      );
      for (const profile of role.InstanceProfileList ?? []) r.lookup.set(profile.Arn, id);
    }
  }
  // The report's other rows: the root user, which IAM lists nowhere else, and users the report
  // knows and the authorization details did not (created between the two calls). Each gets a user
  // node with what the report tells; the root user has no IAM policies, groups or inline policies.
  for (const row of report?.values() ?? []) {
    if (reported.has(row.user.toLowerCase())) continue;
    const owner = principalAccount(row.arn) ?? r.account;
    const root = row.user === ROOT_ROW;
    const configuration: Any = { userName: row.user, arn: row.arn, createDate: row.userCreationTime, path: '/' };
    if (root) Object.assign(configuration, { userId: owner, attachedManagedPolicies: [], userPolicyList: [], groupList: [] });
    add(
      awsNode({
        configType: 'AWS::IAM::User',
        nativeId: root ? (owner ?? ROOT_ROW) : `${owner ?? 'unknown'}:user/${row.user}`,
        name: row.user,
        region: 'global',
        account: owner,
        arn: row.arn,
        configuration,
        supplementaryConfiguration: { CredentialReport: row },
      }),
      row.arn,
    );
  }
}

/** The edges from the references, the owner of resources read without one, one node per id. */
function finishInventory(r: AwsReader, config: AwsConfig): Inventory {
  const { nodes } = r;
  const edges: EdgeRecord[] = [];
  const seen = new Set<string>();
  for (const l of r.links) {
    const target = r.lookup.get(l.ref);
    if (!target || target === l.source) continue;
    const key = `${l.source}|${target}|${l.type}`;
    if (seen.has(key)) continue;
    seen.add(key);
    edges.push({ source: l.source, target, type: l.type, properties: {} });
  }
  // Some describe calls carry no owner (VPCs of older recordings, classic ELBs, buckets): such a
  // resource belongs to the account being read, which the other responses told.
  const owner = config.account_id ?? mostCommon(nodes.map((n) => n.account_id).filter((a): a is string => a !== null && /^\d{12}$/.test(a)));
  if (owner) {
    for (const n of nodes) {
      if (n.account_id !== null) continue;
      n.account_id = owner;
      (n.properties as Any).accountId = owner;
    }
  }
  // Nodes can repeat across paginated reads; the last one wins.
  const unique = [...new Map(nodes.map((n) => [n.id, n])).values()];
  return { nodes: unique, edges, counts: { resources: unique.length, ...r.counts }, warnings: r.warnings };
}
