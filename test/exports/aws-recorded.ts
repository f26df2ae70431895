import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { projectPath } from '../../src/platform/paths.js';

/**
 * Recorded AWS API responses (test/fixtures/exports/aws-recorded: CloudMapper's demo account, see
 * SOURCES.md) played back to the aws discovery plugin, since no AWS account is reachable here.
 *
 * - S3 goes through the real @aws-sdk/client-s3 (the one client package installed): a loopback HTTP
 *   server answers its REST calls with the recorded responses in S3's wire format (XML), reached via
 *   AWS_ENDPOINT_URL_S3.
 * - EC2, ELB, ELBv2, RDS, Lambda and IAM client packages are not installed in this project, so the
 *   plugin gets stand-in client modules (a third party that cannot run here) whose `send` returns the
 *   recorded output of each command, in the shape the SDK v3 returns it (the CLI prints the same
 *   PascalCase structures).
 */

export const RECORDED = projectPath('test', 'fixtures', 'exports', 'aws-recorded', 'us-east-1');
const recorded = (name: string) => JSON.parse(readFileSync(`${RECORDED}/${name}.json`, 'utf8')) as Record<string, unknown>;

type Commands = Record<string, string>;

/** A client module with `<Client>` and `<Command>Command` classes; `calls` lists every command sent. */
function stubModule(clientName: string, commands: Commands, calls: string[]) {
  const mod: Record<string, unknown> = {};
  mod[clientName] = class {
    constructor(readonly config: { region?: string }) {}
    async send(command: { name: string; input: unknown }) {
      calls.push(`${clientName}.${command.name}`);
      const file = commands[command.name];
      if (!file) throw Object.assign(new Error(`no recording for ${command.name}`), { name: 'UnrecognizedClientException' });
      return structuredClone(recorded(file));
    }
  };
  for (const name of Object.keys(commands)) {
    mod[`${name}Command`] = class {
      readonly name = name;
      constructor(readonly input: unknown) {}
    };
  }
  return mod;
}

/** Stand-in SDK client packages replaying the recordings, by package name. */
export function recordedSdkModules(calls: string[] = []): Record<string, Record<string, unknown>> {
  return {
    '@aws-sdk/client-ec2': stubModule(
      'EC2Client',
      {
        DescribeVpcs: 'ec2-describe-vpcs',
        DescribeSubnets: 'ec2-describe-subnets',
        DescribeSecurityGroups: 'ec2-describe-security-groups',
        DescribeInstances: 'ec2-describe-instances',
        DescribeNetworkInterfaces: 'ec2-describe-network-interfaces',
      },
      calls,
    ),
    '@aws-sdk/client-elastic-load-balancing-v2': stubModule('ElasticLoadBalancingV2Client', { DescribeLoadBalancers: 'elbv2-describe-load-balancers' }, calls),
    '@aws-sdk/client-elastic-load-balancing': stubModule('ElasticLoadBalancingClient', { DescribeLoadBalancers: 'elb-describe-load-balancers' }, calls),
    '@aws-sdk/client-rds': stubModule('RDSClient', { DescribeDBInstances: 'rds-describe-db-instances' }, calls),
    '@aws-sdk/client-lambda': stubModule('LambdaClient', { ListFunctions: 'lambda-list-functions' }, calls),
    '@aws-sdk/client-iam': stubModule('IAMClient', { GetAccountAuthorizationDetails: 'iam-get-account-authorization-details' }, calls),
  };
}

const XMLNS = 'http://s3.amazonaws.com/doc/2006-03-01/';
const esc = (v: unknown) => String(v ?? '').replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

function s3Error(res: ServerResponse, status: number, code: string, message: string) {
  res.writeHead(status, { 'content-type': 'application/xml' });
  res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${esc(message)}</Message><RequestId>replay</RequestId></Error>`);
}

function xml(res: ServerResponse, body: string) {
  res.writeHead(200, { 'content-type': 'application/xml' });
  res.end(`<?xml version="1.0" encoding="UTF-8"?>\n${body}`);
}

export interface S3Replay {
  endpoint: string;
  /** Every request served, as `METHOD /path?query`. */
  requests: string[];
  /** Objects served by GetObject, by `bucket/key`. */
  objects: Map<string, Buffer>;
  close(): Promise<void>;
}

/**
 * S3 over loopback HTTP, answering from the recordings: ListBuckets, GetBucketLocation, GetBucketAcl,
 * GetBucketPolicy, GetBucketVersioning (none recorded: never enabled), GetBucketEncryption (none
 * recorded: the not-found error S3 sends), and GetObject for `objects` (a Terraform state).
 */
export async function startS3Replay(): Promise<S3Replay> {
  const requests: string[] = [];
  const objects = new Map<string, Buffer>();
  const buckets = recorded('s3-list-buckets') as { Buckets: Array<{ Name: string; CreationDate: string }>; Owner: { ID: string; DisplayName: string } };
  const perBucket = (call: string, bucket: string) => {
    try {
      return JSON.parse(readFileSync(`${RECORDED}/${call}/${bucket}.json`, 'utf8')) as Record<string, any>;
    } catch {
      return null;
    }
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://replay');
    requests.push(`${req.method} ${url.pathname}${url.search}`);
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
      const grants = (acl.Grants as Array<Record<string, any>>)
        .map(
          (g) =>
            `<Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="${esc(g.Grantee.Type)}"><ID>${esc(g.Grantee.ID)}</ID><DisplayName>${esc(g.Grantee.DisplayName)}</DisplayName></Grantee><Permission>${esc(g.Permission)}</Permission></Grant>`,
        )
        .join('');
      return xml(res, `<AccessControlPolicy xmlns="${XMLNS}"><Owner><ID>${esc(acl.Owner.ID)}</ID><DisplayName>${esc(acl.Owner.DisplayName)}</DisplayName></Owner><AccessControlList>${grants}</AccessControlList></AccessControlPolicy>`);
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
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    objects,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Points the AWS SDK (in this process) at the replay server with dummy credentials; returns an undo. */
export function useS3Replay(endpoint: string): () => void {
  const saved = { ...process.env };
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_S3: endpoint,
    AWS_ACCESS_KEY_ID: 'AKIAREPLAYREPLAYREPL',
    AWS_SECRET_ACCESS_KEY: 'replay-secret',
    AWS_REGION: 'us-east-1',
    AWS_EC2_METADATA_DISABLED: 'true',
  });
  return () => {
    for (const k of ['AWS_ENDPOINT_URL_S3', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_REGION', 'AWS_EC2_METADATA_DISABLED']) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  };
}
